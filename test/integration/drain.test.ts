/**
 * `hookd serve` drains on SIGTERM (issue 15.6), as a program on a real socket: health stays reachable
 * and says NOT_SERVING until the listener closes, new sessions and calls get UNAVAILABLE with hookd's
 * message, an idle session ends at once, a running call finishes, and serve says on stderr that it
 * drains and when it is done.
 */
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { HookdClient, HookdError, type HostSession } from '../../src/host/index.js'
import { CUT, DRAINING } from '../../src/sidecar/grpc/open-streams.js'
import { type Serving, runInProcess, startServe, stopProcess } from '../support/processes.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'

const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

let root: string | undefined
let serving: Serving | undefined
const clients: HookdClient[] = []

afterEach(async () => {
  for (const c of clients.splice(0)) c.close()
  if (serving) await stopProcess(serving.child, 'SIGKILL')
  serving = undefined
  if (root) await rm(root, { recursive: true, force: true })
})

/** A sidecar whose `asker` hook waits on ctx.confirm, served by `hookd serve` with this grace period. */
async function serve(graceMs: number): Promise<{ socket: string; address: string }> {
  root = await writeTree({
    'hooks/asker/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { ...c.arguments, ok: ctx.confirm({ title: 'run it?' }) } })` }),
  })
  const socket = join(root, 'hookd.sock')
  serving = await startServe(['--hooks', join(root, 'hooks'), '--workers', '1', '--no-watch', '--listen', `unix:${socket}`, '--grace-ms', String(graceMs)])
  return { socket, address: serving.address }
}

async function connect(address: string): Promise<HookdClient> {
  const client = await HookdClient.connect(address)
  clients.push(client)
  return client
}

/** An interactive session whose confirm questions wait until `answer` is called. */
async function asking(client: HookdClient): Promise<{ session: HostSession; asked: Promise<void>; answer: (yes: boolean) => void }> {
  let asked!: () => void
  const askedPromise = new Promise<void>((resolve) => (asked = resolve))
  let answer!: (yes: boolean) => void
  const answered = new Promise<boolean>((resolve) => (answer = resolve))
  const session = await client.openSession(
    sessionOptions(['asker'], {
      interactive: true,
      capabilities: {
        confirm: () => {
          asked()
          return answered
        },
      },
    }),
  )
  return { session, asked: askedPromise, answer }
}

function ended(session: HostSession): Promise<HookdError> {
  return new Promise((resolve) => session.onEnd(resolve))
}

async function waitForStderr(pattern: RegExp): Promise<string> {
  for (;;) {
    const match = pattern.exec(serving?.output.stderr ?? '')
    if (match) return match[0]
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('hookd serve on SIGTERM', () => {
  it('drains: idle sessions end at once, a running call finishes, new work gets UNAVAILABLE, health says NOT_SERVING until the end', async () => {
    const { socket, address } = await serve(60_000)
    const client = await connect(address)
    const idle = await client.openSession(sessionOptions(['asker']))
    const idleEnded = ended(idle)
    const busy = await asking(client)
    const running = busy.session.call('beforeToolExecute', CALL)
    await busy.asked
    const exited = new Promise<number | null>((resolve) => serving?.child.once('exit', (code) => resolve(code)))
    serving?.child.kill('SIGTERM')

    expect(await waitForStderr(/^hookd: draining after SIGTERM.*$/m)).toBe(
      'hookd: draining after SIGTERM: health says NOT_SERVING, new sessions and calls get UNAVAILABLE; 2 open session(s) end once their running calls finish (at most 60000 ms, --grace-ms)',
    )
    // The idle session ends now, with hookd's reason, not at the grace deadline.
    const idleEnd = await idleEnded
    expect(idleEnd.code).toBe('unavailable')
    expect(idleEnd.message).toBe(DRAINING)
    const later = await idle.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    expect((later as HookdError).message).toBe(`the session ended earlier: ${DRAINING}`)

    // The socket is still there, and health answers through it.
    expect(existsSync(socket)).toBe(true)
    const health = await runInProcess(['health', '--addr', address])
    expect(health.stdout).toBe('NOT_SERVING\n')
    expect(health.code).toBe(1)

    // A new session is refused, with hookd's message.
    const fresh = await connect(address)
    const refused = await fresh.openSession(sessionOptions(['asker'])).catch((err: unknown) => err)
    expect(refused).toBeInstanceOf(HookdError)
    expect((refused as HookdError).code).toBe('unavailable')
    expect((refused as HookdError).message).toBe(DRAINING)
    const invoked = await fresh.invoke(sessionOptions(['asker']), 'beforeToolExecute', CALL).catch((err: unknown) => err)
    expect((invoked as HookdError).message).toBe(DRAINING)

    // A new call on the busy session is not run; the running one finishes and is answered.
    const refusedCall = busy.session.call('beforeToolExecute', { ...CALL, id: 'c2' }).catch((err: unknown) => err)
    busy.answer(true)
    const result = await running
    expect(result.result).toEqual({ allow: true, arguments: { command: 'ls', ok: true } })
    const second = await refusedCall
    expect((second as HookdError).code).toBe('unavailable')
    expect((second as HookdError).message).toBe(DRAINING)

    expect(await exited).toBe(0)
    expect(serving?.output.stderr).toMatch(/^hookd: drained in \d+ ms: every session ended; stopped$/m)
    expect(existsSync(socket)).toBe(false)
  })

  it('cuts what still runs when the grace period ends, with UNAVAILABLE and a message that says so', async () => {
    const { socket, address } = await serve(1500)
    const client = await connect(address)
    const busy = await asking(client)
    const running = busy.session.call('beforeToolExecute', CALL).catch((err: unknown) => err)
    await busy.asked
    expect(await stopProcess(serving?.child as NonNullable<Serving['child']>, 'SIGTERM')).toBe(0)
    const cut = await running
    expect(cut).toBeInstanceOf(HookdError)
    expect((cut as HookdError).code).toBe('unavailable')
    expect((cut as HookdError).message).toBe(CUT)
    expect(serving?.output.stderr).toMatch(/^hookd: drained in \d+ ms: the grace period ended with 1 session\(s\) still running, cut with UNAVAILABLE; stopped$/m)
    expect(existsSync(socket)).toBe(false)
    busy.answer(false)
  })

  it('stops at once when no session is open', async () => {
    const { socket } = await serve(60_000)
    expect(await stopProcess(serving?.child as NonNullable<Serving['child']>, 'SIGTERM')).toBe(0)
    expect(serving?.output.stderr).toMatch(/^hookd: draining after SIGTERM: .*; 0 open session\(s\) end/m)
    expect(serving?.output.stderr).toMatch(/^hookd: drained in \d+ ms: every session ended; stopped$/m)
    expect(existsSync(socket)).toBe(false)
  })
})
