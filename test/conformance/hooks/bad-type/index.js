// Returns a field of the wrong type: an invalid-result diagnostic, and the hook is skipped.
module.exports = {
  beforeToolExecute(ctx, call) {
    return { allow: 'no' }
  },
}
