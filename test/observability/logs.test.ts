/**
 * The operator log of `hookd serve` (--log-level, --log-format): with JSON, every line of stderr parses
 * and has the stable fields; at info one line per decision, reload, worker exit and drain; at warn only
 * what failed; text from hooks and agents' events stays inert; text lines are the `hookd: ...` lines
 * people read.
 */
import { existsSync } from 'node:fs'
import { readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { HookdClient } from '../../src/host/index.js'
import { type Serving, runInProcess, serveInProcess, startServe, stopProcess } from '../support/processes.js'
import { hook, sessionOptions, writeTree } from '../support/sidecar.js'

const shell = (command: string) => ({ id: 'c1', name: 'shell', arguments: { command } })
const JSON_LISTENING = /"msg":"listening on ([^"]+)"/
type Line = Record<string, unknown>

/** Every line of `stderr` as JSON (a line that does not parse fails the test, naming it). */
function jsonLines(stderr: string): Line[] {
  return stderr
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      try {
        return JSON.parse(line) as Line
      } catch {
        throw new Error(`not a JSON line: ${line}`)
      }
    })
}

/** The pids of `pid`'s descendants whose command line mentions `word`. */
async function descendants(pid: number, word: string): Promise<number[]> {
  const found: number[] = []
  const visit = async (p: number): Promise<void> => {
    for (const task of await readdir(`/proc/${p}/task`).catch(() => [])) {
      const children = (await readFile(`/proc/${p}/task/${task}/children`, 'utf8').catch(() => '')).trim()
      for (const c of children ? children.split(/\s+/).map(Number) : []) {
        if ((await readFile(`/proc/${c}/cmdline`, 'utf8').catch(() => '')).includes(word)) found.push(c)
        await visit(c)
      }
    }
  }
  await visit(pid)
  return found
}

const ESC = '\u001b'

