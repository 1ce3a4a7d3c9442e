/**
 * The reference agent: a tool-use loop on a Model whose every step runs the run's hooks in hookd.
 *
 *   run start   beforeRun, agent:start
 *   each turn   the model's answer and its tool calls, with their hooks (turn.ts, tool-step.ts)
 *   run end     agent:abort (interrupted only), agent:done, afterRun (closing the session)
 *
 * Step points are called on the session; event points are fired on the hookable instance and
 * bridged (families.ts says why no handler runs twice). A turn's system prompt is built afresh from
 * the agent's own on every turn and never saved; the saved answer is afterModelResponse's rewrite.
 */
import { randomUUID } from 'node:crypto'
import { resolve } from 'node:path'
import { type Hookable, createHooks } from 'hookable'
import type { SessionOptions } from '../client.js'
import type { FailurePolicy } from '../failure-policy.js'
import { AgentError } from './errors.js'
import type { AgentHookMap, RunReason } from './hook-map.js'
import { type HookPort, connectHooks } from './hooks.js'
import type { Message, Model } from './model.js'
import { Recorder } from './record.js'
import { runContext } from './run-context.js'
import { type Conversation, toAgentError, turn } from './turn.js'
import { type AgentTool, BUILTIN_TOOLS } from './tools.js'
import type { AgentUI } from './ui.js'

export const AGENT_ID = 'hookd-agent'
export const DEFAULT_MAX_TURNS = 40
export const DEFAULT_MAX_TOKENS = 8192

export function defaultSystem(tools: readonly AgentTool[]): string {
  return (
    `You are hookd's reference agent. You work in one folder, through the tools ${tools.map((t) => t.spec.name).join(', ')}; ` +
    'paths are relative to that folder. Some tool calls may be refused or changed by hooks: read the results and adapt. ' +
    'When the task is done, answer with a short summary of what you did.'
  )
}

export interface AgentOptions {
  task: string
  model: Model
  workdir: string
  ui: AgentUI
  /** The hooks of the run, in execution order. Default none. */
  hooks?: readonly string[]
  /** The sidecar serving them; required when hooks are declared. */
  address?: string
  token?: string
  /** Describes the sidecar in the start line. Default: the address. */
  sidecarLabel?: string
  /** A person answers ctx.confirm through ui.confirm. Default false. */
  interactive?: boolean
  /** How ctx.confirm is answered when not interactive (--yes). Default false. */
  yes?: boolean
  /** What a hook's failure does at a gate (SessionOptions.onError). Default 'default'. */
  onError?: SessionOptions['onError']
  /** The capability policy of the session (file access, HTTP origins, env names). */
  policy?: SessionOptions['policy']
  failure?: FailurePolicy
  /** The agent's own system prompt. Default: defaultSystem(tools). */
  system?: string
  /** Default BUILTIN_TOOLS. */
  tools?: readonly AgentTool[]
  maxTurns?: number
  maxTokens?: number
  signal?: AbortSignal
  /** Write the model's turns to this file as a script (--record). */
  record?: string
  /** Host handlers may be registered on it too; the bridge adds hookd's. Default: a new instance. */
  hookable?: Hookable<AgentHookMap>
  sessionId?: string
}

export interface AgentResult {
  reason: RunReason
  /** Set when reason is 'error'. */
  error?: AgentError
  /** The saved conversation, as the next request would send it. */
  messages: Message[]
  /** The agent's own system prompt (no hook's turn-only additions). */
  system: string
  turns: number
  /** The last saved answer's text. */
  answer: string
  recording?: { file: string; turns: number; error?: string }
}

const never = new AbortController().signal

