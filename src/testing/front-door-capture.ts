/**
 * `hookd serve --http ... --capture DIR` at the front door (door-capture.ts is what it sees): every
 * event an agent posts (Claude Code's http hooks, the shim, any route) is written as an agent-event
 * case (agent-case.ts: the raw event and the answer the agent got), and every point call of its runs as
 * a point case (capture.ts), in `DIR/AGENT/ROUTE/`, through the folder's bounded sink
 * (capture-sink.ts). Env values, the front door's HTTP token, the values of this process's env whose
 * names say they are secrets, and anything shaped like a credential (credential-redactor.ts) are
 * replaced before anything is written. No request header is ever recorded.
 *
 * An event's point calls are found by the async context its handling runs in (the run's beforeRun, if
 * the event opened it, and the calls the adapter makes for it); their capability calls by their seq.
 * What it holds is bounded by what is in flight: a call's state goes when its result comes, an event's
 * when its answer does.
 */
import { AsyncLocalStorage } from 'node:async_hooks'
import { createHash } from 'node:crypto'
import { agentById } from '../agents/registry.js'
import type { DialectAnswer } from '../agents/hook-event.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { DoorCapture, RunOpened, RunTap, SeenEvent } from '../sidecar/http/door-capture.js'
import { capturedEventCase, ownName } from './agent-case.js'
import { type CapturedCapability, type KeptOut, capturedCase } from './capture.js'
import type { CaptureSink } from './capture-sink.js'
import { secretEnv } from './credential-redactor.js'

interface EventRecord {
  capabilities: CapturedCapability[]
  diagnostics: Diagnostic[]
  env: Record<string, string>
}

interface PendingCall {
  point: string
  payload: unknown
  capabilities: CapturedCapability[]
  logs: string[]
  event: EventRecord | undefined
}

/** The most capability calls kept per point call (the sidecar's own cap per invocation is lower). */
const MAX_CALLS_KEPT = 1000

export class FrontDoorCapture implements DoorCapture {
  private readonly current = new AsyncLocalStorage<EventRecord>()
  private readonly keptOut: KeptOut[]

  constructor(
    private readonly sink: CaptureSink,
    /** The environment whose secret-named values are kept out (default: this process's). */
    env: NodeJS.ProcessEnv = process.env,
  ) {
    this.keptOut = Object.entries(secretEnv(env)).map(([name, value]) => ({ label: `env ${name}`, value }))
  }

  /** Keeps `value` out of every case from now on, written as `<label>` (the HTTP token: `hookd token`). */
  keepOut(label: string, value: string): void {
    this.keptOut.unshift({ label, value })
  }

  async event(seen: SeenEvent, handle: () => Promise<DialectAnswer>): Promise<DialectAnswer> {
    // A full folder: counted, and nothing copied or held for it.
    if (!this.sink.open) {
      this.sink.write([], 'event', 'an event', () => undefined)
      return handle()
    }
    const record: EventRecord = { capabilities: [], diagnostics: [], env: {} }
    const at = new Date()
    // A copy as it arrived: nothing the handling does to the parsed event may show in its case.
    let raw: SeenEvent | undefined
    this.guard(() => void (raw = { ...seen, event: structuredClone(seen.event) }))
    const answer = await this.current.run(record, handle)
    if (raw) {
      const arrived = raw
      this.guard(() => this.writeEvent(arrived, record, answer, at))
    }
    return answer
  }