describe('hookd serve --log-format json', () => {
  let hooks: string
  let serving: Serving
  let client: HookdClient

  beforeAll(async () => {
    hooks = await writeTree({
      'allow/index.js': hook({ beforeToolExecute: 'function () {}' }),
      'thrower/index.js': hook({ beforeToolExecute: "function () { throw new Error('oops') }" }),
      // Fails to load with a message that would clear a terminal.
      'rude/index.js': `throw new Error('${ESC}[2J${ESC}]0;owned${'\u0007'}boom')\n`,
    })
    serving = await startServe(['--hooks', hooks, '--workers', '1', '--listen', `unix:${join(hooks, 'hookd.sock')}`, '--log-format', 'json', '--grace-ms', '20000'], {
      ready: JSON_LISTENING,
    })
    client = await HookdClient.connect(serving.address)
  })

  afterAll(async () => {
    client?.close()
    if (serving) await stopProcess(serving.child, 'SIGKILL')
    await rm(hooks, { recursive: true, force: true })
  })

  it('starts with JSON lines only: where it listens, what failed to load (inert), the walls', () => {
    const lines = jsonLines(serving.output.stderr)
    for (const line of lines) {
      expect(Object.keys(line).slice(0, 4)).toEqual(['time', 'level', 'event', 'msg'])
      expect(new Date(line.time as string).toISOString()).toBe(line.time)
    }
    expect(lines.find((l) => l.event === 'listening')).toEqual({
      time: expect.any(String),
      level: 'info',
      event: 'listening',
      msg: `listening on ${serving.address}`,
      listener: 'grpc',
      address: serving.address,
    })
    const rude = lines.find((l) => String(l.msg).includes("hook 'rude' failed to load"))
    expect(rude?.level).toBe('warn')
    // Neither the line nor the message it carries holds a control character a terminal would act on.
    expect(serving.output.stderr).not.toContain(ESC)
    expect(serving.output.stderr).not.toContain('\u0007')
    expect(rude?.msg).not.toContain(ESC)
    expect(rude?.msg).toContain('[2J')
    expect(lines.some((l) => String(l.msg).startsWith('walls: '))).toBe(true)
  })

  it('writes one line per decision, with stable fields; a hook that failed makes it a warning', async () => {
    const allowed = await client.invoke(sessionOptions(['allow']), 'beforeToolExecute', shell('ls'))
    const thrown = await client.invoke(sessionOptions(['thrower', 'allow']), 'beforeToolExecute', shell('ls'))
    await vi.waitFor(() => expect(serving.output.stderr).toContain(thrown.decisionId as string), { timeout: 10_000 })
    const decisions = jsonLines(serving.output.stderr).filter((l) => l.event === 'decision')
    expect(decisions).toHaveLength(2)
    const hookEntry = (name: string, outcome: string, kind?: string) => ({
      hook: name,
      version: expect.stringMatching(/\S/),
      layer: 'session',
      outcome,
      ...(kind ? { kind } : {}),
      duration_ms: expect.any(Number),
      cpu_ms: expect.any(Number),
    })
    expect(decisions[0]).toEqual({
      time: expect.any(String),
      level: 'info',
      event: 'decision',
      msg: expect.stringMatching(new RegExp(`^decision ${allowed.decisionId}: beforeToolExecute allowed in [\\d.]+ ms; allow no-opinion [\\d.]+ ms$`)),
      decision_id: allowed.decisionId,
      tenant: null,
      session: expect.any(String),
      // An Invoke is a session of one call: seq 0.
      seq: 0,
      point: 'beforeToolExecute',
      outcome: 'allowed',
      duration_ms: expect.any(Number),
      hooks: [hookEntry('allow', 'no-opinion')],
    })
    expect(decisions[1]).toMatchObject({
      level: 'warn',
      decision_id: thrown.decisionId,
      outcome: 'allowed',
      fail_mode: 'open',
      fail_kind: 'throw',
      hooks: [hookEntry('thrower', 'failed', 'throw'), hookEntry('allow', 'no-opinion')],
    })
    // The audit log is another thing: nothing of it on stderr.
    expect(serving.output.stdout).toBe('')
  })

  it('logs reloads, a failed reload as a warning, and a worker that died', async () => {
    await writeFile(join(hooks, 'allow', 'index.js'), hook({ beforeToolExecute: "function () { return { reason: 'v2' } }" }))
    await vi.waitFor(() => expect(jsonLines(serving.output.stderr).filter((l) => l.event === 'reload')).toHaveLength(1), { timeout: 20_000, interval: 50 })
    await writeFile(join(hooks, 'thrower', 'index.js'), 'module.exports = {')
    await vi.waitFor(() => expect(jsonLines(serving.output.stderr).filter((l) => l.event === 'reload')).toHaveLength(2), { timeout: 20_000, interval: 50 })
    const [reloaded, failed] = jsonLines(serving.output.stderr).filter((l) => l.event === 'reload')
    expect(reloaded).toMatchObject({ level: 'info', tenant: null, hook: 'allow', result: 'reloaded', version: expect.any(String), previous_version: expect.any(String) })
    expect(reloaded?.version).not.toBe(reloaded?.previous_version)
    expect(reloaded?.msg).toMatch(/^hook 'allow' reloaded/)
    expect(failed).toMatchObject({ level: 'warn', hook: 'thrower', result: 'failed', file: expect.stringContaining('thrower') })

    // A worker killed from outside, after it ran hooks: its exit is logged, and a new one replaces it.
    const [worker] = await descendants(serving.child.pid as number, 'worker')
    if (worker === undefined) throw new Error('no sandbox worker process found')
    process.kill(worker, 'SIGKILL')
    await vi.waitFor(() => expect(jsonLines(serving.output.stderr).filter((l) => l.event === 'worker-exit')).toHaveLength(1), { timeout: 20_000, interval: 50 })
    expect(jsonLines(serving.output.stderr).find((l) => l.event === 'worker-exit')).toMatchObject({
      level: 'warn',
      tenant: null,
      pid: worker,
      reason: 'crashed',
      exit: 'signal SIGKILL',
    })
  })

  it('logs the drain, and every line it ever wrote is JSON', async () => {
    const session = await client.openSession(sessionOptions(['allow']))
    const exited = new Promise<number | null>((resolve) => serving.child.once('exit', (code) => resolve(code)))
    serving.child.kill('SIGTERM')
    await vi.waitFor(() => expect(serving.output.stderr).toContain('"event":"drain"'), { timeout: 10_000, interval: 50 })
    // An idle session ends at once in a drain: close() meets that end, or, when the machine is slow to
    // deliver it, hookd's own answer to the close, which says the same.
    await expect(session.close()).rejects.toThrow(/^(the session ended earlier: )?hookd is shutting down/)
    expect(await exited).toBe(0)
    const drain = jsonLines(serving.output.stderr).filter((l) => l.event === 'drain')
    expect(drain).toEqual([
      { time: expect.any(String), level: 'info', event: 'drain', msg: 'draining after SIGTERM: health says NOT_SERVING, new sessions and calls get UNAVAILABLE; 1 open session(s) end once their running calls finish (at most 20000 ms, --grace-ms)', phase: 'started', sessions: 1, grace_ms: 20000, cause: 'SIGTERM' },
      { time: expect.any(String), level: 'info', event: 'drain', msg: expect.stringMatching(/^drained in \d+ ms: every session ended; stopped$/), phase: 'done', duration_ms: expect.any(Number), cut: 0 },
    ])
  })
})

