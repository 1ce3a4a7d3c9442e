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
 * at once). Optional: `curl` (a PreToolUse command hook `curl -sS --fail ... --data-binary @- URL || exit 2`
 * posting to the same kind of server: the fail-closed shim).
 *
 * Run it: `npx tsx test/agents/support/claude-bench.ts [N] [runs] [variants]` (variants comma-separated,
 * default none,command,http; installs the CLI on first use).
 */
import { createServer } from 'node:http'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { startAnthropicApi } from './anthropic-api.js'
import { agentCli } from './cli.js'
import { runClaude } from './claude-run.js'

export type Variant = 'none' | 'command' | 'http' | 'curl'

export interface VariantResult {
  variant: Variant
  /** Wall time of each run, ms. */
  runsMs: number[]
  medianMs: number
  /** (medianMs - none's medianMs) / n; 0 for `none`. */
  perCallMs: number
  /** Median tool step (see above) over all runs, ms. */
  stepMedianMs: number
  hookCalls: number
}

export interface BenchResult {
  n: number
  runs: number
  claude: string
  variants: VariantResult[]
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

async function once(claude: string, variant: Variant, n: number, guardPath: string): Promise<{ ms: number; steps: number[]; hookCalls: number }> {
  const api = await startAnthropicApi({
    script: (_request, index) => (index < n ? { tools: [{ name: 'Bash', input: { command: `echo step-${index}`, description: `Step ${index}` } }] } : { text: 'done' }),
  })
  const http = variant === 'http' || variant === 'curl' ? await startEmptyHookServer() : undefined
  try {
    const curl = `curl -sS --fail -X POST -H 'content-type: application/json' --data-binary @- ${http?.url ?? ''} || exit 2`
    const hook =
      variant === 'command' ? { type: 'command', command: `node ${guardPath}` }
      : variant === 'http' ? { type: 'http', url: http?.url }
      : variant === 'curl' ? { type: 'command', command: curl }
      : undefined
    const settings = hook ? { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [hook] }] } } : undefined
    const run = await runClaude({ claude, apiUrl: api.url, settings, timeoutMs: 600_000 })
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
    return { ms: run.ms, steps, hookCalls: http?.calls() ?? (variant === 'command' ? n : 0) }
  } finally {
    await http?.stop()
    await api.stop()
  }
}

export async function benchClaude(options: { n?: number; runs?: number; variants?: Variant[]; log?: (line: string) => void } = {}): Promise<BenchResult> {
  const n = options.n ?? 20
  const runs = options.runs ?? 3
  const variants = options.variants ?? ['none', 'command', 'http']
  const log = options.log ?? (() => {})
  const claude = await agentCli('claude')
  const dir = await mkdtemp(join(tmpdir(), 'hookd-claude-bench-'))
  const guardPath = join(dir, 'guard.cjs')
  await writeFile(guardPath, GUARD)
  const times = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const steps = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const hookCalls = new Map<Variant, number>(variants.map((v) => [v, 0]))
  // One warm-up run (page cache, first start of the binary), not counted.
  await once(claude, 'none', 1, guardPath)
  for (let r = 0; r < runs; r++) {
    for (const variant of variants) {
      const result = await once(claude, variant, n, guardPath)
      times.get(variant)?.push(result.ms)
      steps.get(variant)?.push(...result.steps)
      hookCalls.set(variant, (hookCalls.get(variant) ?? 0) + result.hookCalls)
      log(`run ${r + 1}/${runs} ${variant}: ${result.ms} ms, median step ${median(result.steps)} ms`)
    }
  }
  await rm(dir, { recursive: true, force: true })
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
        hookCalls: hookCalls.get(variant) ?? 0,
      }
    }),
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const n = Number(process.argv[2] ?? 20)
  const runs = Number(process.argv[3] ?? 3)
  const variants = (process.argv[4] ?? 'none,command,http').split(',') as Variant[]
  const result = await benchClaude({ n, runs, variants, log: (line) => console.error(line) })
  console.log(JSON.stringify(result, null, 2))
}
