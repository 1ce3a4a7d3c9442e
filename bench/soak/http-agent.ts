/**
 * A Claude Code of the soak: it posts the events Claude Code's `http` hooks post (UserPromptSubmit,
 * PreToolUse and PostToolUse of Bash, Stop; shapes as test/agents/support/agent-events.ts) to the
 * front door's route for its tenant, one session id per run, and judges every answer (expect.ts). An
 * answer that is not hookd's (an HTTP error, no connection) is what Claude Code's `"onFailure":
 * "block"` turns into a refusal: the host's fallback. The drop fault aborts requests in flight.
 */
import { type CallSpec, type Generations, type Verdict, commandFor, judgeGate, judgeResult } from './expect.js'
import { pickIntent, sleep, type AgentDeps } from './grpc-agent.js'
import { HTTP_CHAIN, type SoakTenant, guardReason } from './hooks.js'

/** Longest wait for one answer: past it the request is aborted, as Claude Code's hook timeout would. */
const TIMEOUT_MS = 10_000

type Answer = { status: number; json: Record<string, unknown> | undefined; error?: string } | { aborted: string }

export class HttpAgent {
  readonly errors: string[] = []
  private readonly inFlight = new Set<AbortController>()
  private readonly url: string

  constructor(
    readonly id: string,
    private readonly tenant: SoakTenant,
    doorUrl: string,
    private readonly deps: AgentDeps,
  ) {
    this.url = `${doorUrl}/claude-code/${HTTP_CHAIN.join(',')}`
  }

  /** Aborts every request in flight (the agent's side of a dropped connection); returns how many. */
  drop(): number {
    const n = this.inFlight.size
    for (const c of this.inFlight) c.abort(new Error('dropped by the soak'))
    return n
  }

  async run(): Promise<void> {
    for (let runNo = 1; !this.deps.stopped(); runNo++) {
      const session = `fd${this.id}-r${runNo}`
      const base = { session_id: session, transcript_path: `${this.deps.workdir}/${session}.jsonl`, cwd: this.deps.workdir, permission_mode: 'default' }
      await this.post({ ...base, hook_event_name: 'UserPromptSubmit', prompt: 'tidy up' })
      const steps = 6 + Math.floor(Math.random() * 10)
      for (let step = 1; step <= steps && !this.deps.stopped(); step++) {
        await sleep(this.deps.thinkMs * (0.5 + Math.random()))
        await this.step(base, session, `${session}-${step}`).catch((err: unknown) => this.error(`step: ${String(err)}`))
      }
      await this.post({ ...base, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'done' })
    }
  }

  private async step(base: Record<string, unknown>, session: string, cid: string): Promise<void> {
    // Nobody answers a confirm at the front door (Claude Code would ask its person): no PARK here.
    const picked = pickIntent()
    const intent = picked === 'park' || picked === 'parkno' ? 'plain' : picked
    const spec: CallSpec = { tenant: this.tenant.id, session, cid, command: commandFor(cid, intent), intent }
    const toolUse = `toolu_${cid}`
    const start = Date.now()
    const pre = await this.post({ ...base, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: spec.command, description: 'soak' }, tool_use_id: toolUse })
    const end = Date.now()
    const verdict = this.judgePre(spec, pre, start, end)
    this.deps.ledger.add({ transport: 'http', tenant: this.tenant.id, point: 'beforeToolExecute', cid, start, end, verdict, ordinary: intent !== 'spin', auditKey: `beforeToolExecute:${cid}` })
    if (verdict.kind !== 'allowed' || 'aborted' in pre) return
    const input = ((pre.json?.hookSpecificOutput as Record<string, unknown>).updatedInput ?? {}) as Record<string, unknown>
    await sleep(5)
    const stdout = `out cid=${cid}`
    const start2 = Date.now()
    const post = await this.post({
      ...base,
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: input,
      tool_response: { stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
      tool_use_id: toolUse,
      duration_ms: 3,
    })
    const end2 = Date.now()
    this.deps.ledger.add({ transport: 'http', tenant: this.tenant.id, point: 'afterToolExecute', cid, start: start2, end: end2, verdict: this.judgePost(spec, stdout, post, start2, end2), ordinary: true, auditKey: `afterToolExecute:${cid}` })
  }

