// Throws: a diagnostic, and the chain goes on.
module.exports = {
  beforeToolExecute(ctx, call) {
    throw new TypeError('boom ' + call.id)
  },
}
