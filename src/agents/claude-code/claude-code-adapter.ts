/**
 * Claude Code's hook events in, Claude Code's hook answers out, with hookd's points in between. The
 * same adapter serves the HTTP front door (Claude Code's `http` hooks POST the event) and the Claude
 * Agent SDK's hook callbacks (which get the same event object); each supplies the runs (agent-runs.ts).
 *
 * The mapping, both ways (docs/agents.md keeps it for users):
 *
 *   SessionStart                 opens the run: beforeRun (Claude Code sends SessionStart only to command
 *                                hooks, so normally the first prompt opens it)
 *   UserPromptSubmit             opens the run (beforeRun) if none is open; beforeModelRequest, once per
 *                                prompt: text a hook adds to the system prompt -> additionalContext
 *   PreToolUse                   beforeToolExecute on the canonical call: refusal -> deny + reason;
 *                                rewritten arguments -> updatedInput (Claude Code's own permission rules
 *                                still apply); ctx.confirm -> ask, with the hook's title and body (the
 *                                decision is recorded as asked; the events below give its outcome)
 *   PostToolUse                  afterToolExecute: rewritten text -> updatedToolOutput in the tool's
 *                                shape, or additionalContext where the shape cannot carry it; an ask
 *                                for the same tool_use_id was allowed (the call ran)
 *   PostToolUseFailure           afterToolExecute with isError; a rewrite -> additionalContext; an ask
 *                                for the same tool_use_id was allowed
 *   PostToolBatch                no point: an ask for a call of the batch that got no PostToolUse was
 *                                denied (Claude Code sends it once per batch, after the PostToolUse
 *                                answers, refused calls included; measured with 2.1.328). Setup does
 *                                not register it (a hook call per batch): without it, an ask with no
 *                                PostToolUse by the end of the turn (Stop) was denied
 *   PermissionDenied             no point: an ask for the call was denied (auto mode's classifier only)
 *   Stop / StopFailure           afterRun end_turn / error, and the run ends
 *   SessionEnd                   afterRun interrupted, when no Stop ended the run first
 *
 * Anything else (Notification, PreCompact, SubagentStop, ...) is answered `{}`: no opinion.
 */
import type * as z from 'zod'
import { HookdError } from '../../protocol/status.js'
import { issueText } from '../../protocol/issue-text.js'
import type { AgentRun, Peer, RunKey, RunStart } from '../agent-run.js'
import type { AgentRuns } from '../agent-runs.js'
import { callKey, filterResult, gateTool, isObject } from '../tool-gate.js'
import { workdirPath } from '../workdir.js'
import {
  baseEvent,
  permissionDeniedEvent,
  postToolBatchEvent,
  postToolUseEvent,
  postToolUseFailureEvent,
  preToolUseEvent,
  sessionEndEvent,
  userPromptSubmitEvent,
} from './events.js'
import { CLAUDE_CODE, CLAUDE_CODE_TOOLS } from './tools.js'
import { outputText, withOutputText } from './tool-output.js'

/** Claude Code's hook answer: `{}` for no opinion, or `hookSpecificOutput` for the event. */
export type ClaudeCodeAnswer = { hookSpecificOutput?: Record<string, unknown> }

export interface ClaudeCodeAdapterOptions {
  /** Lines for the operator: dropped fields, diagnostics of end events. Default: none. */
  report?(line: string): void
}

const NO_OPINION: ClaudeCodeAnswer = {}

export class ClaudeCodeAdapter {
  private readonly report: (line: string) => void

  constructor(
    private readonly runs: AgentRuns,
    options: ClaudeCodeAdapterOptions = {},
  ) {
    this.report = options.report ?? (() => {})
  }

  /**
   * Answers one event (its JSON already parsed within size and depth limits). A problem with the event,
   * or a run that cannot open (an unknown hook), is a HookdError; at PreToolUse it is a refusal instead,
   * so the model and the person read why the tool did not run. `channel` keeps apart the runs of
   * different hook entries, `options.peer` those of different users (see RunKey). When `options.signal`
   * aborts (the agent went away), the event's point call is cancelled (AgentRuns.with).
   */
  async handle(body: unknown, channel?: string, options: { peer?: Peer | undefined; signal?: AbortSignal | undefined } = {}): Promise<ClaudeCodeAnswer> {
    try {
      return await this.dispatch(body, channel, options.peer, options.signal)
    } catch (err) {
      if (eventName(body) !== 'PreToolUse') throw err
      const reason = `hookd could not check this call, so it is refused: ${HookdError.from(err).message}`
      this.report(reason)
      return deny(reason)
    }
  }

