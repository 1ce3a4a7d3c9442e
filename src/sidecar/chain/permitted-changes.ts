/**
 * Which of a hook's changes its hook.json "permissions" let it make (src/protocol/hook-permissions.ts,
 * the point catalog's `decides`: src/protocol/points/field-decisions.ts). A hook without the block may
 * change whatever its point allows, as before; one with it keeps only the changes it declared. Each
 * other change is dropped with a `not-permitted` diagnostic, and the chain goes on with the value as
 * it was, except one: a rewrite of a `shell` command at a gate where a person can be asked (the
 * session is interactive and allows ctx.confirm: a gRPC host's own prompt, the agent's permission
 * prompt at the front door). That rewrite stays, and hookd asks the person whether to run the
 * rewritten command; a no (or no answer) refuses the call. Nowhere else is a person asked: under
 * auto-approve, or where nobody can be asked, the rewrite is dropped.
 */
import { sameJson } from '../../protocol/json.js'
import type { HookPermissions } from '../../protocol/hook-permissions.js'
import { type MadeDecision, decisionOf, decisionPermitted, decisionWords } from '../../protocol/points/field-decisions.js'
import type { AnyPoint } from '../../protocol/points/points.js'
import { inert } from '../../protocol/text.js'

/** The tool whose rewrite is put to the person rather than dropped, where a person can be asked. */
export const ASKED_TOOL = 'shell'

/** How much of a command a question shows, before and after the rewrite. */
const SHOWN_COMMAND_CHARS = 400

export interface PermittedChanges {
  /** The changes the hook may make (and the shell rewrite being asked about). */
  kept: Record<string, unknown>
  /** One `not-permitted` message per change dropped or put to the person, after the hook's label. */
  notes: string[]
  /** The question for the person, when a shell rewrite is kept only if they say yes. */
  ask?: { title: string; body: string; refusal: string }
}

/**
 * Judges a hook's validated changes (`changes`, in the point's own fields) against its declared
 * permissions. `canAsk`: the point is a gate and the session can put a question to a person.
 */
export function permittedChanges(
  point: AnyPoint,
  state: unknown,
  changes: Record<string, unknown>,
  hook: string,
  granted: HookPermissions,
  canAsk: boolean,
): PermittedChanges {
  const out: PermittedChanges = { kept: {}, notes: [] }
  for (const [field, value] of Object.entries(changes)) {
    // A change that leaves the chain's value as it is decides nothing (`allow: true`, the same text).
    if (sameJson(point.apply(state, { [field]: value }, hook), state)) {
      out.kept[field] = value
      continue
    }
    const made = decisionOf(point, state, field, value)
    if (decisionPermitted(granted.decide, made)) {
      out.kept[field] = value
      continue
    }
    const { did, add } = decisionWords(made)
    const denied = `${did}, which its hook.json "permissions" do not allow`
    // One note per decision: `allow: false` with its `reason` is one refusal.
    const note = (text: string): void => {
      if (!out.notes.includes(text)) out.notes.push(text)
    }
    if (!asked(made)) {
      note(`${denied}; dropped (to allow it, ${add})`)
      continue
    }
    if (!canAsk) {
      note(`${denied}; dropped, since nobody can be asked to approve it here (to allow it, ${add})`)
      continue
    }
    out.kept[field] = value
    out.notes.push(`${denied}; put to the person to approve (to allow it without asking, ${add})`)
    out.ask = question(hook, currentArguments(point, state), value)
  }
  return out
}

function asked(made: MadeDecision): boolean {
  return made.decision === 'rewriteArguments' && made.tool === ASKED_TOOL
}

function currentArguments(point: AnyPoint, state: unknown): unknown {
  const result = point.result(state)
  return result !== null && typeof result === 'object' ? (result as Record<string, unknown>).arguments : undefined
}

function command(args: unknown): string {
  const text = args !== null && typeof args === 'object' && typeof (args as Record<string, unknown>).command === 'string' ? ((args as Record<string, unknown>).command as string) : JSON.stringify(args) ?? ''
  // Shown to a person deciding: one line each, nothing a terminal acts on.
  return inert(text, SHOWN_COMMAND_CHARS)
}

function question(hook: string, before: unknown, after: unknown): NonNullable<PermittedChanges['ask']> {
  return {
    title: `Run the shell command that hook '${hook}' rewrote?`,
    body: `The agent asked for: ${command(before)}\nhook '${hook}' rewrote it to: ${command(after)}\nIts hook.json "permissions" do not let it rewrite shell commands.`,
    refusal: `hookd refused the call: hook '${hook}' rewrote the shell command, which its hook.json "permissions" do not allow, and the person did not approve the rewrite`,
  }
}