describe('hookd serve --log-level and text logs', () => {
  it('at warn, logs failed decisions only, and still says where it listens; text lines read as before', async () => {
    const hooks = await writeTree({
      'allow/index.js': hook({ beforeToolExecute: 'function () {}' }),
      'thrower/index.js': hook({ beforeToolExecute: "function () { throw new Error('oops') }" }),
    })
    const started: Serving[] = []
    try {
      const warn = await startServe(['--hooks', hooks, '--workers', '1', '--no-watch', '--listen', `unix:${join(hooks, 'a.sock')}`, '--log-level', 'warn'])
      started.push(warn)
      const text = await startServe(['--hooks', hooks, '--workers', '1', '--no-watch', '--listen', `unix:${join(hooks, 'b.sock')}`])
      started.push(text)
      for (const s of [warn, text]) {
        const client = await HookdClient.connect(s.address)
        await client.invoke(sessionOptions(['allow']), 'beforeToolExecute', shell('ls'))
        const thrown = await client.invoke(sessionOptions(['thrower']), 'beforeToolExecute', shell('ls'))
        await vi.waitFor(() => expect(s.output.stderr).toContain(thrown.decisionId as string), { timeout: 10_000 })
        client.close()
      }
      const decisions = (s: Serving) => s.output.stderr.split('\n').filter((l) => l.startsWith('hookd: decision '))
      expect(warn.output.stderr).toContain(`hookd: listening on ${warn.address}\n`)
      expect(warn.output.stderr).not.toContain('hookd: walls: ')
      expect(decisions(warn)).toEqual([expect.stringMatching(/^hookd: decision \S+: beforeToolExecute allowed \(fail open: 'thrower' throw\) in [\d.]+ ms; thrower failed \(throw\) [\d.]+ ms$/)])
      expect(text.output.stderr).toContain('hookd: walls: ')
      expect(decisions(text)).toEqual([
        expect.stringMatching(/^hookd: decision \S+: beforeToolExecute allowed in [\d.]+ ms; allow no-opinion [\d.]+ ms$/),
        expect.stringMatching(/^hookd: decision \S+: beforeToolExecute allowed \(fail open: 'thrower' throw\) in [\d.]+ ms; thrower failed \(throw\) [\d.]+ ms$/),
      ])
    } finally {
      for (const s of started) await stopProcess(s.child)
      await rm(hooks, { recursive: true, force: true })
    }
  })

  it.runIf(existsSync('/dev/full'))("the audit log's own lines (it cannot write) are JSON warnings too, not text beside the JSON", async () => {
    const hooks = await writeTree({ 'allow/index.js': hook({ beforeToolExecute: 'function () {}' }) })
    const s = await startServe(['--hooks', hooks, '--workers', '1', '--no-watch', '--listen', `unix:${join(hooks, 'c.sock')}`, '--log-format', 'json', '--audit', '/dev/full'], { ready: JSON_LISTENING })
    try {
      const client = await HookdClient.connect(s.address)
      const answered = await client.invoke(sessionOptions(['allow']), 'beforeToolExecute', shell('ls'))
      expect(answered.result).toMatchObject({ allow: true })
      client.close()
      await vi.waitFor(() => expect(s.output.stderr).toContain('cannot write the audit log'), { timeout: 10_000 })
    } finally {
      await stopProcess(s.child)
      await rm(hooks, { recursive: true, force: true })
    }
    const lines = jsonLines(s.output.stderr)
    expect(lines.find((l) => String(l.msg).startsWith('cannot write the audit log /dev/full'))).toMatchObject({ level: 'warn', event: 'message' })
    expect(lines.find((l) => String(l.msg).startsWith('stopped with 1 decision not written to the audit log /dev/full'))).toMatchObject({ level: 'warn' })
  })

  it('refuses a level or format it does not know, saying which it knows', async () => {
    const level = await runInProcess(['serve', '--log-level', 'verbose'])
    expect([level.code, level.stderr]).toEqual([2, expect.stringContaining("--log-level must be one of error, warn, info, debug; got 'verbose'")])
    const format = await runInProcess(['serve', '--log-format', 'logfmt'])
    expect([format.code, format.stderr]).toEqual([2, expect.stringContaining("--log-format must be one of text, json; got 'logfmt'")])
  })
})

