/**
 * The host's dispatch: one handler per capability the host serves, keyed by its record's name
 * (src/protocol/capabilities.ts) and typed from it, so a capability without a handler, or one that takes
 * the wrong arguments, is a compile error; and the one function that serves a call through it. The host
 * session (session.ts, and with it `hookd test`) and the agents' front door
 * (src/sidecar/http/sidecar-run.ts) dispatch through here, with their own handlers.
 */
import {
  type CapabilityArgs,
  type CapabilityMessage,
  type CapabilityValue,
  type FetchInit as CallFetchInit,
  type HostCapabilityName,
  isHostCapabilityName,
  parseCapabilityArgs,
} from '../protocol/capabilities.js'
import type { CapabilityCode } from '../protocol/capability-errors.js'
import {
  type CallOrigin,
  CapabilityError,
  type CapabilityHandlers,
  type FetchInit,
  type FileHandlers,
  type Message,
  type ReceivedCall,
  allowlistedFetch,
  terminalConfirm,
  workdirFiles,
} from './capabilities.js'

/** One handler per capability the host serves: its validated arguments in, what the hook gets back out. */
export type CapabilityTable = {
  readonly [N in HostCapabilityName]: (args: CapabilityArgs<N>, origin: CallOrigin) => CapabilityValue<N> | Promise<CapabilityValue<N>>
}

/** The handlers a host serves with, none left to a default. */
export type ServingHandlers = Required<Pick<CapabilityHandlers, 'confirm' | 'notify' | 'fetch'>> & { file: FileHandlers }

/**
 * The table for `h`: the one place where a capability's name meets its handler. A confirm handler's
 * `'deferred'` reaches the hook as a yes; `deferred` (when given) is told of it first, and may refuse it
 * by throwing a CapabilityError.
 */
export function capabilityTable(h: ServingHandlers, deferred?: (origin: CallOrigin) => void): CapabilityTable {
  return {
    confirm: async ([message], origin) => {
      const answer = await h.confirm(shown(message), origin)
      if (answer !== 'deferred') return answer === true
      deferred?.(origin)
      return true
    },
    notify: async ([message], origin) => {
      await h.notify(shown(message), origin)
    },
    'file.read': ([path], origin) => h.file.read(path, origin),
    'file.write': ([path, text], origin) => h.file.write(path, text, origin),
    'file.append': ([path, text], origin) => h.file.append(path, text, origin),
    'file.exists': ([path], origin) => h.file.exists(path, origin),
    'file.list': ([dir], origin) => h.file.list(dir, origin),
    'http.fetch': ([url, init], origin) => h.fetch(url, fetchInit(init), origin),
  }
}

/** A host library session's handlers: the host's own, and the defaults for what it left out. */
export function servingHandlers(handlers: CapabilityHandlers, defaults: { workdir: string; httpOrigins: readonly string[] }): ServingHandlers {
  return {
    confirm: handlers.confirm ?? terminalConfirm,
    notify: handlers.notify ?? (() => {}),
    file: { ...workdirFiles(defaults.workdir), ...handlers.file },
    fetch: handlers.fetch ?? allowlistedFetch(defaults.httpOrigins),
  }
}

/** What serving a call came to: the value to answer with (null for nothing), or the error the hook gets. */
export type Served = { ok: true; value: unknown } | { ok: false; code: CapabilityCode; message: string }

/** A call to serve: its name and arguments as they arrived, and who made it. */
export interface CallToServe {
  capability: string
  args: unknown
  origin: CallOrigin
}

/**
 * Serves one call: a name the host serves, its arguments validated against the record, its handler
 * run (`onCall` told first). Never throws: a CapabilityError keeps its code, any other error is `failed`.
 */
export async function serveCall(table: CapabilityTable, call: CallToServe, onCall?: (call: ReceivedCall) => void): Promise<Served> {
  try {
    if (!isHostCapabilityName(call.capability)) throw new CapabilityError('invalid', `this host does not serve '${call.capability}'`)
    return { ok: true, value: (await run(table, call.capability, call.args, call.origin, onCall)) ?? null }
  } catch (err) {
    if (err instanceof CapabilityError) return { ok: false, code: err.code, message: err.message }
    return { ok: false, code: 'failed', message: err instanceof Error ? err.message : String(err) }
  }
}

async function run<N extends HostCapabilityName>(
  table: CapabilityTable,
  name: N,
  raw: unknown,
  origin: CallOrigin,
  onCall: ((call: ReceivedCall) => void) | undefined,
): Promise<CapabilityValue<N>> {
  const parsed = parseCapabilityArgs(name, raw)
  if (!parsed.success) throw new CapabilityError('invalid', `${name}: invalid arguments`)
  onCall?.({ capability: name, args: parsed.data, origin })
  return table[name](parsed.data, origin)
}

/** The message as handlers take it (a body only when there is one). */
function shown(message: CapabilityMessage): Message {
  return message.body === undefined ? { title: message.title } : { title: message.title, body: message.body }
}

/** The fetch options as handlers take them (only the fields the hook gave). */
function fetchInit(init: CallFetchInit | undefined): FetchInit {
  const out: FetchInit = {}
  if (init?.method !== undefined) out.method = init.method
  if (init?.headers !== undefined) out.headers = init.headers
  if (init?.body !== undefined) out.body = init.body
  return out
}
