/**
 * What following an ask costs Claude Code per tool call, measured with the real CLI offline: `claude -p`
 * through N Bash calls (`echo i`), with no hook, with a guard whose source never names ctx.confirm
 * (setup registers PreToolUse alone, as before asks were followed), and with the same guard naming it
 * (setup also registers PostToolUse, PostToolUseFailure, PermissionDenied and the end events, so each
 * tool call costs one hook call more, and each turn one more at Stop), each through the shim entries
 * `hookd setup claude-code` writes, `runs` rounds interleaved. Prints each variant's run times, their
 * median, and (median - no-hook median) / N; and, steadier on a busy machine, each event's hook calls
 * as Claude Code's debug log times them (`--debug-file`): calls per run, median, and their sum per tool call.
 *
 * Run it: `npx tsx test/agents/support/ask-cost-bench.ts [N] [runs]` (default 20 and 3).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startAnthropicApi } from './anthropic-api.js'
import { oneCallPerTurn } from './bash-calls.js'
import { agentCli } from './cli.js'
import { projectDir, runClaude } from './claude-run.js'
import { runInProcess, startServe, stopProcess } from '../../support/processes.js'
import { hook, writeTree } from '../../support/sidecar.js'

const N = Number(process.argv[2] ?? 20)
const ROUNDS = Number(process.argv[3] ?? 3)
const claude = await agentCli('claude')
const hooks = await writeTree({
  'never/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (call.arguments.command === 'nope') return { allow: false, reason: 'no' } }` }),
  // The same guard, but its source names confirm (it never calls it): setup registers the outcome events.
  'mayask/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (call.arguments.command === 'nope' && !ctx.confirm({ title: 'x' })) return { allow: false, reason: 'no' } }` }),
})
const state = await mkdtemp(join(tmpdir(), 'hookd-measure-'))
const serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1', '--log-level', 'warn'], { cwd: state, timeoutMs: 60_000 })
const calls = Array.from({ length: N }, (_, i) => ({ id: `toolu_${i}`, command: `echo ${i}` }))
const dirs: Record<string, string> = {}
for (const v of ['none', 'never', 'mayask']) {
  dirs[v] = await projectDir({})
  if (v !== 'none') {
    const r = await runInProcess(['setup', 'claude-code', '--dir', dirs[v] as string, '--hooks', v], { cwd: state })
    if (r.code !== 0) throw new Error(r.stderr)
    console.log(v, r.stdout.trim().split('\n').slice(1).join(' | '))
  }
}
const times: Record<string, number[]> = { none: [], never: [], mayask: [] }
/** Each hook command's time as Claude Code's debug log states it, by event: the steadiest figure on a busy machine. */
const hookMs: Record<string, Map<string, number[]>> = { none: new Map(), never: new Map(), mayask: new Map() }
function hookRuns(debug: string): Array<[string, number]> {
  const out: Array<[string, number]> = []
  for (const line of debug.split('\n')) {
    const m = /\b([A-Za-z]+)(?::\S+)? \[.*\] finished with status \d+ \((\d+)ms\)/.exec(line)
    if (m) out.push([m[1] as string, Number(m[2])])
  }
  return out
}
for (let round = 0; round < ROUNDS; round++) {
  for (const v of ['none', 'never', 'mayask']) {
    const stand = await startAnthropicApi({ script: oneCallPerTurn(calls) })
    const debugFile = join(state, `debug-${v}-${round}.log`)
    const run = await runClaude({ claude, apiUrl: stand.url, cwd: dirs[v] as string, args: ['--allowedTools', 'Bash', '--debug-file', debugFile] })
    await stand.stop()
    if (run.code !== 0 || stand.main.length !== N + 1) throw new Error(`${v}: ${run.code} ${stand.main.length} ${run.stderr}`)
    times[v]?.push(run.ms)
    for (const [event, ms] of hookRuns(await readFile(debugFile, 'utf8').catch(() => ''))) {
      const list = hookMs[v] as Map<string, number[]>
      list.set(event, [...(list.get(event) ?? []), ms])
    }
    await rm(run.home, { recursive: true, force: true })
  }
}
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)] as number
const base = median(times.none as number[])
for (const v of ['none', 'never', 'mayask']) console.log(v, JSON.stringify(times[v]), 'median', median(times[v] as number[]), 'per call vs none', ((median(times[v] as number[]) - base) / N).toFixed(1))
for (const v of ['never', 'mayask']) {
  for (const [event, ms] of hookMs[v] as Map<string, number[]>) {
    console.log(v, event, `${ms.length / ROUNDS} calls a run`, `median ${median(ms)} ms`, `${((ms.reduce((a, b) => a + b, 0) / ROUNDS) / N).toFixed(1)} ms per tool call`)
  }
}
console.log('mayask - never per call', ((median(times.mayask as number[]) - median(times.never as number[])) / N).toFixed(1), 'ms')
await stopProcess(serving.child)
await rm(state, { recursive: true, force: true }); await rm(hooks, { recursive: true, force: true })
for (const d of Object.values(dirs)) await rm(d, { recursive: true, force: true })
