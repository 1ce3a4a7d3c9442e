// Upper-cases every tool result the model reads, as in the seed.
module.exports = {
  afterToolExecute: function (ctx, call, result) {
    return { text: result.text.toUpperCase() }
  },
}
