// Appends ' +a' to the system prompt: with sys-b, shows the declared order is the execution order.
module.exports = {
  beforeModelRequest(ctx, request) {
    return { system: request.system + ' +a' }
  },
}
