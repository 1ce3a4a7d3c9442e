/**
 * Turns a point's chained answer into what the person at the terminal reads: which hook refused or
 * rewrote what. The trace says which hooks changed the value (outcome `changed` or `refused`); the
 * result, compared with what was sent, says what changed.
 */
import type { PointCallResult } from '../client.js'
import type { PointName } from '../../protocol/points/points.js'
import type { HookTrace } from '../../protocol/wire.js'
import { sameJson } from '../../protocol/json.js'

export interface Decision {
  point: string
  /** The hooks that made it, in chain order ('hookd' when the failure policy decided). */
  hooks: string[]
  /** E.g. "refused shell: refused by the user". */
  summary: string
}

/** One line of at most `max` characters: a string quoted, anything else as compact JSON. */
export function preview(value: unknown, max = 80): string {
  const quote = typeof value === 'string'
  const text = (quote ? value : (JSON.stringify(value) ?? String(value))).replace(/\s+/g, ' ').trim()
  const cut = text.length > max ? `${text.slice(0, max - 3)}...` : text
  return quote ? JSON.stringify(cut) : cut
}

function actors(trace: readonly HookTrace[]): string[] {
  return trace.filter((t) => t.outcome === 'changed' || t.outcome === 'refused').map((t) => t.hook)
}

/** "url: "http://a" -> "https://a"" for each argument that changed. */
export function argumentChanges(before: Record<string, unknown>, after: Record<string, unknown>): string {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])]
  return keys
    .filter((k) => !sameJson(before[k], after[k]))
    .map((k) => (k in after ? (k in before ? `${k}: ${preview(before[k], 50)} -> ${preview(after[k], 50)}` : `${k} added: ${preview(after[k], 50)}`) : `${k} removed`))
    .join(', ')
}

type Result<N extends PointName> = PointCallResult<N>

export function toolGateDecisions(name: string, sent: Record<string, unknown>, answer: Result<'beforeToolExecute'>): Decision[] {
  const r = answer.result
  const out: Decision[] = []
  const rewriters = answer.trace.filter((t) => t.outcome === 'changed').map((t) => t.hook)
  const changes = argumentChanges(sent, r.arguments)
  if (rewriters.length && changes) out.push({ point: 'beforeToolExecute', hooks: rewriters, summary: `rewrote the arguments of ${name}: ${changes}` })
  if (!r.allow) {
    out.push({ point: 'beforeToolExecute', hooks: [r.refusedBy ?? 'hookd'], summary: `refused ${name}: ${r.reason ?? 'no reason given'}` })
  }
  return out
}

export function toolResultDecisions(name: string, sent: { text: string; isError: boolean }, answer: Result<'afterToolExecute'>): Decision[] {
  const hooks = actors(answer.trace)
  const r = answer.result
  if (!hooks.length || (r.text === sent.text && r.isError === sent.isError)) return []
  const parts: string[] = []
  if (r.text !== sent.text) parts.push(`rewrote the result of ${name}: ${preview(r.text)}`)
  if (r.isError !== sent.isError) parts.push(r.isError ? `marked the result of ${name} an error` : `marked the result of ${name} a success`)
  return [{ point: 'afterToolExecute', hooks, summary: parts.join('; ') }]
}

export function systemDecisions(sent: string, answer: Result<'beforeModelRequest'>): Decision[] {
  const hooks = actors(answer.trace)
  const now = answer.result.system
  if (!hooks.length || now === sent) return []
  const summary = now.startsWith(sent)
    ? `added to this turn's system prompt: ${preview(now.slice(sent.length))}`
    : `replaced this turn's system prompt: ${preview(now)}`
  return [{ point: 'beforeModelRequest', hooks, summary }]
}

export function answerDecisions(sent: string, answer: Result<'afterModelResponse'>): Decision[] {
  const hooks = actors(answer.trace)
  if (!hooks.length || answer.result.text === sent) return []
  return [{ point: 'afterModelResponse', hooks, summary: `rewrote the answer before it was saved; saved: ${preview(answer.result.text)}` }]
}

/** An event point's answer: the fields the hooks changed on the event. */
export function eventPointDecisions(point: string, event: Record<string, unknown>, answer: PointCallResult<PointName>): Decision[] {
  const hooks = actors(answer.trace)
  const changes = answer.result as Record<string, unknown>
  const fields = Object.keys(changes)
  if (!hooks.length || !fields.length) return []
  const tool = typeof event.name === 'string' ? event.name : 'the call'
  let summary: string
  if (point === 'tool:gate' && changes.block === true) summary = `blocked ${tool}: ${typeof changes.reason === 'string' ? changes.reason : 'no reason given'}`
  else if (point === 'tool:gate' && 'result' in changes) summary = `answered ${tool} without running it: ${preview(changes.result)}`
  else if (point === 'system:transform' && typeof changes.system === 'string') summary = `set this turn's system prompt: ${preview(changes.system)}`
  else if (point === 'tool:transform' && 'result' in changes) summary = `rewrote the result of ${tool}: ${preview(changes.result)}`
  else if (point === 'context:transform') summary = `changed the messages sent this turn (${Array.isArray(changes.messages) ? changes.messages.length : '?'} messages)`
  else summary = `changed ${fields.join(', ')}`
  return [{ point, hooks, summary }]
}

/**
 * The ctx.confirm questions of a call that no person saw (the run is not interactive, so the sidecar
 * answered each with the run's --yes), one line per question: a hook that "asked" must not look asked.
 */
export function autoConfirmDecisions(point: string, answer: PointCallResult<PointName>): Decision[] {
  return answer.trace.flatMap((t) =>
    (t.autoConfirms ?? []).map((c) => ({
      point,
      hooks: [t.hook],
      summary: `confirm ${preview(c.body ? `${c.title}: ${c.body}` : c.title, 120)} was not shown to anyone: ${
        c.approved ? 'approved automatically (--yes)' : 'declined automatically (no terminal to ask on, and no --yes)'
      }`,
    })),
  )
}
