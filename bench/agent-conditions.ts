/**
 * What hook.json "tools" saves the real Claude Code (pinned 2.1.328) per tool call: `hookd serve --http`
 * with two gates, `every` (no "tools": setup writes PreToolUse with `"matcher": "*"`) and `writes`
 * (`"tools": ["write_file"]`: setup writes `"matcher": "Write"`), each project set up by `hookd setup
 * claude-code` as a user would (the shim's command entries), and `claude -p` through N Bash calls.
 * Rounds interleave the variants with a run of no hook at all, the baseline measured in the same round.
 * Part of `make bench` under the same switch as bench/agents.ts (BENCH_AGENTS; the smoke skips it).
 *
 *   agents.conditions.{none_ms, every_ms, writes_ms}   median wall time of a run of N tool calls
 *   agents.conditions.per_call_ms.{every, writes}      (median - none's median) / N
 *   agents.conditions.ratio.{every, writes}            median / none's median
 *   agents.conditions.hook_calls.{every, writes}       beforeToolExecute lines in hookd's audit log, per run
 *
 * Run it alone: `npx tsx bench/agent-conditions.ts [N] [rounds]`.
 */
import { mkdtemp, readFile, realpath, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startAnthropicApi } from '../test/agents/support/anthropic-api.js'
import { agentCli } from '../test/agents/support/cli.js'
import { projectDir, runClaude } from '../test/agents/support/claude-run.js'
import { runInProcess, startServe, stopProcess } from '../test/support/processes.js'
import { hook, writeTree } from '../test/support/sidecar.js'

type Variant = 'none' | 'every' | 'writes'

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

export async function conditionsBench(options: { n?: number; rounds?: number; log?: (line: string) => void } = {}): Promise<Record<string, unknown>> {
  const n = options.n ?? 20
  const rounds = options.rounds ?? 3
  const log = options.log ?? (() => {})
  const claude = await agentCli('claude')
  const guard = `function (ctx, call) { if (/\\brm\\s+-rf\\b/.test(String(call.arguments.command || ''))) return { allow: false, reason: 'no rm -rf' } }`
  const hooks = await writeTree({
    'every/index.js': hook({ beforeToolExecute: guard }),
    'writes/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (String(call.arguments.path).startsWith('/etc')) return { allow: false, reason: 'not /etc' } }` }),
    'writes/hook.json': JSON.stringify({ tools: ['write_file'] }),
  })
  const state = await mkdtemp(join(tmpdir(), 'hookd-conditions-bench-'))
  const audit = join(state, 'audit.jsonl')
  const serving = await startServe(['--hooks', hooks, '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--no-watch', '--audit', audit], { cwd: state, timeoutMs: 60_000 })
  const times = new Map<Variant, number[]>([['none', []], ['every', []], ['writes', []]])
  const calls = new Map<Variant, number[]>([['every', []], ['writes', []]])
  const matchers: Record<string, unknown> = {}
  try {
    const once = async (variant: Variant): Promise<void> => {
      const api = await startAnthropicApi({
        script: (_r, i) => (i < n ? { tools: [{ name: 'Bash', input: { command: `echo step-${i}`, description: `Step ${i}` } }] } : { text: 'done' }),
      })
      const dir = await projectDir()
      try {
        if (variant !== 'none') {
          const setup = await runInProcess(['setup', 'claude-code', '--dir', dir, '--hooks', variant], { cwd: state })
          if (setup.code !== 0) throw new Error(`hookd setup failed: ${setup.stderr}`)
          const settings = JSON.parse(await readFile(join(dir, '.claude', 'settings.local.json'), 'utf8')) as { hooks: Record<string, Array<{ matcher?: string }>> }
          matchers[variant] = settings.hooks.PreToolUse?.[0]?.matcher
        }
        const run = await runClaude({ claude, apiUrl: api.url, cwd: dir, timeoutMs: 600_000 })
        await rm(run.home, { recursive: true, force: true })
        if (run.code !== 0 || api.main.length !== n + 1) throw new Error(`claude (${variant}) ended with ${String(run.code)} after ${api.main.length} of ${n + 1} turns: ${run.stderr.slice(0, 300)}`)
        times.get(variant)?.push(run.ms)
        if (variant !== 'none') {
          const workdir = await realpath(dir)
          const text = await readFile(audit, 'utf8').catch(() => '')
          const lines = text.split('\n').filter((l) => l.includes(`"workdir":${JSON.stringify(workdir)}`) && l.includes('"point":"beforeToolExecute"'))
          calls.get(variant)?.push(lines.length)
        }
        log(`${variant}: ${run.ms} ms`)
      } finally {
        await api.stop()
        await rm(dir, { recursive: true, force: true })
      }
    }
    await once('none') // warm-up: the binary's first start, page cache
    for (let r = 0; r < rounds; r++) for (const v of ['none', 'every', 'writes'] as const) await once(v)
  } finally {
    await stopProcess(serving.child)
    await rm(state, { recursive: true, force: true })
    await rm(hooks, { recursive: true, force: true })
  }
  times.get('none')?.shift()
  const base = median(times.get('none') ?? [])
  const m = (v: Variant): number => median(times.get(v) ?? [])
  const perCall = (v: Variant): number => Math.round(((m(v) - base) / n) * 10) / 10
  const ratio = (v: Variant): number => Math.round((m(v) / base) * 100) / 100
  return {
    conditions: {
      n,
      rounds,
      matchers,
      none_ms: base,
      every_ms: m('every'),
      writes_ms: m('writes'),
      per_call_ms: { every: perCall('every'), writes: perCall('writes') },
      ratio: { every: ratio('every'), writes: ratio('writes') },
      hook_calls: { every: calls.get('every'), writes: calls.get('writes') },
      runs_ms: Object.fromEntries(times),
    },
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const result = await conditionsBench({ n: Number(process.argv[2] ?? 20), rounds: Number(process.argv[3] ?? 3), log: (line) => console.error(line) })
  console.log(JSON.stringify(result, null, 2))
}
