/**
 * The last good bundles on disk, in a state folder of hookd's own (state-folder.ts: a real folder,
 * this user's, mode 0700). Each verified revision is kept as the bytes that were verified
 * (`r-<sha>.bundle`) and as hook folders written from them (`r-<sha>/`, written into a temporary
 * folder and renamed into place, every file created anew, never through a link); `current` names
 * the one served. On a restart the kept bytes are verified again (signature and digests, with the
 * keys trusted now) before anything of them is served, so a state folder edited while hookd was down
 * serves nothing it would not have served. The revision before the current one is kept too, for a
 * quick rollback; older ones are removed.
 */
import { constants } from 'node:fs'
import { mkdir, open, readdir, rename, rm } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { StateFolder } from '../state/state-folder.js'
import { sha256Hex } from '../pinning/content-digest.js'
import type { OpenedBundle } from './bundle-format.js'

export interface StoredBundle {
  /** The folder of its hook folders. */
  folder: string
  /** The bytes verified (to be verified again before use). */
  bytes: Buffer
}

export class BundleStore {
  private constructor(private readonly state: StateFolder) {}

  static async open(dir: string): Promise<BundleStore> {
    const state = await StateFolder.open(dir, { create: true })
    return new BundleStore(state as StateFolder)
  }

  get path(): string {
    return this.state.path
  }

  /** The bundle served last, as kept; undefined when there is none. */
  async current(maxBytes: number): Promise<StoredBundle | undefined> {
    const name = (await this.state.read('current'))?.trim()
    if (!name || !/^r-[0-9a-f]{16}$/.test(name)) return undefined
    const bytes = await this.state.read(`${name}.bundle`, maxBytes)
    if (bytes === undefined) return undefined
    // A bundle hookd verified is ASCII JSON (base64 inside), so its text is its bytes.
    return { folder: join(this.state.path, name), bytes: Buffer.from(bytes, 'utf8') }
  }

  /** Writes a verified bundle's files (not yet current). Returns its folder. */
  async write(bytes: Buffer, bundle: OpenedBundle): Promise<string> {
    const name = `r-${sha256Hex(bytes).slice(0, 16)}`
    const temp = join(this.state.path, `.tmp-${randomBytes(6).toString('hex')}`)
    await mkdir(temp, { mode: 0o700 })
    try {
      for (const [path, data] of [...bundle.files].sort(([a], [b]) => a.localeCompare(b))) {
        const file = join(temp, ...path.split('/'))
        await mkdir(dirname(file), { recursive: true, mode: 0o700 })
        const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600)
        try {
          await handle.writeFile(data)
        } finally {
          await handle.close()
        }
      }
      await this.state.write(`${name}.bundle`, bytes, 0o600)
      await rm(join(this.state.path, name), { recursive: true, force: true })
      await rename(temp, join(this.state.path, name))
    } catch (err) {
      await rm(temp, { recursive: true, force: true })
      throw err
    }
    return join(this.state.path, name)
  }

  /** Makes `folder` (from `write`) the one served after a restart; keeps it and the one before. */
  async makeCurrent(folder: string): Promise<void> {
    const name = folder.slice(this.state.path.length + 1)
    const before = (await this.state.read('current'))?.trim()
    await this.state.write('current', `${name}\n`)
    const keep = new Set([name, before, `${name}.bundle`, `${before}.bundle`, 'current', '.gitignore'])
    for (const entry of await readdir(this.state.path)) {
      if (!keep.has(entry) && /^(?:r-[0-9a-f]{16}(?:\.bundle)?|\.tmp-[0-9a-f]+)$/.test(entry)) await rm(join(this.state.path, entry), { recursive: true, force: true })
    }
  }
}
