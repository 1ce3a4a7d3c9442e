/**
 * Whether a hook version may serve, by what is pinned (docs/operations.md, "Pinning and signing"):
 *
 * - **Permissions**: a version whose hook.json "permissions" ask for more than its locked entry's
 *   (asks-for-more.ts), or, for a hook not in the lock, more than the version serving now, is held
 *   until `hookd trust` approves it. Always, with or without `--locked`.
 * - **`--locked`**: only a version whose content digest is its entry's in hookd.lock serves; a changed
 *   hook is held (the registry keeps its locked version serving, `stale`), a hook not in the lock does
 *   not load.
 * - **`--require-signed`**: a version serves only when signed by a trusted key: its `hook.sig`, or a
 *   signed lock (`hookd.lock.sig`) whose entry holds its digest. The error says which: unsigned, signed
 *   by an untrusted key (its fingerprint), or changed after signing.
 *
 * A held version is a load failure with what changed (files, permissions) and what to do; the registry
 * reports it once per version (the same held text is a repeat). The lock file is read again when it
 * changes (`watch`: a stat poll, since an editor or `hookd trust` replaces it by a rename), and the
 * registry then judges its hooks again.
 */
import { watchFile, unwatchFile } from 'node:fs'
import { HookdError } from '../../protocol/status.js'
import type { HookFiles } from '../hooks/hook-folder.js'
import { asksForMore } from './asks-for-more.js'
import { changedFiles } from './content-digest.js'
import { type LockEntry, type ReadLock, entryFiles, lockDigest, lockPathFor, readLock } from './lock-file.js'
import { type TrustedKeys, checkSignature } from './signing.js'
import { readRegularFile } from '../hooks/read-regular-file.js'

export interface PinningOptions {
  /** Serve only hooks whose content digest is their hookd.lock entry's. */
  locked?: boolean
  /** The lock file; default hookd.lock beside the hooks folder. */
  lockFile?: string
  /** Keys whose signatures are trusted (signing.ts readTrustedKeys). */
  trustedKeys?: TrustedKeys
  /** Serve only hooks signed by a trusted key (needs trustedKeys). */
  requireSigned?: boolean
  /** How often the lock file is looked at for changes, ms. Default 500. */
  pollMs?: number
}

/** Why a version is held, for the registry's load failure. */
export interface Held {
  message: string
  file: string
  remedy: { skipped: string; stale: string }
  /** The same hold as last reported for this hook. */
  repeat: boolean
}

/** What a version asks to serve: its files as read and its hook.json "permissions" (canonical text). */
export interface Candidate {
  files: HookFiles
  permissions: string | undefined
  /** The permissions of the version serving now, when one does. */
  servedPermissions?: string | undefined
  served: boolean
}

const SIG_MAX_BYTES = 16 * 1024

export class Admission {
  private current: ReadLock | undefined
  /** Whether hookd.lock.sig signs the lock as read, by a trusted key. */
  private lockSigned = false
  private readonly lastHeld = new Map<string, string>()

  private constructor(
    readonly lockPath: string,
    private readonly options: PinningOptions,
  ) {}

  /** Reads the lock (when there is one); a HookdError when it is invalid, or missing under --locked. */
  static async open(hooksRoot: string, options: PinningOptions): Promise<Admission> {
    if (options.requireSigned && !options.trustedKeys) throw new HookdError('invalid-argument', 'requiring signed hooks needs trusted keys: pass --trusted-keys FILE')
    const admission = new Admission(lockPathFor(hooksRoot, options.lockFile), options)
    await admission.refresh()
    if (options.locked && !admission.current) {
      throw new HookdError('failed-precondition', `--locked needs a lock file, and ${admission.lockPath} does not exist; write it with hookd lock (after reviewing the hooks)`)
    }
    return admission
  }

  get lock(): ReadLock | undefined {
    return this.current
  }

  /** Reads the lock file again; true when it changed. An invalid lock keeps the last good one (and throws). */
  async refresh(): Promise<boolean> {
    const next = await readLock(this.lockPath)
    const changed = next?.sha256 !== this.current?.sha256
    if (!next && this.options.locked && this.current) throw new HookdError('failed-precondition', `${this.lockPath} is gone; hookd keeps the lock it read last: write it again with hookd lock`)
    this.current = next
    this.lockSigned = next !== undefined && this.options.trustedKeys !== undefined && (await this.checkLockSignature(next))
    return changed
  }

