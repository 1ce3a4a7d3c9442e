// Notifies the host when the run ends.
module.exports = {
  afterRun(ctx, run) {
    ctx.notify({ title: 'done', body: run.reason })
  },
}
