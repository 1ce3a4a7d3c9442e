/**
 * A session's capability broker: every ctx.* call its hooks make goes through it. It checks the call
 * against the capability's record and the session's (and tenant's) policy, then against the hook's
 * declared permissions (permission-rules.ts) when it declares any, answers an `ask`-class call
 * itself in a non-interactive run (auto-approve), and forwards the rest to the host through the link,
 * waiting at most the tenant's ceiling. It owns the calls' ids, the pending map and its timers, and it
 * checks every answer a host sends before a hook sees it (`answerFromHost`). Per running point call it
 * gathers what the call's record needs (`PointCallAsks`): the confirms auto-approve answered, the
 * questions left to the agent's prompt, and whether the host left one there.
 */
import { parseJson } from '../../protocol/bounded-json.js'
import {
  CAPABILITIES,
  type CapabilityName,
  type HostCapabilityName,
  isHostCapabilityName,
  parseCapabilityArgs,
  passOn,
  questionOf,
} from '../../protocol/capabilities.js'
import { issueText } from '../../protocol/issue-text.js'
import { GATE_POINTS, getPoint, isGate } from '../../protocol/points/points.js'
import { type ProtectedRoot, hookdStateRoots, hooksRoot } from '../../protocol/protected-paths.js'
import { HookdError } from '../../protocol/status.js'
import { clip } from '../../protocol/text.js'
import type { AutoConfirm, OpenSessionWire } from '../../protocol/wire.js'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import type { AskedQuestion, SessionObserver } from '../observability/observer.js'
import type { CapabilityReply } from '../runners/hook-runner.js'
import type { Tenant } from '../tenant.js'
import { permissionRefusal } from './permission-rules.js'
import { type SessionPolicy, refusal } from './policy.js'
import { shadowRefusal } from './shadow-policy.js'
import type { LinkReply, SessionLink } from './session-link.js'

/**
 * What a host sent on the stream to answer a capability call: a value (JSON) or an error; `deferred`
 * with a confirm's yes at a gate left to the agent's own prompt.
 */
export interface HostAnswer {
  value?: Buffer | null | undefined
  error?: { code: string; message: string } | null | undefined
  deferred?: boolean | undefined
}

/** The largest JSON document a host may send (the sidecar's gRPC message limit bounds it anyway). */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024

/** Deferred questions kept per point call for its record, and how long each title and body may be there. */
const MAX_ASKED = 16
const ASKED_TITLE_CHARS = 256
const ASKED_BODY_CHARS = 1024

/** What one running point call's record gathers from its hooks' capability calls. */
export interface PointCallAsks {
  /** The confirms the auto-approve flag answered, by hook, for the call's trace. */
  readonly autoConfirms: Array<{ hook: string; confirm: AutoConfirm }>
  /** The confirms the link left to the agent's prompt (LinkReply `deferred`), at most MAX_ASKED, clipped. */
  readonly asked: AskedQuestion[]
  /** Whether the host (not the link) answered a confirm `deferred`: the outcome is then its to report. */
  hostDeferred: boolean
  /** The shadow hooks that asked the human (ctx.confirm, refused to them): their `would` is `ask`. */
  readonly shadowAsks: Set<string>
}

/** What the broker reads of its session. */
export interface BrokerSession {
  readonly tenant: Tenant
  readonly open: Pick<OpenSessionWire, 'workdir' | 'interactive' | 'autoApprove'>
  readonly policy: SessionPolicy
  readonly link: Pick<SessionLink, 'capability'>
  readonly observe: Pick<SessionObserver, 'capability'>
}

interface PendingCapability {
  resolve(reply: LinkReply): void
  timer: NodeJS.Timeout
  seq: number
  capability: CapabilityName
  hook: string
  point: string
}

export class CapabilityBroker {
  private readonly pending = new Map<number, PendingCapability>()
  private readonly calls = new Map<number, PointCallAsks>()
  /** hookd's state folders, protected in every session whatever its policy (protected-paths.ts). */
  private readonly stateRoots: readonly ProtectedRoot[] = hookdStateRoots()
  private nextId = 1

  constructor(private readonly session: BrokerSession) {}

  /** Starts gathering point call `seq`'s record; `end(seq)` stops. */
  begin(seq: number): PointCallAsks {
    const asks: PointCallAsks = { autoConfirms: [], asked: [], hostDeferred: false, shadowAsks: new Set() }
    this.calls.set(seq, asks)
    return asks
  }

  end(seq: number): void {
    this.calls.delete(seq)
  }

