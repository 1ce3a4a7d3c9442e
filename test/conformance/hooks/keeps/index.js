// Returns fields as undefined or null (which keep the current value) next to one real change.
module.exports = {
  afterModelResponse(ctx, response) {
    return { text: undefined, thinking: null }
  },
  afterToolExecute(ctx, call, result) {
    return { text: null, isError: true }
  },
}
