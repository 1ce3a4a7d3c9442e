/**
 * What asking at every gate costs an Agent SDK query (src/agents/claude-agent-sdk/live-hooks.ts), with
 * the real SDK offline. The stand-in API asks for `echo i` N times, then finishes; per variant, `runs`
 * queries, interleaved, each reporting the tool step (the end of the model's answer asking for a tool
 * to the arrival of the next request: the hooks, the tool and Claude Code's own work), median over all
 * steps, the time spent inside the PreToolUse callback (median), and the point calls the run sent to
 * hookd, by point.
 *
 * Variants, all with one sidecar in this process:
 *  - `none`: no hooks option;
 *  - `before`: the hook `results` (afterToolExecute only) with the events hookdHooks registered before
 *    it asked at every gate (PostToolUse, PostToolUseFailure: no PreToolUse, since nothing served it);
 *  - `after`: the same hook as hookdHooks registers it now (PreToolUse too, answered without a point
 *    call while nothing serves it);
 *  - `guard`: a hook that serves PreToolUse (one point call per tool call), for scale, with the events
 *    hookdHooks registers for it now: those that follow an ask's outcome too (PostToolUse,
 *    PostToolUseFailure, PostToolBatch, PermissionDenied, Stop, ...), each answered without a point
 *    call while no ask waits;
 *  - `guard-gate`: the same hook with PreToolUse alone, as hookdHooks registered it before asks were
 *    followed: `guard` minus `guard-gate` is what following costs a query whose hooks never ask.
 *
 * Besides the step, each variant reports the time spent in the callbacks of the other events
 * (everything but PreToolUse), per tool step.
 *
 * Run it: `npx tsx test/agents/support/sdk-bench.ts [N] [runs] [variants]` (default 20 3
 * none,before,after,guard,guard-gate).
 */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { hookdHooks } from '../../../src/agents/claude-agent-sdk/index.js'
import type { HookdClient } from '../../../src/host/client.js'
import { hook, startSidecar, writeTree } from '../../support/sidecar.js'
import { startAnthropicApi } from './anthropic-api.js'
import { agentCli } from './cli.js'
import { offlineEnv, projectDir } from './claude-run.js'

type Variant = 'none' | 'before' | 'after' | 'guard' | 'guard-gate'
type Query = (args: { prompt: string; options: Record<string, unknown> }) => AsyncIterable<Record<string, unknown>>

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2
}

