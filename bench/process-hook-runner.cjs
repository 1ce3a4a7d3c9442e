// The common command-hook design, for comparison: a new node process per hook call, JSON on
// stdin/stdout. Loads the hook file named in argv[2] and calls its beforeToolExecute.
const hook = require(process.argv[2])
let input = ''
process.stdin.setEncoding('utf8')
process.stdin.on('data', (d) => (input += d))
process.stdin.on('end', () => {
  const call = JSON.parse(input)
  const ctx = { log() {}, notify() {}, confirm: () => false }
  const out = hook.beforeToolExecute(ctx, call)
  process.stdout.write(JSON.stringify(out ?? null))
})
