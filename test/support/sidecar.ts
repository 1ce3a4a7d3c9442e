/**
 * Test support: real sidecars on real sockets, and hook folders written to temp directories.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { HookdClient, type SessionOptions } from '../../src/host/index.js'
import { Sidecar, type SidecarOptions } from '../../src/sidecar/sidecar.js'

export interface Running {
  sidecar: Sidecar
  address: string
  client: HookdClient
  stop(): Promise<void>
}

/** Starts a sidecar on a temp Unix socket (or HOST:0 when tcp is set) and connects a client. */
export async function startSidecar(options: SidecarOptions & { tcp?: boolean }): Promise<Running> {
  const { tcp, ...rest } = options
  const sidecar = await Sidecar.create({ workers: 1, ...rest })
  const dir = await mkdtemp(join(tmpdir(), 'hookd-test-'))
  const address = await sidecar.listen(tcp ? '127.0.0.1:0' : `unix:${join(dir, 'hookd.sock')}`)
  const client = await HookdClient.connect(address)
  return {
    sidecar,
    address,
    client,
    async stop() {
      client.close()
      await sidecar.stop()
      await rm(dir, { recursive: true, force: true })
    },
  }
}

/** Writes files (paths relative to a new temp folder) and returns the folder. */
export async function writeTree(files: Record<string, string>): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'hookd-hooks-'))
  await addFiles(root, files)
  return root
}

export async function addFiles(root: string, files: Record<string, string>): Promise<void> {
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(root, path)), { recursive: true })
    await writeFile(join(root, path), text)
  }
}

/** A hook's index.js from an object of handler sources: { beforeToolExecute: 'function (ctx, call) {...}' }. */
export function hook(handlers: Record<string, string>, prefix = ''): string {
  const body = Object.entries(handlers)
    .map(([name, fn]) => `  ${JSON.stringify(name)}: ${fn},`)
    .join('\n')
  return `${prefix}module.exports = {\n${body}\n}\n`
}

export const EXAMPLE_HOOKS = join(import.meta.dirname, '..', '..', 'hooks')

let sessionCounter = 0
export function sessionOptions(hooks: string[], extra: Partial<SessionOptions> = {}): SessionOptions {
  sessionCounter += 1
  return { sessionId: `test-${process.pid}-${sessionCounter}`, agentId: 'tester', modelId: 'test-model', hooks, ...extra }
}
