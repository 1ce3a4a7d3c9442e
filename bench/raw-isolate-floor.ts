/**
 * The throughput floor hookd is measured against: a fresh isolate, context, compile, run and dispose
 * per invocation in a tight loop, no gRPC and no IPC, with `concurrency` invocations in flight.
 * Run by bench/run.ts, one process per core; reports invocations per second to its parent.
 */
import { readFileSync } from 'node:fs'
import ivm from 'isolated-vm'

const [hookFile, durationText, concurrencyText] = process.argv.slice(2)
const source = readFileSync(hookFile as string, 'utf8')
const code = `(function (module, exports) {${source}\n})`
const durationMs = Number(durationText)
const concurrency = Number(concurrencyText)
const args = JSON.stringify([{ id: 'c1', name: 'shell', arguments: { command: 'ls -la' } }])

async function once(): Promise<void> {
  const isolate = new ivm.Isolate({ memoryLimit: 64 })
  const context = await isolate.createContext()
  const script = await isolate.compileScript(code)
  const factory = (await script.run(context, { reference: true })) as ivm.Reference<unknown>
  const run = await context.eval(
    `(function (factory, argsJson) { const module = { exports: {} }; factory(module, module.exports); return JSON.stringify(module.exports.beforeToolExecute({}, ...JSON.parse(argsJson))) })`,
    { reference: true },
  )
  await (run as ivm.Reference<unknown>).apply(undefined, [factory.derefInto(), args], { result: { copy: true } })
  context.release()
  isolate.dispose()
}

let done = 0
const end = Date.now() + durationMs
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (Date.now() < end) {
      await once()
      done += 1
    }
  }),
)
process.send?.({ opsPerSecond: done / (durationMs / 1000) })
