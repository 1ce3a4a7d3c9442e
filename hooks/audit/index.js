// Tells the human how the run ended, and logs each tool call as it is about to run.
module.exports = {
  beforeToolExecute: function (ctx, call) {
    ctx.log('tool call', call.id, call.name)
  },

  afterRun: function (ctx, event) {
    ctx.notify({ title: 'audit', body: 'session ' + ctx.session.id + ' ended: ' + event.reason })
  },
}
