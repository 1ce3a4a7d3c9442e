// Appends ' +b' to the system prompt.
module.exports = {
  beforeModelRequest(ctx, request) {
    return { system: request.system + ' +b' }
  },
}
