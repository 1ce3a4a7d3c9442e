/**
 * What a PreToolUse hook costs Claude Code per tool call, measured with the real CLI offline.
 * `benchClaude()` runs `claude -p` through N Bash tool calls (the stand-in API asks for `echo i` N times,
 * then finishes) for each variant, `runs` times each, interleaved, and reports per variant:
 *  - the wall time of the whole CLI run (median of the runs) and, against the no-hook variant,
 *    (median - no-hook median) / N as the cost per tool call;
 *  - the tool step: the time from the end of the model's answer asking for a tool to the arrival of
 *    the next request (hooks + the tool itself + Claude Code's own work), median over all steps.
 *
 * Variants: `none` (no hooks); `command` (a PreToolUse command hook `node guard.cjs` that reads the event
 * on stdin and denies rm -rf); `http` (a PreToolUse http hook on a loopback server that answers `{}`
 * at once); `hookd` (a PreToolUse http hook on `hookd serve --http` running a guard hook that denies
 * rm -rf in a fresh isolate: the real front door, chain and sandbox). Both http variants send the same
 * Authorization header. `shim`: the entry `hookd setup claude-code` writes by default, a command hook
 * running the compiled shim (build/hookd-hook) on the same `hookd serve --http`, proving itself with the
 * token file and checking hookd's proof. Optional: `curl` (a PreToolUse command hook `curl -sS --fail
 * ... --data-binary @- URL || exit 2` posting to the trivial server).
 *
 * A third figure comes from Claude Code's own debug log (`--debug-file`): the time from each hook's
 * start to its answer as Claude Code logs them, median over all calls (`hookMedianMs`). It leaves out
 * the model, the tool and the start-up, so it is the steadiest on a busy machine.
 *
 * Run it: `npx tsx test/agents/support/claude-bench.ts [N] [runs] [variants]` (variants comma-separated,
 * default none,command,http,hookd; installs the CLI on first use).
 */
import { createServer } from 'node:http'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startAnthropicApi } from './anthropic-api.js'
import { agentCli } from './cli.js'
import { runClaude } from './claude-run.js'
import { type Serving, startServe, stopProcess } from '../../support/processes.js'
import { NATIVE_SHIM } from '../../../src/agents/settings/shim-command.js'

export type Variant = 'none' | 'command' | 'http' | 'hookd' | 'curl' | 'shim'

export interface VariantResult {
  variant: Variant
  /** Wall time of each run, ms. */
  runsMs: number[]
  medianMs: number
  /** (medianMs - none's medianMs) / n; 0 for `none`. */
  perCallMs: number
  /** Median tool step (see above) over all runs, ms. */
  stepMedianMs: number
  /** Median hook time as Claude Code's debug log shows it, ms (undefined without hooks). */
  hookMedianMs?: number
  hookCalls: number
}

export interface BenchResult {
  n: number
  runs: number
  claude: string
  variants: VariantResult[]
}

/** The same guard as a hookd hook: refuses rm -rf in shell calls, no opinion otherwise. */
const HOOKD_GUARD = `module.exports = {
  beforeToolExecute(ctx, call) {
    if (call.name === 'shell' && /\\brm\\s+-rf\\b/.test(call.arguments.command || '')) return { allow: false, reason: 'rm -rf is not allowed' }
  },
}
`

/** The same Authorization header on both http variants, so that only the server differs. */
const BENCH_TOKEN = 'hkd_claude-bench-token-0123456789abcdefghijklmnop'

/** A running `hookd serve --http` with the guard, for the `hookd` variant. */
interface HookdServer {
  url: string
  serving: Serving
  dir: string
}