  /**
   * A hook's capability call, made during point call `seq`; `granted`: the hook's declared permissions
   * (undefined: it declares none, and gets what the session allows). A `shadow` hook's call is also
   * held to shadow-policy.ts. Never rejects: a refusal is a failed reply.
   */
  async call(seq: number, hook: string, point: string, capability: string, raw: unknown, granted?: HookPermissions, shadow = false): Promise<CapabilityReply> {
    // Only what the host serves is forwarded to it (every capability, today: capabilities.ts).
    if (!isHostCapabilityName(capability)) {
      this.session.observe.capability(capability, 'invalid')
      return { ok: false, code: 'invalid', message: `ctx has no capability '${capability}'` }
    }
    return this.forward(seq, hook, point, capability, raw, granted, false, shadow)
  }

  /** True when the session's policy and its tenant's let a question reach a person (ctx.confirm). */
  mayConfirm(): boolean {
    const probe: [{ title: string }] = [{ title: '' }]
    return refusal(this.session.policy, 'confirm', probe) === undefined && this.session.tenant.refusal('confirm', probe) === undefined
  }

  /**
   * hookd's own question to the person about what `hook` did (a shell command it rewrote without the
   * permission, chain.ts): asked like the hook's ctx.confirm would be, but never answered by
   * auto-approve and never judged by the hook's permissions. True only for a yes (the agent's prompt's
   * deferred yes included, which records the call asked); every refusal, error or timeout is a no.
   */
  async ask(seq: number, hook: string, point: string, question: { title: string; body: string }): Promise<boolean> {
    if (!this.session.open.interactive) return false
    const reply = await this.forward(seq, hook, point, 'confirm', [question], undefined, true, false)
    return reply.ok && reply.value === true
  }

