// Logs when it runs: after a refusal it must not run at all.
module.exports = {
  beforeToolExecute(ctx, call) {
    ctx.log('tattle ran')
    return { arguments: { tattled: true } }
  },
}
