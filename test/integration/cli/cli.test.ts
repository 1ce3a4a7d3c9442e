/**
 * The hookd command as a user runs it: real sockets, exit codes, stdout and stderr. The built command
 * runs as its own process where the process is the point (an invoke from the quickstart, `hookd serve`
 * with its ready line, permissions and exit on SIGTERM, a list that finds nothing listening); the other
 * invocations run in-process (main(argv, io)), against the same embedded or served sidecars.
 */
import type { ChildProcess } from 'node:child_process'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { protoPath as healthProto } from 'grpc-health-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runHookd as hookd, runInProcess as inProcess, startServe, stopProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'

const RM = '{"id":"c1","name":"shell","arguments":{"command":"rm -rf /tmp/x"}}'

describe('hookd invoke with an embedded sidecar', () => {
  it('runs the chain from the quickstart and prints one JSON object', async () => {
    const ran = await hookd(['invoke', '--hooks', EXAMPLE_HOOKS, '--hook', 'guard,https-only', '--point', 'beforeToolExecute', '--payload', RM])
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as Record<string, unknown>
    expect(Object.keys(out)).toEqual(['result', 'diagnostics', 'trace', 'logs', 'notifications'])
    expect(out.result).toEqual({ allow: false, reason: 'refused by the user', refusedBy: 'guard', arguments: { command: 'rm -rf /tmp/x' } })
    expect(out.trace).toEqual([
      expect.objectContaining({ hook: 'guard', outcome: 'refused' }),
      expect.objectContaining({ hook: 'https-only', outcome: 'not-run' }),
    ])
  })

  it('answers confirm with --auto-approve and streams logs to stderr', async () => {
    const ran = await inProcess([
      'invoke', '--hooks', EXAMPLE_HOOKS, '--hook', 'audit,guard', '--point', 'beforeToolExecute', '--payload', RM, '--auto-approve',
    ])
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as { result: { allow: boolean }; logs: Array<{ hook: string; message: string }> }
    expect(out.result.allow).toBe(true)
    expect(out.logs).toEqual([expect.objectContaining({ hook: 'audit', message: 'tool call c1 shell' })])
    expect(ran.stderr).toContain('[audit] tool call c1 shell')
  })

  it('exits 1 naming an unknown hook', async () => {
    const ran = await inProcess(['invoke', '--hooks', EXAMPLE_HOOKS, '--hook', 'guard,nope', '--point', 'beforeToolExecute', '--payload', RM])
    expect(ran.code).toBe(1)
    expect(ran.stdout).toBe('')
    expect(ran.stderr).toContain("unknown hook 'nope'")
  })

  it('exits 2 with a message for usage errors', async () => {
    const noPoint = await inProcess(['invoke', '--hook', 'guard', '--payload', RM])
    expect(noPoint.code).toBe(2)
    expect(noPoint.stderr).toContain('--point is required')

    const badPoint = await inProcess(['invoke', '--hook', 'guard', '--point', 'beforeTool', '--payload', RM])
    expect(badPoint.code).toBe(2)
    expect(badPoint.stderr).toContain("--point 'beforeTool' is not a hook point")

    const badJson = await inProcess(['invoke', '--hook', 'guard', '--point', 'beforeToolExecute', '--payload', '{id:'])
    expect(badJson.code).toBe(2)
    expect(badJson.stderr).toContain('--payload is not valid JSON')

    const badShape = await inProcess(['invoke', '--hook', 'guard', '--point', 'afterRun', '--payload', '{"reason":"bored"}'])
    expect(badShape.code).toBe(2)
    expect(badShape.stderr).toContain('--payload does not fit afterRun: payload.reason')

    const unknownFlag = await inProcess(['invoke', '--frobnicate'])
    expect(unknownFlag.code).toBe(2)
    expect(unknownFlag.stderr).toContain("Unknown option '--frobnicate'")
  })

  it('answers --help for every command', async () => {
    for (const command of [[], ['serve'], ['invoke'], ['list']]) {
      const ran = await inProcess([...command, '--help'])
      expect(ran.code).toBe(0)
      expect(ran.stdout).toMatch(/Usage: hookd/)
    }
  })
})

describe('hookd serve', () => {
  let child: ChildProcess
  let cwd: string
  let lines: string[] = []

  beforeAll(async () => {
    cwd = await mkdtemp(join(tmpdir(), 'hookd-serve-'))
    const serving = await startServe(['--hooks', EXAMPLE_HOOKS, '--workers', '1'], { cwd })
    child = serving.child
    lines = serving.output.stderr.split('\n').filter(Boolean)
  })

  afterAll(async () => {
    if (child) await stopProcess(child, 'SIGKILL')
    await rm(cwd, { recursive: true, force: true })
  })

  it('prints what walls its workers, then exactly one ready line naming the default address, with private permissions', async () => {
    const socket = join(cwd, '.hookd', 'hookd.sock')
    expect(lines).toEqual([expect.stringMatching(/^hookd: walls: environment: minimal .*; permission model: reads only \/.*; network: .*; user: .*; memory: .*$/), `hookd: listening on unix:${socket}`])
    expect((await stat(join(cwd, '.hookd'))).mode & 0o777).toBe(0o700)
    expect((await stat(socket)).mode & 0o777).toBe(0o600)
  })

  it('serves hookd invoke --addr and hookd list', async () => {
    const addr = 'unix:.hookd/hookd.sock'
    const ran = await inProcess(['invoke', '--addr', addr, '--hook', 'https-only', '--point', 'beforeToolExecute', '--payload',
      '{"id":"c1","name":"http","arguments":{"url":"http://a.b"}}'], { cwd })
    expect(ran.code).toBe(0)
    expect(JSON.parse(ran.stdout).result).toEqual({ allow: true, arguments: { url: 'https://a.b' } })

    const listed = await inProcess(['list', '--addr', addr], { cwd })
    expect(listed.code).toBe(0)
    expect(listed.stdout.split('\n')[0]).toMatch(/^NAME\s+VERSION\s+DIGEST\s+STATUS\s+POINTS/)
    expect(listed.stdout).toMatch(/guard\s+[0-9a-f]{12}\s+sha256:[0-9a-f]{12}\s+ready\s+beforeToolExecute,afterRun/)
  })

  it('reports SERVING on the standard health service', async () => {
    const def = protoLoader.loadSync(healthProto, { enums: String })
    const Health = grpc.loadPackageDefinition(def).grpc as unknown as {
      health: { v1: { Health: new (addr: string, creds: grpc.ChannelCredentials) => grpc.Client & { check(req: unknown, cb: (e: Error | null, r: { status: string }) => void): void } } }
    }
    const client = new Health.health.v1.Health(`unix:${join(cwd, '.hookd', 'hookd.sock')}`, grpc.credentials.createInsecure())
    const status = await new Promise<string>((resolve, reject) =>
      client.check({ service: 'hookd.v1.HookExecutor' }, (e, r) => (e ? reject(e) : resolve(r.status))),
    )
    client.close()
    expect(status).toBe('SERVING')
  })

  it('exits 0 on SIGTERM and removes its socket', async () => {
    expect(await stopProcess(child, 'SIGTERM')).toBe(0)
    await expect(stat(join(cwd, '.hookd', 'hookd.sock'))).rejects.toThrow()
  })

  it('says when nothing listens at the address', async () => {
    const ran = await hookd(['list', '--addr', 'unix:.hookd/hookd.sock'], { cwd })
    expect(ran.code).toBe(1)
    expect(ran.stderr).toContain('cannot reach hookd at unix:.hookd/hookd.sock')
  })
})