async function startHookd(): Promise<HookdServer> {
  const dir = await mkdtemp(join(tmpdir(), 'hookd-claude-bench-hookd-'))
  await mkdir(join(dir, 'hooks', 'guard'), { recursive: true })
  await writeFile(join(dir, 'hooks', 'guard', 'index.js'), HOOKD_GUARD)
  await mkdir(join(dir, '.hookd'), { mode: 0o700 })
  await writeFile(join(dir, '.hookd', 'http-token'), `${BENCH_TOKEN}\n`, { mode: 0o600 })
  const serving = await startServe(['--hooks', 'hooks', '--listen', `unix:${join(dir, 'hookd.sock')}`, '--http', '0', '--no-watch'], { cwd: dir, timeoutMs: 60_000 })
  const url = /^hookd: http on (\S+)$/m.exec(serving.output.stderr)?.[1]
  if (!url) throw new Error(`hookd serve printed no http line: ${serving.output.stderr}`)
  return { url: `${url}/claude-code/guard`, serving, dir }
}

/**
 * Each PreToolUse hook's time in Claude Code's debug log: for http hooks from "HTTP hook POST to" to
 * the hook's "success" line; for command hooks the duration the log states.
 */
export function hookTimes(debug: string): number[] {
  const out: number[] = []
  let posted = 0
  for (const line of debug.split('\n')) {
    const at = Date.parse(line.slice(0, 24))
    if (line.includes('HTTP hook POST to')) posted = at
    else if (line.includes('Hook PreToolUse:Bash (PreToolUse) success') && posted) {
      out.push(at - posted)
      posted = 0
    } else {
      const m = /PreToolUse:Bash \[.*\] finished with status \d+ \((\d+)ms\)/.exec(line)
      if (m) out.push(Number(m[1]))
    }
  }
  return out
}

/** Denies rm -rf, answers {} to anything else. */
const GUARD = `let raw = ''
process.stdin.on('data', (c) => (raw += c))
process.stdin.on('end', () => {
  const event = JSON.parse(raw)
  const command = String((event.tool_input && event.tool_input.command) || '')
  process.stdout.write(/\\brm\\s+-rf\\b/.test(command)
    ? JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'rm -rf is not allowed' } })
    : '{}')
})
`

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