  /** Calls `onChange` after the lock file changed and was read again (`onError` when it cannot be). Returns the stop. */
  watch(onChange: () => void, onError: (message: string) => void): () => void {
    const listener = (): void => {
      this.refresh().then(
        (changed) => {
          if (changed) onChange()
        },
        (err: unknown) => onError((err as Error).message),
      )
    }
    watchFile(this.lockPath, { interval: this.options.pollMs ?? 500, persistent: false }, listener)
    return () => unwatchFile(this.lockPath, listener)
  }

  /** Undefined when the version may serve; else why it is held. */
  judge(c: Candidate): Held | undefined {
    const { name } = c.files
    const held = this.why(c)
    if (!held) {
      this.lastHeld.delete(name)
      return undefined
    }
    const repeat = this.lastHeld.get(name) === held.message
    this.lastHeld.set(name, held.message)
    return { ...held, repeat }
  }

  private why(c: Candidate): Omit<Held, 'repeat'> | undefined {
    const { name } = c.files
    const content = c.files.content
    if (!content) return undefined
    const entry: LockEntry | undefined = this.current?.lock.hooks[name]
    const trust = `hookd trust ${name}`
    const remedy = (what: string): Held['remedy'] => ({ skipped: `${what}, then it loads`, stale: `${what}, then the new version serves` })
    if (this.options.requireSigned && this.options.trustedKeys) {
      const signedByLock = this.lockSigned && entry?.digest === content.digest
      if (!signedByLock) {
        if (c.files.signatureError !== undefined) return { message: `hook '${name}' is refused: ${c.files.signatureError}`, file: `${name}/hook.sig`, remedy: remedy(`sign it with hookd sign --key KEY ${name}`) }
        const check = checkSignature(c.files.signatureText, 'hook.sig', { signs: 'hook', name, digest: content.digest }, this.options.trustedKeys)
        if (!check.ok) {
          return {
            message: `hook '${name}' is refused (--require-signed): ${check.message}`,
            file: `${name}/hook.sig`,
            remedy: remedy(`sign it with a trusted key (hookd sign --key KEY ${name}), or sign the lock that pins it (hookd sign --key KEY --lock)`),
          }
        }
      }
    }
    const reference = entry ? entry.permissions : c.served ? c.servedPermissions : undefined
    const wider = entry || c.served ? asksForMore(reference, c.permissions) : []
    if (wider.length) {
      return {
        message: `hook '${name}' is held: this version asks for more permissions than its ${entry ? 'locked' : 'serving'} version: ${wider.join('; ')} (${entry ? 'hookd.lock' : 'now'}: ${reference ?? 'none'}; this version: ${c.permissions ?? 'none'})`,
        file: `${name}/hook.json`,
        remedy: remedy(`review them and approve with ${trust}`),
      }
    }
    if (!this.options.locked) return undefined
    if (!entry) {
      return { message: `hook '${name}' is not in ${this.lockPath} (hookd serve --locked serves only locked hooks)`, file: `${name}/hook.json`, remedy: remedy(`review it and approve it with ${trust}`) }
    }
    if (entry.digest === content.digest) return undefined
    const files = changedFiles(entryFiles(entry), content.files)
    const perms = entry.permissions === c.permissions ? 'permissions unchanged' : `permissions changed (locked: ${entry.permissions ?? 'none'}; now: ${c.permissions ?? 'none'})`
    return {
      message: `hook '${name}' changed since ${this.lockPath} (digest ${content.digest}, locked ${entry.digest}): ${files.join(', ') || 'its files'} changed; ${perms}`,
      file: `${name}/${files[0]?.replace(/ \((?:new|gone)\)$/, '') ?? 'index.js'}`,
      remedy: remedy(`review the change and approve it with ${trust} (or hookd lock)`),
    }
  }

  private async checkLockSignature(read: ReadLock): Promise<boolean> {
    const keys = this.options.trustedKeys
    if (!keys) return false
    const sig = await readRegularFile(`${read.path}.sig`, SIG_MAX_BYTES)
    if (!sig.ok) return false
    return checkSignature(sig.text, 'hookd.lock.sig', { signs: 'lock', name: 'hookd.lock', digest: lockDigest(read.text) }, keys).ok
  }
}
