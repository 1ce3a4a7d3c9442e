/**
 * An agent hookd serves, as one record: everything that is that agent's, so that the front door's
 * routes, `hookd setup`, `hookd init`, their help, the shim's per-agent table (native/hookd-hook.c and
 * bin/hookd-hook, checked by test/unit/shim-forms.test.ts) and the tables of docs/agents.md (checked
 * by test/unit/agents/agent-registry.test.ts) all come from the one list of them (registry.ts). Each
 * agent's record lives in its own folder (claude-code/claude-code-agent.ts, codex/codex-agent.ts, ...)
 * beside its dialect, its tool table and any step of its own; docs/architecture.md says how to add one.
 */
import type { Dialect } from './hook-event.js'
import type { Config, Placement, Position, SettingsFormat } from './settings/settings-format.js'
import type { ScriptFolder } from './settings/script-folder.js'
import type { FileChange, SettingsPort } from './settings/settings-port.js'

export interface AgentDefinition {
  /**
   * The agent's id: ctx.agent.id and beforeRun's agentId, the first segment of its front-door routes
   * (/codex/guard), and the name `hookd setup` and `hookd init` take. Lower-case letters, digits, `-`.
   */
  readonly id: string
  /** Its name for people, in messages and docs. */
  readonly title: string
  /** Its events both ways (to hookd's points and back), its tool table and what follows an ask (hook-event.ts). */
  readonly dialect: Dialect<unknown>
  /** Its settings files: what `hookd setup` and `hookd init` write there, and how hookd's entries are told apart. */
  readonly settings: AgentSettings
  /** How the shim refuses a call for it when hookd cannot answer, and where the shim finds its project. */
  readonly shim: ShimForm
  /** Its column of docs/agents.md's "What each agent can express". */
  readonly expresses: Expresses
}

/** The agent's record with its dialect's own event type kept out of the list's type. */
export function defineAgent<E>(dialect: Dialect<E>, rest: Omit<AgentDefinition, 'id' | 'title' | 'dialect'>): AgentDefinition {
  return { id: dialect.agent, title: dialect.title, dialect: dialect as Dialect<unknown>, ...rest }
}

export interface AgentSettings {
  /** How its files hold hook entries, and which are hookd's (settings/hooks-json.ts, claude-code/settings.ts). */
  readonly format: SettingsFormat
  /** The project's file `hookd init` writes, relative to the project, to be committed for the whole team. */
  readonly committed: string
  /**
   * The project's file of one user alone, which the agent keeps out of commits (Claude Code's
   * `.claude/settings.local.json`), where it has one: `hookd setup` writes it by default, and the user's
   * own file with `--user`. Without one, setup writes the user's file by default, and the committed one
   * with `--dir`.
   */
  readonly local?: string
  /** The user's own file: `~/<dir>/<file>`, or `$<variable>/<file>` when the agent's variable is set. */
  readonly user: { readonly dir: string; readonly file: string; readonly variable?: string }
  /** Events whose entry lets the call through when hookd cannot answer: they start or end a run, with nothing to refuse. */
  readonly failOpen: readonly string[]
  /**
   * The group matcher the agent needs on tool events' entries, where its format groups them (none: the
   * group has no matcher, which Codex reads as every tool); with `names`, the matcher naming only the
   * native tools the route's hooks list (tool-conditions.ts), so the agent calls hookd for no other tool.
   */
  readonly toolMatcher?: { readonly matcher?: string; readonly events: readonly string[]; names?(natives: readonly string[]): string }
  /**
   * Events whose answer hookd never uses (its hooks only observe them), and the fields that make the
   * agent's command entry for them run in the background (Claude Code's `async: true`).
   */
  readonly observeOnly?: { readonly events: readonly string[]; readonly fields: Readonly<Record<string, unknown>> }
  /** Top-level fields a new file starts with. */
  readonly fresh?: Config
  /** The agent's events do not name themselves: each entry's route says `?event=EVENT` (Copilot CLI). */
  readonly namedEvents?: boolean
  /** What `--events all` registers. */
  readonly allEvents: readonly string[]
  /** What `hookd setup --dir` says of the project's file: when the agent runs it at all. */
  readonly projectNote?: string
  /** What `hookd init` says each user needs before the agent runs the committed entries (measured with the pinned CLI). */
  readonly initNote: string
  /** The width of the event column in setup's summary lines. */
  readonly summaryColumn: number
  /** The agent's own `http` hooks, which `--transport http` writes instead of the shim's entries (Claude Code). */
  readonly http?: HttpHooks
  /** Checks of the file as setup will write it: what would keep the agent from running hookd's entries. */
  check?(port: SettingsPort, context: CheckContext): Promise<string[]>
  /** Code of the agent's own that setup and init run: Codex's trust of hookd's entries. */
  readonly trust?: AgentTrust
  /**
   * Hooks kept as one script per event in a folder (Cline's), not as entries of one settings file:
   * `committed` and `user` then name the folder, which setup reads and writes as settings/script-folder.ts says.
   */
  readonly scripts?: ScriptFolder
  /** Why `hookd init` writes no committed entries for this agent, and what to run instead (OpenCode's plugin, Cline's scripts). */
  readonly noInit?: string
}