  run(opened: RunOpened): RunTap {
    const calls = new Map<number, PendingCall>()
    const sub = folders(opened.agentId, opened.route)
    return {
      call: (seq, point, payload) =>
        this.guard(() => {
          const event = this.current.getStore()
          if (event) Object.assign(event.env, opened.env)
          if (!this.sink.open) return this.sink.write([], point, `a ${point} call`, () => undefined)
          calls.set(seq, { point, payload: structuredClone(payload), capabilities: [], logs: [], event })
        }),
      capability: (c, reply) =>
        this.guard(() => {
          const call = calls.get(c.seq)
          if (!call || call.capabilities.length >= MAX_CALLS_KEPT) return
          const args = Array.isArray(c.args) ? (c.args as unknown[]) : []
          const captured: CapturedCapability = { capability: c.capability, args, hook: c.hook }
          if (reply.ok) captured.value = reply.value
          else captured.error = { code: reply.code, message: reply.message }
          call.capabilities.push(captured)
        }),
      log: (line) => this.guard(() => void calls.get(line.seq)?.logs.push(line.message)),
      // Pushed at open, in the async context of the event that opened the run.
      diagnostic: (d) => this.guard(() => void this.current.getStore()?.diagnostics.push(d)),
      result: (seq, result) =>
        this.guard(() => {
          const call = calls.get(seq)
          calls.delete(seq)
          if (!call || !result) return
          call.event?.capabilities.push(...call.capabilities)
          call.event?.diagnostics.push(...result.diagnostics)
          const { profile } = opened
          const at = new Date()
          this.sink.write(sub, call.point, `a ${call.point} call`, () =>
            capturedCase(
              {
                hooks: profile.hooks,
                point: call.point,
                payload: call.payload,
                session: {
                  id: opened.sessionId,
                  agentId: opened.agentId,
                  modelId: opened.modelId,
                  interactive: opened.interactive,
                  autoApprove: opened.autoApprove,
                  env: opened.env,
                  policy: { file: profile.policy.file, httpOrigins: profile.policy.httpOrigins },
                  onError: profile.onError,
                },
                result: result.result,
                diagnostics: result.diagnostics,
                logs: call.logs,
                capabilities: call.capabilities,
                at,
              },
              this.keptOut,
            ),
          at)
        }),
    }
  }

  private writeEvent(seen: SeenEvent, record: EventRecord, answer: DialectAnswer, at: Date): void {
    let label = seen.name ?? 'event'
    let sessionId: string | undefined
    let workdir: string | undefined
    try {
      // What the dialect reads of it: its name, session and folder (a malformed event has none).
      const parsed = agentById(seen.agent)?.dialect.parse(seen.event, seen.name)
      if (parsed) {
        label = parsed.name ?? seen.name ?? ownName(seen.event) ?? parsed.event.kind
        sessionId = parsed.session.sessionId
        workdir = parsed.session.cwd
      }
    } catch {
      // The event as it is, with no folder to map.
    }
    const name = `event-${label}`
    this.sink.write(folders(seen.agent, seen.route), name, `a ${seen.agent} ${label} event`, () =>
      capturedEventCase(
        {
          agent: seen.agent,
          route: seen.route,
          ...(seen.name !== undefined ? { eventName: seen.name } : {}),
          event: seen.event,
          label,
          ...(sessionId !== undefined ? { sessionId } : {}),
          ...(workdir !== undefined && workdir.startsWith('/') ? { workdir } : {}),
          answer,
          capabilities: record.capabilities,
          diagnostics: record.diagnostics,
          env: record.env,
          at,
        },
        this.keptOut,
      ),
    at)
  }

  /** Nothing in capture may reach the agent or the run: a failure is the sink's to count and say. */
  private guard(fn: () => void): void {
    try {
      fn()
    } catch (err) {
      this.sink.failed(err)
    }
  }
}

/**
 * `DIR/AGENT/ROUTE/`: the route as one folder name (`guard,audit`, `profile-strict`). Routes are hook
 * names (letters, digits, ".", "_", "-") and commas, never "." or "..", but a folder name is held to
 * that anyway, and a long one is cut and keeps a hash of the whole, so two routes never share a folder.
 */
export function folders(agent: string, route: string): string[] {
  const safe = (text: string): string => {
    let name = text.replace(/\//g, '-').replace(/[^A-Za-z0-9._,-]+/g, '_')
    if (name === '' || name.startsWith('.')) name = `_${name}`
    if (name.length > 120) name = `${name.slice(0, 100)}-${createHash('sha256').update(text).digest('hex').slice(0, 16)}`
    return name
  }
  return [safe(agent), safe(route)]
}
