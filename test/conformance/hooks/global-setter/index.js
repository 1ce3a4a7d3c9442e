// Reports what it finds of the globals it sets, then sets them: every invocation must find none.
module.exports = {
  beforeToolExecute(ctx, call) {
    const before = typeof globalThis.leftover
    const proto = typeof [].polluted
    globalThis.leftover = 42
    Array.prototype.polluted = 1
    return { arguments: { before, proto } }
  },
}
