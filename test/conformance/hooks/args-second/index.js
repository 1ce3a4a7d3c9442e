// Adds 1 to arguments.n: it sees what the hook before it returned.
module.exports = {
  beforeToolExecute(ctx, call) {
    return { arguments: { ...call.arguments, n: (call.arguments.n || 0) + 1 } }
  },
}
