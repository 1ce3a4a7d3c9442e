/**
 * The host side of one test case: the capability handlers a session gets, built from what the case
 * sets up (a temporary workdir with its files, confirm answers in order, canned HTTP responses), and
 * what they saw (the calls that reached the host, the log lines, pushed diagnostics). The handlers are
 * the host library's own (`workdirFiles`), wrapped to record each call.
 */
import type { CallOrigin, CapabilityHandlers, FetchInit, FileHandlers } from '../host/capabilities.js'
import { CapabilityError, workdirFiles } from '../host/capabilities.js'
import type { SessionOptions } from '../host/session-options.js'
import { originOf, quoted } from '../protocol/capabilities.js'
import type { Diagnostic } from '../protocol/diagnostic.js'
import type { LogLineData } from '../protocol/wire.js'
import { type CaseCtx, type HttpResponse, httpKey } from './case-file.js'

/** A capability call as the host received it. */
export interface SeenCall {
  capability: string
  args: unknown[]
  hook: string
}

export class CaseHost {
  readonly calls: SeenCall[] = []
  readonly logs: LogLineData[] = []
  /** Diagnostics pushed outside the point result (a hook that failed to load, at open). */
  readonly pushed: Diagnostic[] = []
  /** What the case failed to provide (a confirm with no answer left, a fetch with no response). */
  readonly problems: string[] = []
  private confirmsAsked = 0

  constructor(
    private readonly ctx: CaseCtx,
    private readonly workdir: string,
  ) {}

  /** The session options for the case's hooks: its ctx, its policy, and these handlers. */
  sessionOptions(hooks: string[], sessionId: string): SessionOptions {
    const { ctx } = this
    const origins = ctx.policy.httpOrigins ?? [...new Set(Object.keys(ctx.http).map((key) => originOf(httpKey(key)?.url ?? '') ?? ''))].filter(Boolean)
    const policy: NonNullable<SessionOptions['policy']> = { httpOrigins: origins, env: Object.keys(ctx.env) }
    if (ctx.policy.file !== undefined) policy.file = ctx.policy.file
    if (ctx.policy.confirm !== undefined) policy.confirm = ctx.policy.confirm
    return {
      sessionId: ctx.session.id ?? sessionId,
      agentId: ctx.session.agentId ?? 'hookd-test',
      modelId: ctx.session.modelId ?? 'test-model',
      hooks,
      workdir: this.workdir,
      interactive: ctx.interactive ?? ctx.confirm.length > 0,
      autoApprove: ctx.autoApprove,
      policy,
      env: ctx.env,
      capabilities: this.handlers(),
    }
  }

  private handlers(): CapabilityHandlers {
    const files = workdirFiles(this.workdir)
    const record = (capability: string, args: unknown[], origin: CallOrigin): void => {
      this.calls.push({ capability, args, hook: origin.hook })
    }
    const recorded: FileHandlers = {
      read: (path, origin) => (record('file.read', [path], origin), files.read(path, origin)),
      write: (path, text, origin) => (record('file.write', [path, text], origin), files.write(path, text, origin)),
      append: (path, text, origin) => (record('file.append', [path, text], origin), files.append(path, text, origin)),
      exists: (path, origin) => (record('file.exists', [path], origin), files.exists(path, origin)),
      list: (dir, origin) => (record('file.list', [dir], origin), files.list(dir, origin)),
    }
    return {
      file: recorded,
      confirm: (message, origin) => {
        record('confirm', [message], origin)
        const answer = this.ctx.confirm[this.confirmsAsked]
        this.confirmsAsked += 1
        if (answer === undefined) {
          this.problems.push(
            `ctx.confirm(${quoted(message.title)}) was asked ${this.confirmsAsked} ${this.confirmsAsked === 1 ? 'time' : 'times'}, but the case answers ${this.ctx.confirm.length}; add an answer to ctx.confirm (it was answered no)`,
          )
          return false
        }
        return answer
      },
      notify: (message, origin) => record('notify', [message], origin),
      fetch: async (url, init, origin) => {
        record('http.fetch', Object.keys(init).length ? [url, init] : [url], origin)
        return this.respond(url, init)
      },
      log: (line) => void this.logs.push(line),
      diagnostic: (d) => void this.pushed.push(d),
    }
  }

  private respond(url: string, init: FetchInit): { status: number; headers: Record<string, string>; body: string } {
    const method = (init.method ?? 'GET').toUpperCase()
    const found = this.response(method, url)
    if (!found) {
      this.problems.push(`the hook fetched ${method} ${url}, which the case does not answer; add "${method} ${url}" (or "${url}") to ctx.http`)
      throw new CapabilityError('failed', `ctx.http.fetch(${quoted(url)}) failed: the test case has no response for ${method} ${url}`)
    }
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(found.headers)) headers[name.toLowerCase()] = value
    let body = ''
    if (typeof found.body === 'string') body = found.body
    else if (found.body !== undefined) {
      body = JSON.stringify(found.body)
      headers['content-type'] ??= 'application/json'
    }
    return { status: found.status, headers, body }
  }

  private response(method: string, url: string): HttpResponse | undefined {
    let any: HttpResponse | undefined
    for (const [key, response] of Object.entries(this.ctx.http)) {
      const parsed = httpKey(key)
      if (!parsed || normalUrl(parsed.url) !== normalUrl(url)) continue
      if (parsed.method === method) return response
      if (parsed.method === undefined) any = response
    }
    return any
  }
}

/** "HTTPS://Example.com:443/a" and "https://example.com/a" are the same URL. */
function normalUrl(url: string): string {
  try {
    return new URL(url).href
  } catch {
    return url
  }
}
