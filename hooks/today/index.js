// Adds today's date to the system prompt on every turn (the prompt is rebuilt each turn, never saved).
module.exports = {
  beforeModelRequest: function (ctx, request) {
    const today = new Date().toISOString().slice(0, 10)
    return { system: request.system + '\n\nToday is ' + today + '.' }
  },
}
