/**
 * Watches the tenants file for edits and hands on settled new texts (settled-watcher.ts says how a
 * text settles). The folder is watched rather than the file, so that editors that save by renaming a
 * temp file over it, or by deleting and re-creating it, are seen. A file that cannot be read is looked
 * at once more after the settle time (a save that deletes and re-creates it is missing for a moment),
 * then reported.
 */
import { readFile } from 'node:fs/promises'
import { basename, dirname, resolve } from 'node:path'
import { type SettleOptions, SettledWatcher } from '../hooks/settled-watcher.js'

export type TenantsWatchOptions = SettleOptions

const KEY = 'tenants'

export class TenantsFileWatcher {
  private constructor(private readonly watcher: SettledWatcher<string>) {}

  /**
   * @param text   the text already applied
   * @param onText a settled new text
   * @param onProblem the file could not be read, or the watcher failed
   */
  static async start(
    file: string,
    text: string,
    onText: (text: string) => Promise<void>,
    onProblem: (message: string) => void,
    options: TenantsWatchOptions = {},
  ): Promise<TenantsFileWatcher> {
    const path = resolve(file)
    const name = basename(path)
    const settleMs = options.settleMs ?? 100
    let lastText = text
    const read = async (): Promise<string> => {
      try {
        return await readFile(path, 'utf8')
      } catch {
        await new Promise((done) => setTimeout(done, settleMs).unref())
        try {
          return await readFile(path, 'utf8')
        } catch (err) {
          throw new Error(`cannot read the tenants file ${file}: ${(err as Error).message}`)
        }
      }
    }
    const watcher = await SettledWatcher.start<string>(
      `the tenants file ${file}`,
      {
        folder: dirname(path),
        depth: 0,
        keyOf: (rel) => (rel === name ? KEY : undefined),
        read,
        same: (a, b) => a === b,
        applied: (_key, next) => next === lastText,
        apply: async (_key, next) => {
          lastText = next
          await onText(next)
        },
        onError: (err) => onProblem(err.message.startsWith('cannot read') ? err.message : `watching the tenants file ${file}: ${err.message}; edits may be missed until restart`),
      },
      options,
      // An edit between the first read and the watcher's scan.
      [KEY],
    )
    return new TenantsFileWatcher(watcher)
  }

  close(): Promise<void> {
    return this.watcher.close()
  }
}
