// Refuses every tool call.
module.exports = {
  beforeToolExecute(ctx, call) {
    return { allow: false, reason: 'no ' + call.name }
  },
}
