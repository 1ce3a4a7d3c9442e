// Handles all six rienda points, logging what it receives and changing every field it may.
module.exports = {
  beforeRun(ctx, run) {
    ctx.log('beforeRun', run.sessionId, run.agentId, run.modelId)
  },
  afterRun(ctx, run) {
    ctx.log('afterRun', run.reason)
  },
  beforeModelRequest(ctx, request) {
    return { system: request.system + ' for ' + request.model + ' after ' + request.messages.length }
  },
  afterModelResponse(ctx, response) {
    return { text: response.text + '!', thinking: response.thinking.toUpperCase() }
  },
  beforeToolExecute(ctx, call) {
    return { arguments: { ...call.arguments, seen: call.name } }
  },
  afterToolExecute(ctx, call, result) {
    return { text: call.name + ': ' + result.text, isError: !result.isError }
  },
}