  private judgePre(spec: CallSpec, answer: Answer, start: number, end: number): Verdict {
    if ('aborted' in answer) return { kind: 'lost', why: answer.aborted }
    if (answer.status !== 200) return { kind: 'host-fallback', why: `HTTP ${answer.status}: ${answer.error ?? ''}` }
    const out = answer.json?.hookSpecificOutput as Record<string, unknown> | undefined
    if (!out) return judgeGate(spec, { allow: true, command: spec.command }, this.deps.gens, start, end)
    if (out.permissionDecision === 'deny') {
      const reason = String(out.permissionDecisionReason ?? '')
      const by = reason === guardReason(spec.tenant) ? 'guard' : /^hookd /.test(reason) ? 'hookd' : 'another hook'
      return judgeGate(spec, { allow: false, reason, refusedBy: by }, this.deps.gens, start, end)
    }
    if (out.permissionDecision !== undefined) return { kind: 'wrong', why: `permissionDecision ${JSON.stringify(out.permissionDecision)} from a chain that never asks or allows` }
    const input = out.updatedInput as Record<string, unknown> | undefined
    const command = typeof input?.command === 'string' ? input.command : undefined
    const verdict = judgeGate(spec, { allow: true, command }, this.deps.gens, start, end)
    if (verdict.kind === 'allowed') this.deps.gens.seen(spec.tenant, verdict.gen, end)
    return verdict
  }

  private judgePost(spec: CallSpec, stdout: string, answer: Answer, start: number, end: number): Verdict {
    if ('aborted' in answer) return { kind: 'lost', why: answer.aborted }
    if (answer.status !== 200) return { kind: 'host-fallback', why: `HTTP ${answer.status}: ${answer.error ?? ''}` }
    const out = answer.json?.hookSpecificOutput as Record<string, unknown> | undefined
    const output = out?.updatedToolOutput as Record<string, unknown> | undefined
    // The front door's answer names no diagnostics: an unchanged result is checked against the audit line.
    const text = typeof output?.stdout === 'string' ? output.stdout : stdout
    const verdict = judgeResult(spec, stdout, text, out ? undefined : 'unchecked: see the audit log', this.deps.gens, start, end)
    if (verdict.kind === 'changed') this.deps.gens.seen(spec.tenant, verdict.gen, end)
    return verdict
  }

  /** Posts one event as Claude Code's http hook does (JSON, the tenant's bearer token). */
  private async post(body: Record<string, unknown>): Promise<Answer> {
    const controller = new AbortController()
    this.inFlight.add(controller)
    const timer = setTimeout(() => controller.abort(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS)
    try {
      const response = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${this.tenant.token}` },
        body: JSON.stringify(body),
        signal: controller.signal,
      })
      const text = await response.text()
      let json: Record<string, unknown> | undefined
      try {
        json = text ? (JSON.parse(text) as Record<string, unknown>) : undefined
      } catch {
        return { status: response.status, json: undefined, error: `not JSON: ${text.slice(0, 100)}` }
      }
      return { status: response.status, json, ...(response.status !== 200 ? { error: String(json?.error ?? '') } : {}) }
    } catch (err) {
      if (controller.signal.aborted) {
        const why = controller.signal.reason instanceof Error ? controller.signal.reason.message : 'aborted'
        // A timeout is the agent's own failure policy (Claude Code refuses); a drop is the fault's.
        return why.startsWith('no answer') ? { status: 0, json: undefined, error: why } : { aborted: why }
      }
      return { status: 0, json: undefined, error: `no connection: ${(err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : String(err)}` }
    } finally {
      clearTimeout(timer)
      this.inFlight.delete(controller)
    }
  }

  private error(text: string): void {
    if (this.errors.length < 20) this.errors.push(text.slice(0, 300))
  }
}
