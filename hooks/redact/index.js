// Masks 16-digit numbers (card numbers, mostly) in the model's own text before it is saved.
module.exports = {
  afterModelResponse: function (ctx, response) {
    return { text: response.text.replace(/\b\d{16}\b/g, '[redacted]') }
  },
}
