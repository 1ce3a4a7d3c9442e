/**
 * Remote hooks: hooks written in any language, served over gRPC by their own process (the `Hook`
 * service of proto/hookd/v1/hook.proto), declared by a hook folder whose hook.json says
 * `{"remote": "unix:PATH"}` or `{"remote": "HOST:PORT"}`.
 *
 * The registry loads a remote hook by asking its `Describe` (what points it serves, its version) and
 * serves it like a sandboxed hook; a session's chain runs it through `RemoteHook.invoke`, which takes
 * the same request a sandbox worker does (see remote-invocation.ts). A remote hook that cannot be
 * described is a `load` failure, retried with backoff (1 s doubling to 30 s) until it answers, so a
 * hook process that starts after hookd, or restarts, is picked up without touching its folder. An
 * invocation that finds the hook unreachable asks for such a retry too, so a redeployed hook's new
 * points and version are read again.
 *
 * Unlike a sandboxed hook, a remote hook runs with its own privileges and keeps whatever state it
 * likes between calls: hookd can bound its time and check what it asks of the host, not what it does.
 */
import { clip, quoted } from '../../../protocol/text.js'
import * as grpc from '@grpc/grpc-js'
import { backoffDelay } from '../../../protocol/backoff.js'
import { PROTOCOL_VERSION } from '../../../protocol/version.js'
import { isPointName } from '../../../protocol/points/points.js'
import type { RemoteAddress } from './remote-address.js'
import { MAX_REMOTE_MESSAGE_BYTES, describeResponseWire, hookService, toDescribeRequest } from './remote-wire.js'
import { type RunClient, grpcDetails, runRemote } from './remote-invocation.js'
import type { InvocationReport, InvocationRequest } from '../hook-runner.js'
import { issueText } from '../../../protocol/issue-text.js'

/** How long hookd waits for a remote hook's Describe. */
export const DESCRIBE_TIMEOUT_MS = 5000
/** Describe retries: 1 s, doubling, up to every 30 s. */
const RETRY = { firstMs: 1000, maxMs: 30_000 }

interface HookClient extends grpc.Client, RunClient {
  Describe(
    request: unknown,
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (err: grpc.ServiceError | null, response?: unknown) => void,
  ): void
}

let Constructor: (new (address: string, credentials: grpc.ChannelCredentials, options?: grpc.ClientOptions) => HookClient) | undefined

function makeClient(target: string): HookClient {
  Constructor ??= grpc.makeGenericClientConstructor(hookService(), 'Hook') as unknown as typeof Constructor
  const C = Constructor as NonNullable<typeof Constructor>
  return new C(target, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_REMOTE_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_REMOTE_MESSAGE_BYTES,
  })
}

/** What Describe told, in the shape of a sandbox load's outcome (exports = the points served). */
export type DescribeOutcome =
  | { ok: true; exports: string[]; version: string; description: string }
  | { ok: false; message: string }

/** A loaded remote hook, as a LoadedHook carries it. */
export class RemoteHook {
  constructor(
    readonly address: RemoteAddress,
    private readonly client: HookClient,
    private readonly onUnreachable: () => void,
  ) {}

  /** Runs one invocation remotely; the same request and report as WorkerPool.invoke. Never rejects. */
  async invoke(request: InvocationRequest): Promise<InvocationReport> {
    const report = await runRemote(this.client, this.address.text, request)
    if (!report.outcome.ok && report.outcome.kind === 'unavailable') this.onUnreachable()
    return report
  }
}

interface RetryState {
  attempt: number
  timer?: NodeJS.Timeout | undefined
  lastMessage?: string
}

/**
 * The registry's remote side: one gRPC client per address (hooks that share a server share it), the
 * Describe call, and the retry schedule of remote hooks that could not be described.
 */
export class RemoteHooks {
  private readonly clients = new Map<string, HookClient>()
  private readonly retries = new Map<string, RetryState>()
  private closed = false

  /**
   * @param suggest the known point closest to a misspelt name, for messages
   * @param reload  loads the hook folder again (the registry's forced apply); used by retries. Absent:
   *                no retries (`hookd check`, which loads each hook once)
   */
  constructor(
    private readonly suggest: (name: string) => string | undefined,
    private readonly reload?: (name: string) => Promise<unknown>,
  ) {}

  /** True when a remote hook that cannot be described is asked again later. */
  get retrying(): boolean {
    return this.reload !== undefined
  }

  /** The RemoteHook for a folder, sharing the address's client. */
  hook(name: string, address: RemoteAddress): RemoteHook {
    return new RemoteHook(address, this.client(address), () => this.unreachable(name))
  }