export async function runAgent(options: AgentOptions): Promise<AgentResult> {
  const { ui, model } = options
  const signal = options.signal ?? never
  const workdir = resolve(options.workdir)
  const tools = options.tools ?? BUILTIN_TOOLS
  const system = options.system ?? defaultSystem(tools)
  const hookable = options.hookable ?? createHooks<AgentHookMap>()
  const hooks = options.hooks ?? []
  const sessionId = options.sessionId ?? `agent-${randomUUID()}`
  const { port, unbridge } = await connectHooks({
    address: options.address,
    hookable,
    ui,
    ...(options.failure ? { failure: options.failure } : {}),
    ...(options.token ? { token: options.token } : {}),
    session: {
      sessionId,
      agentId: AGENT_ID,
      modelId: model.id,
      hooks,
      workdir,
      interactive: options.interactive ?? false,
      autoApprove: options.yes ?? false,
      ...(options.onError ? { onError: options.onError } : {}),
      ...(options.policy ? { policy: options.policy } : {}),
      capabilities: {
        log: (line) => ui.log(line),
        notify: (m, origin) => ui.notify(m, origin),
        confirm: (m, origin) => ui.confirm(m, origin),
        diagnostic: (d) => ui.diagnostic(d),
      },
    },
  })
  ui.start({ model: model.id, hooks, workdir, sidecar: hooks.length ? (options.sidecarLabel ?? options.address ?? '') : 'no hooks' })
  const run = runContext({ ui, workdir, tools: new Map(tools.map((t) => [t.spec.name, t])), signal, port, hookable })
  const recorder = options.record ? new Recorder(options.record, { model: model.id, task: options.task }) : undefined
  const state: Conversation = { messages: [{ role: 'user', content: options.task }], turns: 0, answer: '' }

  let reason: RunReason = 'end_turn'
  let error: AgentError | undefined
  try {
    await run.call('beforeRun', { sessionId, agentId: AGENT_ID, modelId: model.id })
    await run.fire('agent:start', { sessionId, agentId: AGENT_ID, modelId: model.id, task: options.task, workdir })
    const maxTurns = options.maxTurns ?? DEFAULT_MAX_TURNS
    for (;;) {
      if (state.turns >= maxTurns) throw new AgentError('max-turns', `stopped after ${maxTurns} turns, the most this run allows (--max-turns)`)
      state.turns += 1
      const more = await turn(run, state, { model, system, maxTokens: options.maxTokens ?? DEFAULT_MAX_TOKENS, recorder, tools })
      if (!more) break
    }
  } catch (err) {
    const e = toAgentError(err)
    if (signal.aborted || e.kind === 'interrupted') reason = 'interrupted'
    else {
      reason = 'error'
      error = e
    }
  }
  await finish(port, hookable, ui, reason, state.turns, error)
  unbridge()
  const recording = recorder ? await saveRecording(recorder, ui) : undefined
  ui.end({ reason, turns: state.turns, ...(error ? { error: error.message } : {}) })
  return { reason, ...(error ? { error } : {}), messages: state.messages, system, turns: state.turns, answer: state.answer, ...(recording ? { recording } : {}) }
}

/** The end of a run, whatever ended it: the hooks run even after an interrupt (bounded by the failure policy's deadlines). */
async function finish(port: HookPort, hookable: Hookable<AgentHookMap>, ui: AgentUI, reason: RunReason, turns: number, error: AgentError | undefined): Promise<void> {
  const end = runContext({ ui, workdir: '', tools: new Map(), signal: never, port, hookable })
  try {
    if (reason === 'interrupted') await end.fire('agent:abort', { reason })
    await end.fire('agent:done', { reason, turns, ...(error ? { error: error.message } : {}) })
  } catch (err) {
    ui.notice(`a hook at the end of the run failed: ${err instanceof Error ? err.message : String(err)}`)
  }
  const closed = await port.close(reason).catch((err: unknown) => {
    ui.notice(`afterRun could not run: ${err instanceof Error ? err.message : String(err)}`)
    return undefined
  })
  for (const d of closed?.diagnostics ?? []) ui.diagnostic(d)
}

async function saveRecording(recorder: Recorder, ui: AgentUI): Promise<AgentResult['recording']> {
  if (!recorder.size) {
    ui.notice(`nothing recorded: the model gave no answer, so ${recorder.file} was not written`)
    return { file: recorder.file, turns: 0 }
  }
  try {
    await recorder.save()
    ui.notice(`recorded ${recorder.size} turn${recorder.size === 1 ? '' : 's'} to ${recorder.file}; replay with --model scripted:${recorder.file}`)
    return { file: recorder.file, turns: recorder.size }
  } catch (err) {
    const why = `cannot write the recording to ${recorder.file}: ${err instanceof Error ? err.message : String(err)}`
    ui.notice(why)
    return { file: recorder.file, turns: recorder.size, error: why }
  }
}

