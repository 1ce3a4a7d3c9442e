/**
 * Remote hooks: a folder whose hook.json names a server (`"remote": "unix:PATH"` or `"HOST:PORT"`) of
 * the Hook service (runners/remote/). Loading one asks the server what it serves (Describe); the
 * address is checked against the tenant's allowance before anything dials it. A server that cannot be
 * described is asked again later (remote-hooks.ts), which reloads the folder as if it had changed.
 */
import { join } from 'node:path'
import { isPointName } from '../../../protocol/points/points.js'
import { type RemoteAddress, remoteAddress } from '../../runners/remote/remote-address.js'
import type { RemoteAllow } from '../../runners/remote/remote-allow.js'
import { RemoteHooks } from '../../runners/remote/remote-hooks.js'
import type { HookFiles } from '../hook-folder.js'
import { closestPoint, exportLine, versionOf } from '../hook-files.js'
import { type HookKind, type HookSettings, type LoadResult, type LoadedHook, editFailure } from './hook-kind.js'

export interface RemoteOptions {
  /**
   * Which remote-hook addresses this registry's folders may name (a tenant's `remoteHooks`,
   * remote-allow.ts). A refused address is a `load` failure and is never contacted. Absent: any.
   */
  allowRemote?: RemoteAllow
  /** Ask a remote hook that could not be described again later (1 s doubling to 30 s). Default true. */
  retryRemotes?: boolean
}

export class RemoteKind implements HookKind {
  /** Clients of remote hooks and their Describe retries. */
  private readonly remotes: RemoteHooks

  /** `reload`: loads a hook's folder again although its files are the same (a retry). */
  /** `root`: the registry's root now (a bundle swap changes it). */
  constructor(
    private readonly root: () => string,
    private readonly options: RemoteOptions,
    reload: (name: string) => Promise<unknown>,
  ) {
    this.remotes = new RemoteHooks(closestPoint, options.retryRemotes === false ? undefined : reload)
  }

  /** A folder whose hook.json has "remote". */
  claims(_files: HookFiles, settings: HookSettings): boolean {
    return settings.remote !== undefined
  }

  async load(files: HookFiles, settings: HookSettings): Promise<LoadResult> {
    const { name } = files
    const filename = `${name}/hook.json`
    const remoteLine = exportLine(files.configText ?? '', '"remote"')
    let address: RemoteAddress
    try {
      address = remoteAddress(settings.remote ?? '', join(this.root(), name, 'hook.json'))
    } catch (err) {
      return editFailure((err as Error).message, filename, remoteLine)
    }
    if (files.source !== undefined) {
      return editFailure(
        `hook.json declares a remote hook, and ${name}/index.js exists too; a hook is either sandboxed (index.js) or remote (hook.json "remote"): remove one`,
        filename,
      )
    }
    const refused = this.options.allowRemote?.(address)
    // Refused before any connection: a tenant must not make the sidecar dial an address it chose.
    if (refused !== undefined) return { ok: false, message: refused, file: filename, line: remoteLine, remedy: undefined }
    const outcome = await this.remotes.describe(name, address)
    if (!outcome.ok) {
      const repeat = this.remotes.failed(name, outcome.message)
      // The message says what to do; a retry picks up a server that starts (or is fixed) later.
      const retry = 'hookd asks the server again after 1 s, then less often (up to every 30 s)'
      return { ok: false, message: outcome.message, file: filename, line: remoteLine, remedy: this.remotes.retrying ? { skipped: retry, stale: retry } : undefined, repeat }
    }
    this.remotes.settled(name)
    const hook: LoadedHook = {
      name,
      version: versionOf(`remote\0${address.text}\0${outcome.version}\0${outcome.exports.join(',')}`, files.configText),
      filename,
      source: '',
      config: settings.config,
      points: new Set(outcome.exports.filter(isPointName)),
      unknownExports: [],
      loadedAtMs: Date.now(),
      runner: this.remotes.hook(name, address),
      remote: address.text,
      onError: 'default',
      ...(outcome.description ? { description: outcome.description } : {}),
    }
    return { ok: true, hook }
  }

  /** Stops retrying the hook's Describe: its folder changed or went away. */
  forget(name: string): void {
    this.remotes.settled(name)
  }

  /** Closes the clients of its remote hooks and stops retrying. */
  close(): void {
    this.remotes.close()
  }
}