  /** Asks the remote hook what it serves. Never rejects. */
  async describe(name: string, address: RemoteAddress): Promise<DescribeOutcome> {
    const client = this.client(address)
    const where = `the remote hook at ${address.text}`
    if (this.closed) return { ok: false, message: 'the sidecar is shutting down' }
    const raw = await new Promise<{ ok: true; value: unknown } | { ok: false; err: grpc.ServiceError }>((resolve) => {
      try {
        client.Describe(toDescribeRequest(PROTOCOL_VERSION, name), new grpc.Metadata(), { deadline: Date.now() + DESCRIBE_TIMEOUT_MS }, (err, res) =>
          resolve(err ? { ok: false, err } : { ok: true, value: res }),
        )
      } catch (err) {
        resolve({ ok: false, err: Object.assign(new Error(String(err)), { code: grpc.status.UNAVAILABLE, details: String(err), metadata: new grpc.Metadata() }) })
      }
    })
    if (!raw.ok) {
      const { code } = raw.err
      const why = grpcDetails(raw.err)
      if (code === grpc.status.UNAVAILABLE) {
        return { ok: false, message: `${where} cannot be reached (${why}); start its server, or fix "remote" in hook.json` }
      }
      if (code === grpc.status.DEADLINE_EXCEEDED) {
        return { ok: false, message: `${where} did not answer Describe within ${DESCRIBE_TIMEOUT_MS} ms; check that its server is up and not stuck` }
      }
      if (code === grpc.status.UNIMPLEMENTED) {
        return { ok: false, message: `the server at ${address.text} does not implement hookd.v1.Hook/Describe; serve the Hook service of proto/hookd/v1/hook.proto there` }
      }
      if (code === grpc.status.NOT_FOUND) {
        return { ok: false, message: `${where} does not serve a hook named '${name}' (${why}); rename the folder or serve that name` }
      }
      return { ok: false, message: `${where} failed its Describe: ${grpc.status[code] ?? code}: ${why}` }
    }
    const parsed = describeResponseWire.safeParse(raw.value)
    if (!parsed.success) {
      return { ok: false, message: `${where} sent an invalid ${issueText(parsed.error, 'DescribeResponse')}` }
    }
    const d = parsed.data
    if (d.protocolVersion !== PROTOCOL_VERSION) {
      return { ok: false, message: `${where} speaks protocol version ${d.protocolVersion}; this hookd speaks version ${PROTOCOL_VERSION}` }
    }
    const unknown = d.points.filter((p) => !isPointName(p))
    if (unknown.length) {
      // At most five are named (each suggestion costs an edit distance per point in the catalog).
      const named = unknown.slice(0, 5).map((p) => {
        const near = this.suggest(p)
        return near ? `${quoted(p, 64)} (did you mean '${near}'?)` : quoted(p, 64)
      })
      const more = unknown.length > 5 ? ` and ${unknown.length - 5} more` : ''
      return { ok: false, message: `${where} describes unknown point${unknown.length > 1 ? 's' : ''} ${named.join(', ')}${more}; list only hook points in DescribeResponse.points` }
    }
    if (d.points.length === 0) {
      return { ok: false, message: `${where} describes no points; list at least one in DescribeResponse.points, e.g. "beforeToolExecute"` }
    }
    return { ok: true, exports: [...new Set(d.points)], version: d.version, description: d.description }
  }

  /**
   * A remote hook failed to load: schedule a retry (backoff). Returns true when the failure says the
   * same as the previous one, so that the registry does not announce it again on every retry.
   */
  failed(name: string, message: string): boolean {
    const state = this.retries.get(name) ?? { attempt: 0 }
    const repeat = state.lastMessage === message
    state.lastMessage = message
    this.retries.set(name, state)
    this.schedule(name, state)
    return repeat
  }

  /** The folder was loaded, edited, removed or turned into a sandboxed hook: forget its retries. */
  settled(name: string): void {
    const state = this.retries.get(name)
    if (state?.timer) clearTimeout(state.timer)
    this.retries.delete(name)
  }

  /** Closes every client and stops retrying. */
  close(): void {
    this.closed = true
    for (const state of this.retries.values()) if (state.timer) clearTimeout(state.timer)
    this.retries.clear()
    for (const client of this.clients.values()) client.close()
    this.clients.clear()
  }

  private unreachable(name: string): void {
    const state = this.retries.get(name) ?? { attempt: 0 }
    this.retries.set(name, state)
    this.schedule(name, state)
  }

  private schedule(name: string, state: RetryState): void {
    const reload = this.reload
    if (this.closed || state.timer || !reload) return
    const delay = backoffDelay(RETRY, state.attempt)
    state.attempt += 1
    state.timer = setTimeout(() => {
      state.timer = undefined
      if (this.closed || this.retries.get(name) !== state) return
      void reload(name).catch(() => {
        // The registry reports load failures itself; a retry has nothing to add.
      })
    }, delay)
    state.timer.unref()
  }

  private client(address: RemoteAddress): HookClient {
    let client = this.clients.get(address.target)
    if (!client) {
      client = makeClient(address.target)
      // After close, a client is still handed out, closed: its calls fail as unavailable.
      if (this.closed) client.close()
      else this.clients.set(address.target, client)
    }
    return client
  }
}