/** An agent's own http hook entries, which hold the token (`hookd setup claude-code --transport http`). */
export interface HttpHooks {
  /** The entry posting `event` to `url` with `token`; `timeoutS` is the agent's own wait. */
  entry(event: string, url: string, token: string, timeoutS: number): Record<string, unknown>
  /** Events the agent never posts to an http hook, with what to do instead. */
  readonly unsent: Readonly<Record<string, string>>
}

export interface CheckContext {
  /** The settings as they will be written. */
  config: Config
  file: string
  /** The route the entries post to. */
  url: string
  transport: 'command' | 'http'
  home: string | undefined
  /** The project whose file is written; undefined for the user's own file. */
  project: string | undefined
}

/** One of hookd's entries as setup placed it. */
export interface Placed extends Placement {
  position: Position
}

/** An agent's trust in hookd's entries, which the agent keeps in a file of its own (Codex's config.toml). */
export interface AgentTrust {
  /** What `hookd setup` does besides writing the entries, and what `hookd init --trust` does, for their help. */
  readonly help: { readonly setup: string; readonly init: string }
  /**
   * `hookd setup`: trust hookd's entries as `placed` in `hooksFile` (none: take the trust out). The
   * changes to write, and the lines to show.
   */
  setup(port: SettingsPort, hooksFile: string, placed: readonly Placed[]): Promise<{ changes: FileChange[]; lines: string[] }>
  /** Setup's warning when other entries of `events` moved in `file`: the agent trusts by place. */
  moved(file: string, events: readonly string[]): string
  /**
   * `hookd init --trust` (and `--remove`, with `config` undefined): trust the entries `hookd init` wrote
   * in the project's committed `hooksFile`, refusing every other. The changes, the lines to show, and
   * warnings.
   */
  init(port: SettingsPort, project: string, hooksFile: string, config: Config | undefined, format: SettingsFormat): Promise<{ changes: FileChange[]; lines: string[]; warnings: string[] }>
}

/**
 * Where the shim's refusal puts the reason: `REASON` in `stdout` stands for it, as a JSON string's
 * content. Without `stdout`, the reason goes to stderr.
 */
export const REASON = '<reason>'

export interface ShimForm {
  /** How the shim refuses a call when it cannot get hookd's answer: its exit code, and what it prints. */
  readonly refusal: { readonly exit: number; readonly stdout?: string }
  /** The agent's own variable naming the project it runs in, where it sets one for its hooks. */
  readonly projectVariable?: string
  /** For an agent that names no project: the file whose nearest folder up from the hook's is the project. */
  readonly projectMarker?: string
  /** docs/agents.md's row for the shim's refusal: the form, and why this one (measured with the real CLI unless noted). */
  readonly docs: { readonly form: string; readonly why: string }
}

/** The rows of docs/agents.md's "What each agent can express", in order: what each agent's column says. */
export const EXPRESSED = [
  { key: 'refuse', row: 'refuse a tool call (`allow: false`)' },
  { key: 'rewriteArguments', row: 'rewrite its arguments' },
  { key: 'rewriteResult', row: 'rewrite its result (afterToolExecute)' },
  { key: 'ask', row: 'ask the human (`ctx.confirm`)' },
  { key: 'run', row: 'beforeRun / afterRun' },
  { key: 'promptContext', row: 'beforeModelRequest (prompt context)' },
  { key: 'redact', row: 'afterModelResponse (`redact`)' },
  { key: 'defer', row: 'defer a call (`defer: true`)' },
  { key: 'permission', row: 'answer a permission dialog (`permission:request`)' },
  { key: 'model', row: "the model's request and response (`model:request`, `model:response`)" },
  { key: 'toolList', row: 'narrow the tool list (`tools:select`)' },
  { key: 'subagents', row: "subagents (`subagent:start`, `subagent:stop`, their calls named)" },
  { key: 'toolConditions', row: 'called only for the tools a hook lists (hook.json `tools`)' },
  { key: 'agentPoints', row: 'compaction, settings, notices, files (`compact:*`, `config:change`, `notification`, `file:changed`)' },
  { key: 'failsClosed', row: 'fails closed when hookd is down' },
  { key: 'tested', row: 'tested against the real agent' },
] as const

export type Expresses = { readonly [K in (typeof EXPRESSED)[number]['key']]: string } & {
  /** What a hook's `defer` becomes (issue 30's matrix; not yet a row of the table). */
  readonly defer?: string
  /** The agent's permission dialog, as permission:request. */
  readonly permissionDecisions?: string
  /** Subagents: their tool calls' `call.subagent`, subagent:start / subagent:stop. */
  readonly subagents?: string
  /** How setup keeps calls no hook cares about from reaching hookd (hook.json "tools"). */
  readonly toolConditions?: string
}
