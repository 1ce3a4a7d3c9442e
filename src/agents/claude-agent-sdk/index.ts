/**
 * hookd-sandbox/claude-agent-sdk: hookd's hooks as the Claude Agent SDK's `hooks` option. Every SDK hook
 * callback goes to a hookd session over gRPC, through the same Claude Code adapter as the HTTP front
 * door (one mapping, docs/agents.md): PreToolUse is beforeToolExecute, PostToolUse afterToolExecute,
 * the prompt and Stop delimit the run (beforeRun, afterRun).
 *
 *   import { query } from '@anthropic-ai/claude-agent-sdk'
 *   import { hookdHooks } from 'hookd-sandbox/claude-agent-sdk'
 *
 *   const hookd = await hookdHooks({ address: 'unix:.hookd/hookd.sock', hooks: ['guard', 'audit'] })
 *   for await (const message of query({ prompt, options: { hooks: hookd.hooks } })) { ... }
 *   await hookd.close()
 *
 * The matchers fail closed (`onFailure: 'block'`): a callback that cannot reach hookd blocks the
 * action it guards; at PreToolUse the model reads why. This package does not depend on the SDK: the
 * types below have the SDK's shapes (0.3.332), so `hookd.hooks` fits its `hooks` option.
 *
 * Without the application's own `confirm`, a hook's ctx.confirm at PreToolUse becomes the SDK's `ask`
 * (its canUseTool decides), recorded asked by the sidecar; when a declared hook serves the gate, the
 * events that say what became of the call are registered too, and each ask's outcome is reported
 * (host-run.ts): PostToolUse and PostToolUseFailure (it ran), PostToolBatch naming it without them (it
 * did not: the pinned SDK sends PostToolBatch once per batch, refused calls included, and no
 * PermissionDenied for canUseTool's no, measured), PermissionDenied (auto mode's refusal), and the end
 * events (a turn that ends with none of them, it did not run).
 */
import { HookdClient, type ConnectOptions, type SessionOptions } from '../../host/client.js'
import type { CallOrigin, CapabilityHandlers, Message } from '../../host/capabilities.js'
import { DEFAULT_ADDRESS } from '../../protocol/address.js'
import type { Diagnostic } from '../../protocol/diagnostic.js'
import { servedPoints } from '../../protocol/points/points.js'
import { HookdError } from '../../protocol/status.js'
import { AgentRuns } from '../agent-runs.js'
import { type ClaudeCodeAnswer, ClaudeCodeAdapter } from '../claude-code/claude-code-adapter.js'
import { MAPPED_EVENTS, type MappedEvent, eventsForPoints } from '../claude-code/events.js'
import { HostRun } from './host-run.js'

/** The SDK's HookCallback: the event, the tool use id, an abort signal; answers the hook JSON. */
export type SdkHookCallback = (input: unknown, toolUseID: string | undefined, options: { signal: AbortSignal }) => Promise<ClaudeCodeAnswer>

/** The SDK's HookCallbackMatcher. */
export interface SdkHookMatcher {
  matcher?: string
  hooks: SdkHookCallback[]
  /** Seconds, for all hooks of the matcher. */
  timeout?: number
  onFailure?: 'continue' | 'block'
}

export interface HookdHooksOptions {
  /** The hookd hooks to run, in order. */
  hooks: readonly string[]
  /** The sidecar's gRPC address (default: unix:.hookd/hookd.sock), or a client already connected. */
  address?: string
  client?: HookdClient
  connect?: ConnectOptions
  /** What the hooks may do (files are always confined to the session's cwd). */
  policy?: SessionOptions['policy']
  env?: Record<string, string>
  /**
   * Answer `ctx.confirm` yourself (a prompt in your application): the hook waits for the answer.
   * Without it, a confirm at a tool gate becomes the hook answer `ask`, which the SDK hands to your
   * `canUseTool` (its `decisionReason` holds the hooks' questions); elsewhere it is answered no. The
   * sidecar records such a call asked, and its outcome once the SDK's events say it.
   */
  confirm?(message: Message, origin: CallOrigin): boolean | Promise<boolean>
  /** notify, log, file and fetch handlers (defaults: the host library's). */
  capabilities?: Omit<CapabilityHandlers, 'confirm'>
  /** Default true: a callback that fails blocks what it guards (`onFailure: 'block'`). */
  failClosed?: boolean
  /**
   * What a hook's failure does at PreToolUse. Default `refuse-unless-skip`: a guard that throws,
   * returns an invalid value or does not load refuses the call, unless its hook.json says
   * "onError": "skip". `default` is the seed's rule (such a hook is skipped).
   */
  onError?: SessionOptions['onError']
  /** Seconds the SDK waits for each callback. Default 60. */
  timeoutS?: number
  /**
   * Register these events instead of those the hooks need (which are PreToolUse, always, the events
   * of the points the hooks serve when this is called, and, without `confirm` and when a hook serves
   * the gate, those that say what became of an ask). Leave out PostToolUse or PostToolUseFailure and
   * an ask with no word by the end of the run is recorded unknown instead of denied.
   */
  events?: readonly MappedEvent[]
  /** Ends a run after this long without an event. Default 30 minutes. */
  idleMs?: number
  /** Diagnostics of the hooks. Default: a line on stderr. */
  onDiagnostic?(d: Diagnostic): void
}

