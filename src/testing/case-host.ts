/**
 * The host side of one test case: the capability handlers a session gets, built from what the case
 * sets up (a temporary workdir with its files, confirm answers in order, canned HTTP responses), and
 * what they saw (the calls that reached the host, the log lines, pushed diagnostics). Files are the host
 * library's default handlers in the case's workdir; every call is recorded as the host library receives
 * it, whatever the capability.
 */
import { CapabilityError, type CapabilityHandlers, type FetchInit } from '../host/capabilities.js'
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
      ...(ctx.onError !== undefined ? { onError: ctx.onError } : {}),
      capabilities: this.handlers(),
    }
  }

  /** The case's answers to confirm and fetch; every call is recorded as it reaches the host (onCall). */
  handlers(): CapabilityHandlers {
    return {
      onCall: (call) => void this.calls.push({ capability: call.capability, args: [...call.args], hook: call.origin.hook }),
      confirm: (message) => {
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
      fetch: async (url, init) => this.respond(url, init),
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
