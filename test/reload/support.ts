/**
 * Test support for hot reload: bounded waits, a prober that keeps calling a point while files change,
 * and editors' save patterns done with real file operations.
 */
import { open, rename, unlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Diagnostic, HookInfoData, HostSession } from '../../src/host/index.js'
import type { Running } from '../support/sidecar.js'

/** Polls `probe` until it returns something other than undefined; fails after `timeoutMs`. */
export async function waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  let last: unknown
  for (;;) {
    try {
      const value = await probe()
      if (value !== undefined) return value
    } catch (err) {
      last = err
    }
    if (Date.now() > deadline) {
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`)
    }
    await sleep(25)
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The hook as ListHooks shows it, once `test` holds. */
export function waitForHook(running: Running, name: string, test: (h: HookInfoData) => boolean, what: string): Promise<HookInfoData> {
  return waitFor(`${name}: ${what}`, async () => {
    const hook = (await running.client.listHooks()).find((h) => h.name === name)
    return hook && test(hook) ? hook : undefined
  })
}

/** Diagnostics pushed on a session's stream, with a wait for the next one that matches. */
export class Pushed {
  readonly all: Diagnostic[] = []
  readonly handler = (d: Diagnostic): void => {
    this.all.push(d)
  }
  wait(what: string, test: (d: Diagnostic) => boolean): Promise<Diagnostic> {
    return waitFor(`a pushed diagnostic: ${what}`, () => this.all.find(test))
  }
}

/** A guard whose refusal reason names its version: `{ allow: false, reason: tag }`. */
export function guard(tag: string, lines = ''): string {
  return `module.exports = {\n  beforeToolExecute(ctx, call) {\n    return { allow: false, reason: ${JSON.stringify(tag)} }\n  },\n}\n${lines}`
}

export const shellCall = { id: 'c1', name: 'shell', arguments: { command: 'rm -rf /' } }

/**
 * Calls beforeToolExecute again and again until stopped, recording what each call answered, so that a
 * test can assert that no call during an edit ever saw a half-written hook.
 */
export class Prober {
  readonly answers: string[] = []
  private stopped = false
  private readonly loop: Promise<void>

  constructor(session: HostSession) {
    this.loop = (async () => {
      while (!this.stopped) {
        try {
          const out = await session.call('beforeToolExecute', shellCall)
          const failed = out.diagnostics.map((d) => `${d.kind}: ${d.message}`)
          this.answers.push(out.result.allow === false ? `refused:${out.result.reason ?? ''}` : `allowed${failed.length ? ` (${failed.join('; ')})` : ''}`)
        } catch (err) {
          this.answers.push(`error: ${String(err)}`)
          return
        }
      }
    })()
  }

  /** Waits until a call answers `refused:<tag>`. */
  until(tag: string): Promise<void> {
    return waitFor(`a call refused by ${tag}`, () => (this.answers.includes(`refused:${tag}`) ? true : undefined)).then(() => {})
  }

  async stop(): Promise<string[]> {
    this.stopped = true
    await this.loop
    return this.answers
  }
}

/** The ways editors save a file, each done with the real file operations. */
export const SAVE_PATTERNS: Record<string, (file: string, text: string) => Promise<void>> = {
  /** Overwrite the bytes of the existing file, in two writes, then cut it to length. */
  async 'write in place'(file, text) {
    const handle = await open(file, 'r+')
    try {
      const half = Math.floor(text.length / 2)
      await handle.write(text.slice(0, half), 0)
      await sleep(10)
      await handle.write(text.slice(half), Buffer.byteLength(text.slice(0, half)))
      await handle.truncate(Buffer.byteLength(text))
    } finally {
      await handle.close()
    }
  },
  /** Truncate (the file is empty for a moment), then write. */
  async 'truncate then write'(file, text) {
    const handle = await open(file, 'w')
    try {
      await sleep(10)
      await handle.write(text)
    } finally {
      await handle.close()
    }
  },
  /** Write a temp file beside it and rename it over the original. */
  async 'temp file then rename'(file, text) {
    const temp = `${file}.hookd-tmp-${process.pid}`
    await writeFile(temp, text)
    await rename(temp, file)
  },
  /** Delete the file, then create it again. */
  async 'delete then create'(file, text) {
    await unlink(file)
    await sleep(10)
    await writeFile(file, text)
  },
  /** vim's default: move the original to a backup, write a new file, delete the backup. */
  async 'backup rename then write'(file, text) {
    await rename(file, `${file}~`)
    await writeFile(file, text)
    await unlink(`${file}~`)
  },
}

export function indexOf(root: string, name: string): string {
  return join(root, name, 'index.js')
}