export interface HookdHooks {
  /** The SDK's `hooks` option. */
  hooks: Partial<Record<MappedEvent, SdkHookMatcher[]>>
  /** The events registered. */
  events: readonly MappedEvent[]
  /** Ends the open runs (afterRun: interrupted) and closes the connection this made. */
  close(): Promise<void>
}

/**
 * The events to register: those the points need, and with `follow` those that carry an ask's outcome,
 * PostToolBatch among them: in this process a callback per batch costs little (docs/agents.md#the-claude-agent-sdk),
 * and it says a refused call was denied at the end of its batch instead of its turn.
 */
function sdkEvents(points: ReadonlySet<string>, follow: boolean): MappedEvent[] {
  const events = new Set(eventsForPoints(points, { mayAsk: follow }))
  if (follow) events.add('PostToolBatch')
  return MAPPED_EVENTS.filter((e) => events.has(e))
}

/** Connects to hookd, checks the hooks exist, and builds the SDK's `hooks` option. */
export async function hookdHooks(options: HookdHooksOptions): Promise<HookdHooks> {
  const client = options.client ?? (await HookdClient.connect(options.address ?? DEFAULT_ADDRESS, options.connect))
  const own = options.client === undefined
  try {
    const infos = await client.listHooks()
    const missing = options.hooks.filter((name) => !infos.some((h) => h.name === name))
    if (missing.length) {
      throw new HookdError('not-found', `unknown hook${missing.length > 1 ? 's' : ''} ${missing.map((n) => `'${n}'`).join(', ')} (available: ${infos.map((h) => h.name).join(', ') || 'none'})`)
    }
    // PreToolUse always: the SDK takes its hooks once per query, and a hook may gain a PreToolUse handler
    // in a hot reload while the query runs; the gate must then be asked from the next tool call on. When
    // nothing serves it, the callback answers at once, with no call to hookd (live-hooks.ts).
    const hookPoints = infos.filter((h) => options.hooks.includes(h.name)).flatMap((h) => h.points)
    const points = new Set(['beforeToolExecute', ...hookPoints])
    // Asks are followed where they can happen now: no confirm of the application's, a hook at the gate.
    const follow = !options.confirm && servedPoints(new Set(hookPoints)).includes('beforeToolExecute')
    const events = options.events ?? sdkEvents(points, follow)
    const reportsRan = events.includes('PostToolUse') && events.includes('PostToolUseFailure')
    const onDiagnostic = options.onDiagnostic ?? ((d: Diagnostic) => void process.stderr.write(`hookd: ${d.kind}${d.hook ? ` (hook '${d.hook}')` : ''}: ${d.message}\n`))
    const runs = new AgentRuns(
      (start) =>
        HostRun.open(client, start, {
          hooks: options.hooks,
          onDiagnostic,
          ...(options.policy ? { policy: options.policy } : {}),
          ...(options.onError ? { onError: options.onError } : {}),
          ...(options.env ? { env: options.env } : {}),
          ...(options.confirm ? { confirm: options.confirm } : {}),
          ...(options.capabilities ? { capabilities: options.capabilities } : {}),
          reportsRan,
        }),
      { ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}) },
    )
    const adapter = new ClaudeCodeAdapter(runs)
    const callback: SdkHookCallback = (input) => adapter.handle(input)
    const matcher: SdkHookMatcher = { hooks: [callback], timeout: options.timeoutS ?? 60, onFailure: options.failClosed === false ? 'continue' : 'block' }
    const hooks: Partial<Record<MappedEvent, SdkHookMatcher[]>> = {}
    for (const event of events) hooks[event] = [event.startsWith('PreTool') || event.startsWith('PostTool') ? { matcher: '*', ...matcher } : matcher]
    return {
      hooks,
      events,
      async close() {
        await runs.closeAll('interrupted')
        if (own) client.close()
      },
    }
  } catch (err) {
    if (own) client.close()
    throw err
  }
}
