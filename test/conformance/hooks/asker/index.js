// Asks the human, and passes the answer on in the arguments.
module.exports = {
  beforeToolExecute(ctx, call) {
    return { arguments: { answer: ctx.confirm({ title: 'ok?', body: call.name }) } }
  },
}