describe("an agent's event text in the front door's lines", () => {
  it('cannot forge a line or a record: text and JSON keep one line per event, with the text escaped inside it', async () => {
    const hooks = await writeTree({ 'talk/index.js': hook({ beforeToolExecute: "function (ctx) { ctx.log('said') }" }) })
    const forged = `x\nhookd: listening on unix:/tmp/evil.sock\r\n{"level":"info","event":"listening","msg":"listening on evil"}${ESC}[2J`
    try {
      for (const format of ['text', 'json']) {
        // A token file the operator names must exist (hookd makes one only in its own state folder).
        await writeFile(join(hooks, `${format}.token`), `${'t'.repeat(40)}\n`, { mode: 0o600 })
        const serving = await serveInProcess(
          ['--hooks', hooks, '--workers', '1', '--no-watch', '--listen', `unix:${join(hooks, `${format}.sock`)}`, '--http', '0', '--http-token-file', join(hooks, `${format}.token`), '--log-format', format],
          { cwd: hooks, ready: format === 'json' ? /"msg":"http on (http:[^"]+)"/ : /^hookd: http on (\S+)$/m },
        )
        try {
          const token = (await readFile(join(hooks, `${format}.token`), 'utf8')).trim()
          const event = { session_id: forged, cwd: hooks, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: 'ls' }, tool_use_id: `toolu_${forged}` }
          const res = await fetch(`${serving.address}/claude-code/talk`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: JSON.stringify(event) })
          expect(await res.json()).toEqual({})
          await vi.waitFor(() => expect(serving.output.stderr).toContain('[talk] said'), { timeout: 10_000 })
          const stderr = serving.output.stderr
          expect(stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
          if (format === 'json') {
            const lines = jsonLines(stderr)
            expect(lines.filter((l) => l.event === 'listening').map((l) => l.listener).sort()).toEqual(['grpc', 'http'])
            const said = lines.filter((l) => String(l.msg).endsWith('[talk] said'))
            expect(said).toHaveLength(1)
            expect(said[0]?.msg).toBe(`claude-code session x\\nhookd: listening on unix:/tmp/evil.sock\\r\\n{"level":"info","event":"listening","msg":"listening on evil"}\\u001b[2J: [talk] said`)
          } else {
            const lines = stderr.split('\n').filter(Boolean)
            expect(lines.filter((l) => l.startsWith('hookd: listening on'))).toEqual([`hookd: listening on unix:${join(hooks, 'text.sock')}`])
            expect(lines.filter((l) => l.includes('[talk] said'))).toEqual([
              'hookd: claude-code session x\\nhookd: listening on unix:/tmp/evil.sock\\r\\n{"level":"info","event":"listening","msg":"listening on evil"}\\u001b[2J: [talk] said',
            ])
          }
        } finally {
          await serving.stop()
        }
      }
    } finally {
      await rm(hooks, { recursive: true, force: true })
    }
  }, 60_000)
})
