/**
 * A gRPC host of the soak: the host library's GuardedSession (src/host) through its own relay
 * (conn-proxy.ts), as an agent host runs hookd: one session per run of a few tool calls, each call's
 * gate (beforeToolExecute) and, when it is allowed, its result (afterToolExecute), every answer judged
 * (expect.ts). It answers the parker's ctx.confirm itself after a pause, as a person would, and keeps
 * going through every fault: when hookd is away the library's failure policy answers, and it
 * reconnects on its own.
 */
import { GuardedSession, type PointCallResult } from '../../src/host/index.js'
import type { ConnProxy } from './conn-proxy.js'
import { type CallSpec, type Generations, type Intent, type Verdict, cidOf, commandFor, judgeGate, judgeResult } from './expect.js'
import { GRPC_CHAIN, type SoakTenant } from './hooks.js'
import type { Ledger } from './ledger.js'

export interface AgentDeps {
  ledger: Ledger
  gens: Generations
  /** The folder given as the sessions' workdir. */
  workdir: string
  /** Mean pause between two calls of one agent (ms). */
  thinkMs: number
  stopped(): boolean
  /** Calls parked on this host's confirm right now, across agents. */
  parked: { now: number }
}

/** How often each kind of command comes (of 100). */
const MIX: Array<[Intent, number]> = [
  ['deny', 15],
  ['park', 7],
  ['parkno', 3],
  ['spin', 10],
  ['plain', 65],
]

export function pickIntent(): Intent {
  let r = Math.random() * 100
  for (const [intent, weight] of MIX) if ((r -= weight) < 0) return intent
  return 'plain'
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Kinds of diagnostics the host library makes up when hookd did not answer. */
const fellBack = (out: PointCallResult<never>): boolean => out.decisionId === undefined && out.diagnostics.some((d) => d.kind === 'unavailable')

export class GrpcAgent {
  /** Host calls that threw instead of answering (the library promises they do not). */
  readonly errors: string[] = []
  /** Point calls waiting for their answer now. */
  private calling = 0

  constructor(
    readonly id: string,
    private readonly tenant: SoakTenant,
    private readonly proxy: ConnProxy,
    private readonly deps: AgentDeps,
  ) {}

  /** Cuts this host's connection (its relay's sockets); returns how many of its calls were in flight. */
  drop(): number {
    const inFlight = this.calling
    this.proxy.drop()
    return inFlight
  }

  async run(): Promise<void> {
    for (let runNo = 1; !this.deps.stopped(); runNo++) {
      const sessionId = `g${this.id}-r${runNo}`
      let session: GuardedSession
      try {
        session = await GuardedSession.open(
          this.proxy.address,
          {
            sessionId,
            agentId: 'soak-grpc',
            hooks: GRPC_CHAIN,
            workdir: this.deps.workdir,
            onError: 'refuse-unless-skip',
            interactive: true,
            capabilities: { confirm: (message) => this.confirm(message.body ?? '') },
          },
          { token: this.tenant.token, failure: { deadlineMs: 5000 }, reconnect: { initialMs: 100, maxMs: 1000 } },
        )
      } catch (err) {
        this.error(`open ${sessionId}: ${String(err)}`)
        await sleep(500)
        continue
      }
      const steps = 6 + Math.floor(Math.random() * 10)
      for (let step = 1; step <= steps && !this.deps.stopped(); step++) {
        await sleep(this.deps.thinkMs * (0.5 + Math.random()))
        await this.step(session, sessionId, `${sessionId}-${step}`).catch((err: unknown) => this.error(`call: ${String(err)}`))
      }
      await session.close().catch((err: unknown) => this.error(`close ${sessionId}: ${String(err)}`))
    }
  }

  private async step(session: GuardedSession, sessionId: string, cid: string): Promise<void> {
    const intent = pickIntent()
    const spec: CallSpec = { tenant: this.tenant.id, session: sessionId, cid, command: commandFor(cid, intent), intent }
    const start = Date.now()
    const gate = await this.calls(() => session.call('beforeToolExecute', { id: cid, name: 'shell', arguments: { command: spec.command } }))
    const end = Date.now()
    const r = gate.result
    const command = typeof r.arguments.command === 'string' ? r.arguments.command : undefined
    let verdict: Verdict
    if (fellBack(gate as PointCallResult<never>)) {
      verdict = r.allow ? { kind: 'wrong', why: "the host's failure policy allowed a gate" } : { kind: 'host-fallback', why: r.reason ?? '' }
    } else {
      verdict = judgeGate(spec, { allow: r.allow, reason: r.reason, refusedBy: r.refusedBy, command }, this.deps.gens, start, end)
      const failed = gate.trace.filter((t) => t.outcome !== 'changed' && t.outcome !== 'no-opinion').map((t) => `${t.hook} ${t.outcome}`)
      if (r.allow && failed.length) verdict = { kind: 'wrong', why: `allowed while hooks could not decide: ${failed.join(', ')}` }
      if (verdict.kind === 'allowed') this.deps.gens.seen(this.tenant.id, verdict.gen, end)
    }
    this.deps.ledger.add({ transport: 'grpc', tenant: this.tenant.id, point: 'beforeToolExecute', cid, start, end, verdict, ordinary: intent !== 'park' && intent !== 'parkno' && intent !== 'spin', auditKey: gate.decisionId })
    if (verdict.kind !== 'allowed' || command === undefined) return
    await sleep(5)
    const text = `out cid=${cid}`
    const start2 = Date.now()
    const after = await this.calls(() => session.call('afterToolExecute', { call: { id: cid, name: 'shell', arguments: { command } }, result: { text, isError: false } }))
    const end2 = Date.now()
    let verdict2: Verdict
    if (fellBack(after as PointCallResult<never>)) {
      verdict2 = after.result.text === text ? { kind: 'host-fallback', why: 'hookd unreachable: left as it was' } : { kind: 'wrong', why: "the host's failure policy changed a result" }
    } else {
      const reported = after.diagnostics.filter((d) => d.hook === 'rewriter' || d.hook === '').map((d) => `${d.hook || 'hookd'} ${d.kind}`)
      verdict2 = judgeResult(spec, text, after.result.text, reported.join(', ') || undefined, this.deps.gens, start2, end2)
      if (verdict2.kind === 'changed') this.deps.gens.seen(this.tenant.id, verdict2.gen, end2)
    }
    this.deps.ledger.add({ transport: 'grpc', tenant: this.tenant.id, point: 'afterToolExecute', cid, start: start2, end: end2, verdict: verdict2, ordinary: true, auditKey: after.decisionId })
  }

  private async calls<T>(call: () => Promise<T>): Promise<T> {
    this.calling += 1
    try {
      return await call()
    } finally {
      this.calling -= 1
    }
  }

  /** The parker's question: yes after a pause, no for PARKNO; each call must be asked at most once. */
  private async confirm(body: string): Promise<boolean> {
    const cid = cidOf(body)
    if (cid) this.deps.ledger.confirmed(cid)
    this.deps.parked.now += 1
    try {
      await sleep(200 + Math.random() * 800)
    } finally {
      this.deps.parked.now -= 1
    }
    return !/\bPARKNO\b/.test(body)
  }

  private error(text: string): void {
    if (this.errors.length < 20) this.errors.push(text.slice(0, 300))
  }
}