  private async dispatch(body: unknown, channel: string | undefined, peer: Peer | undefined, signal: AbortSignal | undefined): Promise<ClaudeCodeAnswer> {
    const base = parse(baseEvent, body, 'the hook event')
    const workdir = workdirPath(base.cwd)
    const start: RunStart = {
      key: { sessionId: base.session_id, workdir, ...(channel !== undefined ? { channel } : {}), ...(peer ? { peer } : {}) },
      agentId: CLAUDE_CODE,
      modelId: base.model ?? '',
      ...(base.permission_mode !== undefined ? { permissionMode: base.permission_mode } : {}),
    }
    switch (base.hook_event_name) {
      case 'SessionStart':
        return this.runs.with(start, async () => NO_OPINION, signal)
      case 'UserPromptSubmit':
        return this.runs.with(start, (run) => this.prompt(run, parse(userPromptSubmitEvent, body, 'the UserPromptSubmit event')), signal)
      case 'PreToolUse':
        return this.runs.with(start, (run) => this.preToolUse(run, workdir, parse(preToolUseEvent, body, 'the PreToolUse event')), signal)
      case 'PostToolUse': {
        const event = parse(postToolUseEvent, body, 'the PostToolUse event')
        const text = outputText(event.tool_name, event.tool_response)
        return this.runs.with(start, (run) => this.postToolUse(run, workdir, event, text, false), signal)
      }
      case 'PostToolUseFailure': {
        const event = parse(postToolUseFailureEvent, body, 'the PostToolUseFailure event')
        return this.runs.with(start, (run) => this.postToolUse(run, workdir, event, event.error, true), signal)
      }
      // These only settle asks: with no run open, no ask of it waits (and no run is opened for them).
      case 'PostToolBatch': {
        const event = parse(postToolBatchEvent, body, 'the PostToolBatch event')
        if (!this.runs.isOpen(start.key)) return NO_OPINION
        return this.runs.with(start, async (run) => {
          if (!run.awaitsOutcomes?.()) return NO_OPINION
          for (const c of event.tool_calls) run.outcome?.(callKey(c.tool_name, c.tool_use_id ?? '', c.tool_input), 'denied', 'PostToolBatch')
          return NO_OPINION
        }, signal)
      }
      case 'PermissionDenied': {
        const event = parse(permissionDeniedEvent, body, 'the PermissionDenied event')
        if (!this.runs.isOpen(start.key)) return NO_OPINION
        return this.runs.with(start, async (run) => {
          if (run.awaitsOutcomes?.()) run.outcome?.(callKey(event.tool_name, event.tool_use_id ?? '', event.tool_input), 'denied', 'PermissionDenied')
          return NO_OPINION
        }, signal)
      }
      case 'Stop':
        return this.end(start.key, 'end_turn')
      case 'StopFailure':
        return this.end(start.key, 'error')
      case 'SessionEnd':
        parse(sessionEndEvent, body, 'the SessionEnd event')
        return this.end(start.key, 'interrupted')
      default:
        return NO_OPINION
    }
  }

  private async prompt(run: AgentRun, event: { prompt: string; model?: string | undefined }): Promise<ClaudeCodeAnswer> {
    if (!run.serves('beforeModelRequest')) return NO_OPINION
    // Claude Code's system prompt is not the hooks' to see or replace: they get an empty one, and
    // what they add to it joins the prompt as context (Claude Code places it in the system text).
    const answer = await run.call('beforeModelRequest', { system: '', model: event.model ?? '', messages: [{ role: 'user', text: event.prompt }] })
    const system = (answer.result as { system?: unknown }).system
    if (typeof system !== 'string' || system.trim() === '') return NO_OPINION
    return { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: system.trim() } }
  }

  private async preToolUse(run: AgentRun, workdir: string, event: { tool_name: string; tool_input: Record<string, unknown>; tool_use_id?: string | undefined }): Promise<ClaudeCodeAnswer> {
    const call = { id: event.tool_use_id ?? '', tool: event.tool_name, input: event.tool_input }
    const verdict = await gateTool(run, CLAUDE_CODE_TOOLS, 'Claude Code', call, workdir, this.report)
    switch (verdict.kind) {
      case 'allow':
        return NO_OPINION
      case 'deny':
        return deny(verdict.reason)
      // No permissionDecision with a rewrite alone: `allow` would also skip Claude Code's own permission
      // check, and a hook that fixes a URL has not approved the call.
      case 'rewrite':
        return { hookSpecificOutput: { hookEventName: 'PreToolUse', updatedInput: verdict.input } }
      case 'ask':
        return {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'ask',
            permissionDecisionReason: verdict.reason,
            ...(verdict.input ? { updatedInput: verdict.input } : {}),
          },
        }
    }
  }

  private async postToolUse(
    run: AgentRun,
    workdir: string,
    event: { hook_event_name: string; tool_name: string; tool_input: Record<string, unknown>; tool_use_id?: string | undefined; tool_response?: unknown },
    text: string,
    isError: boolean,
  ): Promise<ClaudeCodeAnswer> {
    const call = { id: event.tool_use_id ?? '', tool: event.tool_name, input: event.tool_input }
    // The call ran: an ask waiting for it was allowed.
    if (run.awaitsOutcomes?.()) run.outcome?.(callKey(call.tool, call.id, call.input), 'allowed', event.hook_event_name)
    const verdict = await filterResult(run, CLAUDE_CODE_TOOLS, call, workdir, text, isError)
    if (verdict.kind === 'keep') return NO_OPINION
    const { text: newText, isError: newError } = verdict
    const eventName = event.hook_event_name
    if (!isError && !newError) {
      const shaped = withOutputText(event.tool_name, event.tool_response, newText)
      if (shaped !== undefined) return { hookSpecificOutput: { hookEventName: eventName, updatedToolOutput: shaped } }
    }
    const notes: string[] = []
    if (newError !== isError) notes.push(newError ? "hookd's hooks mark the result of this tool call as an error." : "hookd's hooks mark the result of this tool call as a success.")
    if (newText !== text) notes.push(`hookd's hooks rewrote the result of this tool call; read it as:\n${newText}`)
    return { hookSpecificOutput: { hookEventName: eventName, additionalContext: notes.join('\n') } }
  }

  private async end(key: RunKey, reason: 'end_turn' | 'interrupted' | 'error'): Promise<ClaudeCodeAnswer> {
    await this.runs.end(key, reason)
    return NO_OPINION
  }
}

function deny(reason: string): ClaudeCodeAnswer {
  return { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: reason } }
}

function parse<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value)
  if (!parsed.success) throw new HookdError('invalid-argument', `${issueText(parsed.error, what)}; is this a Claude Code hook event?`)
  return parsed.data
}

function eventName(body: unknown): unknown {
  return isObject(body) ? body.hook_event_name : undefined
}


