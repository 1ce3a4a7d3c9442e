/**
 * `hookd serve --hooks-from URL`: the hooks come from a signed bundle (bundle-format.ts) that the
 * sidecar polls for, by ETag, and swaps in whole between calls (Registry.replaceRoot).
 *
 * A bundle is served only after every check: the download bounded (bundle-fetch.ts), the signature by
 * a trusted key over its bytes, every path and every hook's digest against the bundle's lock, its
 * files written to the state folder (bundle-store.ts) and read back by the registry as it reads any
 * hook folder, each read's digest compared with the lock again, and every hook loaded. Any failure
 * (the source is down, a bad signature, a truncated download, a hook that does not load) keeps the
 * revision serving now, and is reported once per distinct failure. At start the last good bundle on
 * disk is verified again and served, so a sidecar restarted while the source is down serves what it
 * served before.
 */
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import type { Registry } from '../hooks/registry.js'
import type { TrustedKeys } from '../pinning/signing.js'
import { BUNDLE_MAX_BYTES, openBundle } from './bundle-format.js'
import { fetchBundle, sourceProblem } from './bundle-fetch.js'
import { BundleStore } from './bundle-store.js'

export interface HooksFromOptions {
  url: string
  /** The state folder that keeps the last good bundles (made 0700 when missing). */
  stateDir: string
  trustedKeys: TrustedKeys
  /** How often the source is asked for a new revision, ms. Default 30000. */
  pollMs?: number
  /** Default BUNDLE_MAX_BYTES. */
  maxBytes?: number
  /** The deadline of one fetch, ms. Default 20000. */
  timeoutMs?: number
}

export type PollOutcome = { kind: 'unchanged' } | { kind: 'updated'; revision: string } | { kind: 'failed'; message: string }

export class BundleSource {
  private etag: string | undefined
  private timer: NodeJS.Timeout | undefined
  private polling: Promise<PollOutcome> | undefined
  private lastFailure: string | undefined
  private closed = false

  private constructor(
    private readonly registry: Registry,
    private readonly store: BundleStore,
    private readonly options: HooksFromOptions,
    private readonly report: (line: string) => void,
    private readonly served: (revision: string) => void,
  ) {}

  /** An empty folder in the state folder: the registry's root until a revision serves. */
  static async emptyRoot(stateDir: string): Promise<string> {
    const store = await BundleStore.open(stateDir)
    const root = join(store.path, 'none')
    await mkdir(root, { recursive: true, mode: 0o700 })
    return root
  }

  /** Checks the options, serves the last good bundle on disk (verified again), polls once, then keeps polling. */
  static async start(registry: Registry, options: HooksFromOptions, report: (line: string) => void, served: (revision: string) => void): Promise<BundleSource> {
    const problem = sourceProblem(options.url)
    if (problem) throw new HookdError('invalid-argument', `--hooks-from: ${problem}`)
    const source = new BundleSource(registry, await BundleStore.open(options.stateDir), options, report, served)
    await source.restore()
    await source.poll()
    source.timer = setInterval(() => void source.poll(), options.pollMs ?? 30_000)
    source.timer.unref()
    return source
  }

  get revision(): string | undefined {
    return this.registry.revision
  }

  /** Asks the source once (a poll already running is joined). */
  poll(): Promise<PollOutcome> {
    this.polling ??= this.pollOnce().finally(() => {
      this.polling = undefined
    })
    return this.polling
  }

  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.timer)
    await this.polling
  }

  private get maxBytes(): number {
    return this.options.maxBytes ?? BUNDLE_MAX_BYTES
  }

  private async restore(): Promise<void> {
    const kept = await this.store.current(this.maxBytes)
    if (!kept) return
    const opened = openBundle(kept.bytes, this.options.trustedKeys, this.maxBytes)
    if (!opened.ok) {
      this.report(`the last good bundle in ${this.store.path} does not verify any more, so it is not served: ${opened.message}`)
      return
    }
    const folder = await this.store.write(kept.bytes, opened.bundle)
    const problems = await this.registry.replaceRoot(folder, opened.bundle.revision, opened.bundle.digests)
    if (problems.length) {
      this.report(`the last good bundle (revision ${opened.bundle.revision}) does not load: ${problems[0]?.message}`)
      return
    }
    this.served(opened.bundle.revision)
    this.report(`serving revision ${opened.bundle.revision} of the hooks bundle, kept from before the restart (signed by ${opened.bundle.key}); asking ${this.options.url} for a newer one`)
  }

  private async pollOnce(): Promise<PollOutcome> {
    if (this.closed) return { kind: 'unchanged' }
    const fetched = await fetchBundle(this.options.url, { maxBytes: this.maxBytes, timeoutMs: this.options.timeoutMs ?? 20_000, etag: this.etag })
    if (fetched.kind === 'unchanged') return fetched
    if (fetched.kind === 'failed') return this.failed(fetched.message)
    const opened = openBundle(fetched.bytes, this.options.trustedKeys, this.maxBytes)
    if (!opened.ok) return this.failed(opened.message)
    const { bundle } = opened
    if (bundle.revision === this.registry.revision) {
      this.etag = fetched.etag
      return { kind: 'unchanged' }
    }
    let folder: string
    try {
      folder = await this.store.write(fetched.bytes, bundle)
    } catch (err) {
      return this.failed(`cannot keep revision ${bundle.revision} in ${this.store.path}: ${(err as Error).message}`)
    }
    if (this.closed) return { kind: 'unchanged' }
    const problems = await this.registry.replaceRoot(folder, bundle.revision, bundle.digests)
    if (problems.length) return this.failed(`${problems.map((p) => p.message).join('; ')}`)
    await this.store.makeCurrent(folder).catch((err: unknown) => this.report(`revision ${bundle.revision} serves, but cannot be kept for a restart: ${(err as Error).message}`))
    this.etag = fetched.etag
    this.lastFailure = undefined
    this.served(bundle.revision)
    this.report(`serving revision ${bundle.revision} of the hooks bundle from ${this.options.url} (signed by ${bundle.key}, ${bundle.digests.size} hooks)`)
    return { kind: 'updated', revision: bundle.revision }
  }

  /** A failure: reported once until another one (or a success) comes; the revision serving stays. */
  private failed(message: string): PollOutcome {
    if (message !== this.lastFailure) {
      const serving = this.registry.revision
      this.report(`the hooks bundle from ${this.options.url} is not taken: ${message}; ${serving !== undefined ? `still serving revision ${serving}` : 'no revision serves yet'}`)
    }
    this.lastFailure = message
    return { kind: 'failed', message }
  }
}