/** A client whose sessions add each point call they send to `sent`. */
function counting(client: HookdClient, sent: string[]): HookdClient {
  return new Proxy(client, {
    get(target, key, receiver) {
      if (key !== 'openSession') return Reflect.get(target, key, receiver) as unknown
      return async (...args: Parameters<HookdClient['openSession']>) => {
        const session = await target.openSession(...args)
        const call = session.call.bind(session)
        session.call = ((point, payload, options) => {
          sent.push(point)
          return call(point, payload, options)
        }) as typeof session.call
        return session
      }
    },
  })
}

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 20)
  const runs = Number(process.argv[3] ?? 3)
  const variants = (process.argv[4] ?? 'none,before,after,guard,guard-gate').split(',') as Variant[]
  const sdk = await agentCli('claude-agent-sdk')
  const query = ((await import(pathToFileURL(join(sdk, 'sdk.mjs')).href)) as { query: Query }).query
  const hooks = await writeTree({
    'results/index.js': hook({ afterToolExecute: `function (ctx, call, result) {}` }),
    'guard/index.js': hook({ beforeToolExecute: `function (ctx, call) { if (/rm -rf/.test(String(call.arguments.command))) return { allow: false, reason: 'no' } }` }),
  })
  const running = await startSidecar({ hooks, watch: false })
  const steps = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const sent = new Map<Variant, string[]>(variants.map((v) => [v, []]))
  const gate = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  /** Milliseconds in the callbacks of every event but PreToolUse, per run. */
  const others = new Map<Variant, number[]>(variants.map((v) => [v, []]))
  const once = async (variant: Variant, calls: number): Promise<number[]> => {
    const client = counting(running.client, sent.get(variant) ?? [])
    const hookd =
      variant === 'none' ? undefined
      : variant === 'before' ? await hookdHooks({ client, hooks: ['results'], events: ['PostToolUse', 'PostToolUseFailure'] })
      : variant === 'guard-gate' ? await hookdHooks({ client, hooks: ['guard'], events: ['PreToolUse'] })
      : await hookdHooks({ client, hooks: [variant === 'guard' ? 'guard' : 'results'] })
    // Time inside the PreToolUse callback itself (hookd's side of the gate, as the SDK waits on it).
    const callback = hookd?.hooks.PreToolUse?.[0]
    if (callback) {
      callback.hooks = callback.hooks.map((fn) => async (input, id, options) => {
        const start = process.hrtime.bigint()
        try {
          return await fn(input, id, options)
        } finally {
          gate.get(variant)?.push(Number(process.hrtime.bigint() - start) / 1e6)
        }
      })
    }
    let inOthers = 0
    for (const [event, matchers] of Object.entries(hookd?.hooks ?? {})) {
      if (event === 'PreToolUse') continue
      for (const m of matchers ?? []) {
        m.hooks = m.hooks.map((fn) => async (input, id, options) => {
          const start = process.hrtime.bigint()
          try {
            return await fn(input, id, options)
          } finally {
            inOthers += Number(process.hrtime.bigint() - start) / 1e6
          }
        })
      }
    }
    const stand = await startAnthropicApi({
      script: (_request, index) => (index < calls ? { tools: [{ name: 'Bash', input: { command: `echo step-${index}`, description: `Step ${index}` } }] } : { text: 'done' }),
    })
    const dir = await projectDir()
    const home = await mkdtemp(join(tmpdir(), 'hookd-sdk-bench-home-'))
    try {
      for await (const message of query({
        prompt: 'do the task',
        options: { cwd: dir, env: offlineEnv(stand.url, home), allowedTools: ['Bash'], settingSources: [], ...(hookd ? { hooks: hookd.hooks } : {}) },
      })) void message
      if (stand.main.length !== calls + 1) throw new Error(`${variant}: ${stand.main.length} of ${calls + 1} turns`)
      others.get(variant)?.push(inOthers / calls)
      const mains = stand.requests.filter((r) => r.kind === 'main')
      const out: number[] = []
      for (let i = 1; i < mains.length; i++) {
        const before = mains[i - 1]
        const after = mains[i]
        if (before?.doneAt !== undefined && after) out.push(after.at - before.doneAt)
      }
      return out
    } finally {
      await hookd?.close()
      await stand.stop()
      await rm(dir, { recursive: true, force: true })
      await rm(home, { recursive: true, force: true })
    }
  }
  try {
    await once('guard', 1) // warm-up: the binary's first start, the sidecar's first isolates
    sent.set('guard', [])
    gate.set('guard', [])
    others.set('guard', [])
    for (let r = 0; r < runs; r++) {
      for (const variant of variants) {
        const s = await once(variant, n)
        steps.get(variant)?.push(...s)
        console.error(`run ${r + 1}/${runs} ${variant}: median step ${median(s)} ms`)
      }
    }
  } finally {
    await running.stop()
    await rm(hooks, { recursive: true, force: true })
  }
  const result = variants.map((variant) => {
    const counts: Record<string, number> = {}
    for (const point of sent.get(variant) ?? []) counts[point] = (counts[point] ?? 0) + 1
    const inGate = gate.get(variant) ?? []
    const inOthers = others.get(variant) ?? []
    return {
      variant,
      stepMedianMs: median(steps.get(variant) ?? []),
      steps: steps.get(variant)?.length ?? 0,
      ...(inGate.length ? { preToolUseCallbackMedianMs: Math.round(median(inGate) * 1000) / 1000, preToolUseCallbacks: inGate.length } : {}),
      ...(inOthers.some((ms) => ms > 0) ? { otherCallbacksMsPerStepMedian: Math.round(median(inOthers) * 1000) / 1000 } : {}),
      pointCalls: counts,
    }
  })
  console.log(JSON.stringify({ n, runs, variants: result }, null, 2))
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main()
