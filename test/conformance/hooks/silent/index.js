// Returns nothing: no opinion.
module.exports = {
  beforeToolExecute(ctx, call) {},
  beforeModelRequest(ctx, request) {
    return undefined
  },
}
