// Sets arguments.n to 1.
module.exports = {
  beforeToolExecute(ctx, call) {
    return { arguments: { ...call.arguments, n: 1 } }
  },
}
