/**
 * hookd's OpenCode plugin (`hookd-sandbox/opencode`, dist/agents/opencode/plugin.js): OpenCode loads it
 * in its own process from the `plugin` entry `hookd setup opencode` writes in opencode.json, with the
 * front door's route, the token's file, the wait and the events the hooks serve as its options. Each
 * event is posted to the route as the JSON opencode-dialect.ts reads, proved with the token the way
 * the shim proves its requests (src/sidecar/http/request-proof.ts: the token never crosses the
 * connection), and the answer is applied only when it proves it came from hookd:
 *
 *   tool.execute.before   a refusal throws (OpenCode fails the call, and the model reads the reason);
 *                         rewritten arguments replace the call's own; no answer, a stranger's answer
 *                         or none in time refuses too (the plugin fails closed at the gate)
 *   tool.execute.after    a rewritten result replaces the text the model reads
 *   the rest              observed: posted without waiting (OpenCode goes on at once), errors dropped;
 *                         OpenCode awaits the plugin's `dispose` as it exits, which waits for them
 *
 * OpenCode runs subagents as child sessions; the plugin keeps which session is whose child (from
 * `session.created`) so a subagent's calls name it and belong to the run of its root session.
 * It imports nothing but Node's built-ins (OpenCode runs it under Bun).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto'
import { lstat, readFile } from 'node:fs/promises'

/** What `hookd setup opencode` puts in the plugin entry's options. */
export interface HookdPluginOptions {
  /** The front door's route, e.g. http://127.0.0.1:7390/opencode/guard. */
  url: string
  /** The file holding the token the requests are proved with. */
  tokenFile: string
  /** Seconds to wait for hookd's answer. */
  timeoutS: number
  /** The events the hooks serve (opencode-dialect.ts EVENTS); none listed: every one. */
  events?: string[]
}

type Json = Record<string, unknown>
type Hook = (input: Json, output: Json) => Promise<void>
type BusHook = (arg: { event: { type: string; properties?: Json } }) => Promise<void>
interface Hooks {
  event?: BusHook
  dispose?: () => Promise<void>
  [hook: string]: Hook | BusHook | (() => Promise<void>) | undefined
}

interface PluginInput {
  directory: string
}

const isItem = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v)
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex')
const hmac = (key: Buffer, text: string): string => createHmac('sha256', key).update(text, 'utf8').digest('hex')

/** Why the options cannot be used, or undefined. */
function problemOf(options: unknown): string | undefined {
  if (!isItem(options)) return 'the plugin entry has no options: run hookd setup opencode again'
  if (typeof options.url !== 'string' || !/^http:\/\/[^/]+\/opencode\/\S+$/.test(options.url)) return "the plugin's url is not a route of hookd's front door (http://HOST:PORT/opencode/HOOKS)"
  if (typeof options.tokenFile !== 'string' || !options.tokenFile.startsWith('/')) return "the plugin's tokenFile is not an absolute path"
  if (typeof options.timeoutS !== 'number' || !(options.timeoutS > 0 && options.timeoutS <= 600)) return "the plugin's timeoutS is not a number of seconds (1-600)"
  if (options.events !== undefined && !(Array.isArray(options.events) && options.events.every((e) => typeof e === 'string'))) return "the plugin's events is not a list of event names"
  return undefined
}

/** The token, from a file as the shim takes it: a regular file of this user's, closed to others, not a link. */
async function readToken(file: string): Promise<string> {
  const info = await lstat(file).catch(() => undefined)
  if (!info) throw new Error(`cannot read hookd's token from ${file}`)
  if (info.isSymbolicLink()) throw new Error(`the token file ${file} is a symbolic link; name the file itself (hookd's state files are never links)`)
  if (!info.isFile()) throw new Error(`cannot read hookd's token from ${file} (not a regular file)`)
  if (process.getuid && info.uid !== process.getuid()) throw new Error(`the token file ${file} belongs to another user; use the token file hookd made for you`)
  if ((info.mode & 0o077) !== 0) throw new Error(`the token file ${file} can be read by other users; run 'chmod 600 ${file}'`)
  const token = (await readFile(file, 'utf8').catch(() => '')).trim()
  if (!token) throw new Error(`cannot read hookd's token from ${file}`)
  return token
}

/** Posts `body` to hookd and returns its proved answer (undefined for no opinion); throws saying why there is none. */
async function ask(options: HookdPluginOptions, body: Json): Promise<Json | undefined> {
  const token = await readToken(options.tokenFile)
  const key = createHash('sha256').update(token, 'utf8').digest()
  const text = JSON.stringify(body)
  const url = new URL(options.url)
  const ts = Math.floor(Date.now() / 1000)
  const nonce = randomBytes(16).toString('hex')
  const bodyHash = sha256(text)
  const mac = hmac(key, `hookd-request/1\n${ts}\n${nonce}\nPOST\n${url.pathname}${url.search}\n${bodyHash}`)
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { authorization: `hookd-hmac ts=${ts},nonce=${nonce},body=${bodyHash},mac=${mac}`, 'content-type': 'application/json' },
      body: text,
      signal: AbortSignal.timeout(options.timeoutS * 1000),
    })
  } catch (err) {
    throw new Error(`cannot reach hookd at ${url.origin} (${err instanceof Error ? err.message : String(err)}): is 'hookd serve --http' running?`)
  }
  const answer = Buffer.from(await response.arrayBuffer())
  const expected = hmac(key, `hookd-answer/1\n${nonce}\n${response.status}\n${sha256(answer)}`)
  if (response.headers.get('x-hookd-proof') !== expected) {
    if (response.status === 401) throw new Error(`hookd at ${url.origin} refused the token (HTTP 401): check the tokenFile of the plugin entry`)
    throw new Error(`the answer from ${url.origin} does not prove it came from hookd (HTTP ${response.status}): something other than hookd may be listening on that port`)
  }
  if (response.status === 204) return undefined
  const parsed: unknown = answer.length ? JSON.parse(answer.toString('utf8')) : undefined
  if (response.status !== 200) throw new Error(`hookd answered ${response.status}: ${isItem(parsed) && typeof parsed.error === 'string' ? parsed.error : 'no reason given'}`)
  return isItem(parsed) ? parsed : undefined
}

