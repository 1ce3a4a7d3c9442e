/**
 * `hookd invoke`'s capability flags as a user runs them: --allow-env, --allow-http and --interactive,
 * through the command with an embedded sidecar. Exit codes, the JSON on stdout, stderr. The command runs
 * in-process (main(argv, io), with its own environment and terminal), except one --interactive test that
 * runs the built command as a process, asking on its real stdin and stderr.
 */
import { readFile, rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Ran, runHookd, runInProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS, hook, writeTree } from '../../support/sidecar.js'

/** Runs `hookd ...` in-process; `stdin` is what its terminal reads (undefined: input ends at once). */
const hookd = (args: string[], options: { env?: Record<string, string>; stdin?: string } = {}): Promise<Ran> => runInProcess(args, options)

/** Runs `hookd ...` as a process; `stdin` is written and closed (undefined: stdin closed at once). */
const hookdProcess = (args: string[], options: { stdin?: string } = {}): Promise<Ran> => runHookd(args, { stdin: options.stdin ?? '' })

interface Output {
  result: { allow: boolean; reason?: string; arguments: Record<string, unknown> }
  diagnostics: Array<{ kind: string; message: string }>
}

let hooks: string
let guardHooks: string
let server: ReturnType<typeof createServer>
let origin: string
let requests = 0

beforeAll(async () => {
  hooks = await writeTree({
    'env-dump/index.js': hook({ beforeToolExecute: `(ctx, c) => ({ arguments: { env: ctx.env } })` }),
    'fetch-two/index.js': hook({
      beforeToolExecute: `(ctx, c) => {
        const one = (url) => { try { const r = ctx.http.fetch(url); return r.status + ' ' + r.body } catch (e) { return e.code + ': ' + e.message } }
        return { arguments: { allowed: one(c.arguments.allowed), refused: one(c.arguments.refused) } }
      }`,
    }),
  })
  guardHooks = await writeTree({ 'guard/index.js': await readFile(join(EXAMPLE_HOOKS, 'guard', 'index.js'), 'utf8') })
  server = createServer((_req, res) => {
    requests += 1
    res.end('hello from the allowed origin')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
  await Promise.all([hooks, guardHooks].filter(Boolean).map((dir) => rm(dir, { recursive: true, force: true })))
})

const CALL = '{"id":"c1","name":"shell","arguments":{}}'
const RM = '{"id":"c1","name":"shell","arguments":{"command":"rm -rf /tmp/x"}}'

describe('hookd invoke --allow-env', () => {
  it('shows only the named variables in ctx.env', async () => {
    const ran = await hookd(
      ['invoke', '--hooks', hooks, '--hook', 'env-dump', '--point', 'beforeToolExecute', '--payload', CALL, '--allow-env', 'HOOKD_CLI_SHOWN', '--allow-env', 'HOOKD_CLI_UNSET'],
      { env: { HOOKD_CLI_SHOWN: 'visible', HOOKD_CLI_HIDDEN: 'secret' } },
    )
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as Output
    expect(out.result.arguments).toEqual({ env: { HOOKD_CLI_SHOWN: 'visible' } })
    expect(ran.stdout).not.toContain('secret')
  })
})

describe('hookd invoke --allow-http', () => {
  it('lets ctx.http.fetch reach the named origin and refuses others', async () => {
    const before = requests
    const payload = JSON.stringify({ id: 'c1', name: 'fetch', arguments: { allowed: `${origin}/x`, refused: 'http://127.0.0.2:9/' } })
    const ran = await hookd(['invoke', '--hooks', hooks, '--hook', 'fetch-two', '--point', 'beforeToolExecute', '--payload', payload, '--allow-http', origin])
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as Output
    expect(out.result.arguments).toEqual({
      allowed: '200 hello from the allowed origin',
      refused: `denied: ctx.http.fetch('http://127.0.0.2:9/') refused: origin http://127.0.0.2:9 is not allowed (allowed origins: ${origin})`,
    })
    expect(requests).toBe(before + 1)
  })

  it('exits 2 when the origin is not a URL', async () => {
    const ran = await hookd(['invoke', '--hooks', hooks, '--hook', 'fetch-two', '--point', 'beforeToolExecute', '--payload', CALL, '--allow-http', 'localhost'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain("--allow-http 'localhost' is not an origin")
  })
})

describe('hookd invoke --interactive with the guard example', () => {
  const args = (): string[] => ['invoke', '--hooks', guardHooks, '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', RM, '--interactive']

  it('asks on the terminal and allows on "y"', async () => {
    const ran = await hookdProcess(args(), { stdin: 'y\n' })
    expect(ran.code).toBe(0)
    expect((JSON.parse(ran.stdout) as Output).result.allow).toBe(true)
    expect(ran.stderr).toContain('[guard] Dangerous command\n  rm -rf /tmp/x\n  Allow? [y/N] ')
  })

  it('refuses on "n"', async () => {
    const ran = await hookd(args(), { stdin: 'n\n' })
    expect(ran.code).toBe(0)
    expect((JSON.parse(ran.stdout) as Output).result).toMatchObject({ allow: false, reason: 'refused by the user' })
    expect(ran.stderr).toContain('[guard] Dangerous command\n  rm -rf /tmp/x\n  Allow? [y/N] ')
  })

  it('answers no, without waiting, when stdin is closed', async () => {
    const ran = await hookd(args())
    expect(ran.code).toBe(0)
    expect((JSON.parse(ran.stdout) as Output).result).toMatchObject({ allow: false, reason: 'refused by the user' })
  })
})