  private async forward<N extends HostCapabilityName>(
    seq: number,
    hook: string,
    point: string,
    capability: N,
    raw: unknown,
    granted: HookPermissions | undefined,
    hookds: boolean,
    shadow: boolean,
  ): Promise<CapabilityReply> {
    const { tenant, open, observe } = this.session
    const parsed = parseCapabilityArgs(capability, raw)
    if (!parsed.success) {
      observe.capability(capability, 'invalid')
      return { ok: false, code: 'invalid', message: `ctx.${capability}: invalid ${issueText(parsed.error, 'arguments')}` }
    }
    const args = parsed.data
    const inShadow = shadow ? shadowRefusal(capability, CAPABILITIES[capability].policy) : undefined
    if (inShadow) {
      if (questionOf(capability, args)) this.calls.get(seq)?.shadowAsks.add(hook)
      observe.capability(capability, 'denied')
      return { ok: false, code: 'denied', message: inShadow }
    }
    // The hooks folder is read at each call: a tenants-file edit may move it.
    const place = { workdir: open.workdir, roots: [hooksRoot(tenant.registry.root), ...this.stateRoots] }
    const why = refusal(this.session.policy, capability, args, place) ?? tenant.refusal(capability, args) ?? permissionRefusal(granted, hook, capability, args)
    if (!hookds) observe.capability(capability, why ? 'denied' : 'allowed')
    if (why) return { ok: false, code: 'denied', message: why }
    // An `ask`-class call (ctx.confirm) is the human's: auto-approve answers it when nobody can, it waits
    // the confirm ceiling, and the link may leave it to the agent's own prompt.
    const question = questionOf(capability, args)
    if (question && !open.interactive && !hookds) {
      this.calls.get(seq)?.autoConfirms.push({ hook, confirm: { title: question.title, body: question.body ?? '', approved: open.autoApprove } })
      return { ok: true, value: open.autoApprove }
    }

    const id = this.nextId++
    const ceiling = question ? tenant.waits.confirmMs : tenant.waits.capabilityMs
    const answer = new Promise<LinkReply>((resolve) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        resolve({ ok: false, code: 'timeout', message: `ctx.${capability}: the host did not answer within ${ceiling} ms` })
      }, ceiling)
      timer.unref()
      this.pending.set(id, { resolve, timer, seq, capability, hook, point })
    })
    const direct = this.session.link.capability({ id, seq, hook, point, capability, args })
    direct?.then(
      (reply) => {
        if (this.pending.has(id)) this.settle(id, reply)
      },
      (err: unknown) => {
        if (this.pending.has(id)) this.settle(id, { ok: false, code: 'failed', message: String(err) })
      },
    )
    if (!question) return answer
    const reply = await answer
    if (!reply.ok || reply.deferred !== true) return reply
    // Left to the agent's prompt: the hook sees a plain yes, the call's record says asked.
    const asked = this.calls.get(seq)?.asked
    if (asked && asked.length < MAX_ASKED) asked.push({ hook, title: clip(question.title, ASKED_TITLE_CHARS), body: clip(question.body ?? '', ASKED_BODY_CHARS) })
    return { ok: true, value: reply.value }
  }

  /**
   * The host answered a capability call on the stream. The answer is checked before the hook sees it:
   * bounded JSON (depth and size), and the shape the capability returns (a boolean for confirm, ...).
   * Every answer that does not fit (not JSON, the wrong type, an empty value, neither a value nor an
   * error, `deferred` anywhere but with a confirm's yes at a gate) is treated one way: a protocol
   * mistake, a HookdError (INVALID_ARGUMENT) naming the call, which ends the session; the hook never
   * sees it. An error answer reaches the hook as an error, its message clipped.
   */
  answerFromHost(id: number, answer: HostAnswer): void {
    const pending = this.pending.get(id)
    if (!pending) return this.answer(id, { ok: false, code: 'failed', message: '' })
    const what = `capability_result ${id} (ctx.${pending.capability} of hook '${pending.hook}')`
    if (answer.deferred) {
      const problem = deferredProblem(pending, answer)
      if (problem) throw new HookdError('invalid-argument', `${what}: ${problem}`)
    }
    if (answer.error) {
      this.answer(id, { ok: false, code: passOn(clip(answer.error.code, 64)), message: clip(answer.error.message) })
      return
    }
    const expected = CAPABILITIES[pending.capability].result
    if (!answer.value || answer.value.length === 0) {
      const has = answer.value ? 'has an empty value' : 'has neither a value nor an error'
      throw new HookdError('invalid-argument', `${what} ${has}; answer with the value as JSON (${expected.example}), or with an error`)
    }
    const parsed = parseJson(answer.value, 'the value', { maxDepth: this.session.tenant.limits.jsonDepth, maxBytes: MAX_ANSWER_BYTES })
    if (!parsed.ok) throw new HookdError('invalid-argument', `${what}: ${parsed.message}`)
    const shaped = expected.schema.safeParse(parsed.value)
    if (!shaped.success) throw new HookdError('invalid-argument', `${what}: ${issueText(shaped.error, 'the value')}; ctx.${pending.capability} is answered with ${expected.example}`)
    if (!answer.deferred) return this.answer(id, { ok: true, value: shaped.data })
    if (shaped.data !== true) throw new HookdError('invalid-argument', `${what}: deferred goes with the value true (yes, left to the agent's own prompt); answer false without deferred`)
    // Left to the agent's prompt by the host: recorded asked, and the host reports the outcome.
    const asks = this.calls.get(pending.seq)
    if (asks) asks.hostDeferred = true
    this.settle(id, { ok: true, value: true, deferred: true })
  }

  /**
   * A capability call's answer, already checked. An answer to a call this session never made is a protocol
   * error; a late answer (after the call's wait ceiling, a cancel, or a second answer) is dropped, since
   * a human may well answer a confirm after hookd stopped waiting.
   */
  answer(id: number, reply: CapabilityReply): void {
    // A host's answer is never a deferral, whatever else its object holds.
    this.settle(id, reply.ok ? { ok: true, value: reply.value } : reply)
  }

  /** Answers point call `seq`'s waiting capability calls as cancelled. */
  cancel(seq: number): void {
    for (const [id, pending] of this.pending) {
      if (pending.seq !== seq) continue
      this.pending.delete(id)
      clearTimeout(pending.timer)
      pending.resolve({ ok: false, code: 'cancelled', message: 'the host cancelled this point call' })
    }
  }

  /** The host went away: every waiting capability call is answered unavailable. */
  abort(): void {
    for (const [id, pending] of this.pending) {
      clearTimeout(pending.timer)
      pending.resolve({ ok: false, code: 'unavailable', message: 'the host disconnected' })
      this.pending.delete(id)
    }
  }

  /** A capability call's answer: the host's (checked), or the link's own, which may be deferred. */
  private settle(id: number, reply: LinkReply): void {
    const pending = this.pending.get(id)
    if (!pending) {
      if (id >= 1 && id < this.nextId) return
      throw new HookdError(
        'failed-precondition',
        `capability_result ${id} answers no capability call of this session (the last call made has id ${this.nextId - 1})`,
      )
    }
    this.pending.delete(id)
    clearTimeout(pending.timer)
    pending.resolve(reply)
  }
}

/** What is wrong with a host's `deferred` on this answer, before its value is read; undefined when nothing is. */
function deferredProblem(pending: PendingCapability, answer: HostAnswer): string | undefined {
  if (pending.capability !== 'confirm') return `deferred is only for ctx.confirm, not ctx.${pending.capability}; answer without it`
  const point = getPoint(pending.point)
  if (!point || !isGate(point)) {
    return `deferred is only for a confirm at a gate point (${GATE_POINTS.join(', ')}), where the agent's own prompt can decide the call, and this one was made at ${pending.point}; answer true or false without it`
  }
  if (answer.error) return "deferred goes with the value true (yes, left to the agent's own prompt), not with an error; send the error without it"
  return undefined
}