/** Replaces the keys of `target` with those of `source`, in place (OpenCode runs the object it passed). */
function replaceKeys(target: Json, source: Json): void {
  for (const key of Object.keys(target)) delete target[key]
  Object.assign(target, source)
}

export const HookdPlugin = async (input: PluginInput, options?: unknown): Promise<Hooks> => {
  const problem = problemOf(options)
  // Loaded but unusable: every tool call is refused, saying why, rather than run unguarded.
  if (problem !== undefined) {
    return {
      'tool.execute.before': async () => {
        throw new Error(`hookd: ${problem}`)
      },
    }
  }
  const o = options as HookdPluginOptions
  const wanted = (event: string): boolean => o.events === undefined || o.events.includes(event)
  const directory = input.directory
  /** Each child session's parent and the agent it runs (from session.created and chat.message). */
  const parents = new Map<string, string>()
  const agents = new Map<string, string>()
  const rootOf = (session: string): string => {
    let at = session
    for (let i = 0; i < 64 && parents.has(at); i++) at = parents.get(at) as string
    return at
  }
  const sessionFields = (sessionID: string): Json => {
    const root = rootOf(sessionID)
    const agent = agents.get(sessionID)
    return { sessionID, directory, ...(root !== sessionID ? { rootSessionID: root, subagent: { id: sessionID, ...(agent ? { type: agent } : {}) } } : {}) }
  }
  // Observed events are posted without waiting; OpenCode awaits `dispose` as it exits, which lets the
  // posts still under way (the last session.idle) arrive, within the wait.
  const pending = new Set<Promise<unknown>>()
  const observe = (body: Json): void => {
    const post = ask(o, body).catch(() => undefined)
    pending.add(post)
    void post.finally(() => pending.delete(post))
  }
  const hooks: Hooks = {
    dispose: async () => {
      let timer: NodeJS.Timeout | undefined
      let late = false
      const wait = new Promise<void>((done) => (timer = setTimeout(() => ((late = true), done()), o.timeoutS * 1000)))
      // Posts that start meanwhile (an event published as OpenCode shuts down) are waited for too.
      while (pending.size && !late) await Promise.race([Promise.allSettled([...pending]), wait])
      clearTimeout(timer)
    },
  }
  if (wanted('tool.execute.before')) {
    hooks['tool.execute.before'] = async (hookInput, output) => {
      const args = isItem(output.args) ? output.args : {}
      let answer: Json | undefined
      try {
        answer = await ask(o, { event: 'tool.execute.before', ...sessionFields(String(hookInput.sessionID)), tool: hookInput.tool, callID: hookInput.callID, args })
      } catch (err) {
        throw new Error(`hookd: ${err instanceof Error ? err.message : String(err)}`)
      }
      if (answer?.block === true) throw new Error(typeof answer.reason === 'string' ? answer.reason : 'refused by hookd')
      if (isItem(answer?.args) && isItem(output.args)) replaceKeys(output.args, answer.args)
    }
  }
  if (wanted('tool.execute.after')) {
    hooks['tool.execute.after'] = async (hookInput, output) => {
      const body = { event: 'tool.execute.after', ...sessionFields(String(hookInput.sessionID)), tool: hookInput.tool, callID: hookInput.callID, args: isItem(hookInput.args) ? hookInput.args : {}, output: typeof output.output === 'string' ? output.output : '' }
      // Only a rewrite changes anything here: an answer that cannot be had leaves the result as it is.
      const answer = await ask(o, body).catch(() => undefined)
      if (typeof answer?.output === 'string') output.output = answer.output
    }
  }
  // chat.message tells which agent a session runs (a subagent's type) even when no hook listens.
  hooks['chat.message'] = async (hookInput, output) => {
    const session = String(hookInput.sessionID)
    if (typeof hookInput.agent === 'string') agents.set(session, hookInput.agent)
    if (!wanted('chat.message')) return
    const parts = Array.isArray(output.parts) ? output.parts : []
    const prompt = parts.map((p: unknown) => (isItem(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('')
    observe({ event: 'chat.message', ...sessionFields(session), prompt })
  }
  if (wanted('experimental.session.compacting')) {
    hooks['experimental.session.compacting'] = async (hookInput: Json) => observe({ event: 'experimental.session.compacting', ...sessionFields(String(hookInput.sessionID)) })
  }
  hooks.event = async ({ event }: { event: { type: string; properties?: Json } }) => {
    const props = isItem(event.properties) ? event.properties : {}
    const info = isItem(props.info) ? props.info : {}
    if (event.type === 'session.created' && typeof info.id === 'string' && typeof info.parentID === 'string') parents.set(info.id, info.parentID)
    if (!wanted(event.type)) return
    const session = typeof props.sessionID === 'string' ? props.sessionID : typeof info.id === 'string' ? info.id : undefined
    if (session === undefined) return
    if (event.type === 'session.created' || event.type === 'session.idle' || event.type === 'session.compacted' || event.type === 'session.error') {
      const error = isItem(props.error) ? props.error : undefined
      observe({ event: event.type, ...sessionFields(session), ...(error ? { error: { name: String(error.name ?? '') } } : {}) })
    }
  }
  return hooks
}

export default HookdPlugin