async function startEmptyHookServer(): Promise<{ url: string; calls: () => number; stop(): Promise<void> }> {
  let calls = 0
  const server = createServer((req, res) => {
    req.resume()
    req.on('end', () => {
      calls += 1
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/pre`,
    calls: () => calls,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function once(claude: string, variant: Variant, n: number, guardPath: string, hookd?: HookdServer): Promise<{ ms: number; steps: number[]; hooks: number[]; hookCalls: number }> {
  const api = await startAnthropicApi({
    script: (_request, index) => (index < n ? { tools: [{ name: 'Bash', input: { command: `echo step-${index}`, description: `Step ${index}` } }] } : { text: 'done' }),
  })
  const http = variant === 'http' || variant === 'curl' ? await startEmptyHookServer() : undefined
  try {
    const curl = `curl -sS --fail -X POST -H 'content-type: application/json' --data-binary @- ${http?.url ?? ''} || exit 2`
    const headers = { Authorization: `Bearer ${BENCH_TOKEN}` }
    const hook =
      variant === 'command' ? { type: 'command', command: `node ${guardPath}` }
      : variant === 'http' ? { type: 'http', url: http?.url, headers }
      : variant === 'hookd' ? { type: 'http', url: hookd?.url, headers }
      : variant === 'curl' ? { type: 'command', command: curl }
      : variant === 'shim' && hookd ? { type: 'command', command: `${NATIVE_SHIM} --token-file ${join(hookd.dir, '.hookd', 'http-token')} --timeout 30 ${hookd.url}` }
      : undefined
    const settings = hook ? { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [hook] }] } } : undefined
    const debugDir = await mkdtemp(join(tmpdir(), 'hookd-claude-bench-debug-'))
    const debugFile = join(debugDir, 'debug.log')
    const run = await runClaude({ claude, apiUrl: api.url, settings, timeoutMs: 600_000, args: ['--allowedTools', 'Bash', '--debug-file', debugFile] })
    const hooks = hook ? hookTimes(await readFile(debugFile, 'utf8').catch(() => '')) : []
    await rm(debugDir, { recursive: true, force: true })
    await rm(run.cwd, { recursive: true, force: true })
    await rm(run.home, { recursive: true, force: true })
    if (run.code !== 0 || api.main.length !== n + 1) {
      throw new Error(`claude run (${variant}) ended with code ${String(run.code)} after ${api.main.length} of ${n + 1} turns: ${run.stderr.slice(0, 500)}`)
    }
    const mains = api.requests.filter((r) => r.kind === 'main')
    const steps: number[] = []
    for (let i = 1; i < mains.length; i++) {
      const before = mains[i - 1]
      const after = mains[i]
      if (before?.doneAt !== undefined && after) steps.push(after.at - before.doneAt)
    }
    return { ms: run.ms, steps, hooks, hookCalls: http?.calls() ?? hooks.length }
  } finally {
    await http?.stop()
    await api.stop()
  }
}

export async function benchClaude(options: { n?: number; runs?: number; variants?: Variant[]; log?: (line: string) => void } = {}): Promise<BenchResult> {
  const n = options.n ?? 20
  const runs = options.runs ?? 3
  const variants = options.variants ?? ['none', 'command', 'http', 'hookd']
  const log = options.log ?? (() => {})
  const claude = await agentCli('claude')
  const dir = await mkdtemp(join(tmpdir(), 'hookd-claude-bench-'))
  const guardPath = join(dir, 'guard.cjs')
  await writeFile(guardPath, GUARD)
  const times = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const steps = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const hookCalls = new Map<Variant, number>(variants.map((v) => [v, 0]))
  const hookTimesOf = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const hookd = variants.includes('hookd') || variants.includes('shim') ? await startHookd() : undefined
  try {
    // One warm-up run (page cache, first start of the binary; hookd's first isolates), not counted.
    await once(claude, hookd ? 'hookd' : 'none', 1, guardPath, hookd)
    for (let r = 0; r < runs; r++) {
      for (const variant of variants) {
        const result = await once(claude, variant, n, guardPath, hookd)
        times.get(variant)?.push(result.ms)
        steps.get(variant)?.push(...result.steps)
        hookTimesOf.get(variant)?.push(...result.hooks)
        hookCalls.set(variant, (hookCalls.get(variant) ?? 0) + result.hookCalls)
        log(`run ${r + 1}/${runs} ${variant}: ${result.ms} ms, median step ${median(result.steps)} ms${result.hooks.length ? `, median hook ${median(result.hooks)} ms` : ''}`)
      }
    }
  } finally {
    if (hookd) {
      await stopProcess(hookd.serving.child)
      await rm(hookd.dir, { recursive: true, force: true })
    }
    await rm(dir, { recursive: true, force: true })
  }
  const base = median(times.get('none') ?? [])
  return {
    n,
    runs,
    claude,
    variants: variants.map((variant) => {
      const runsMs = times.get(variant) ?? []
      const medianMs = median(runsMs)
      return {
        variant,
        runsMs,
        medianMs,
        perCallMs: variant === 'none' || !times.has('none') ? 0 : Math.round(((medianMs - base) / n) * 10) / 10,
        stepMedianMs: median(steps.get(variant) ?? []),
        ...((hookTimesOf.get(variant) ?? []).length ? { hookMedianMs: median(hookTimesOf.get(variant) ?? []) } : {}),
        hookCalls: hookCalls.get(variant) ?? 0,
      }
    }),
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? 20)
  const runs = Number(process.argv[3] ?? 3)
  const variants = (process.argv[4] ?? 'none,command,http,hookd').split(',') as Variant[]
  const result = await benchClaude({ n, runs, variants, log: (line) => console.error(line) })
  console.log(JSON.stringify(result, null, 2))
}
