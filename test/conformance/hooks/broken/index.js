module.exports = {
  beforeToolExecute(ctx, call) {
    return {
  },
