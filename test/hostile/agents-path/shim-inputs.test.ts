/**
 * What the shim reads before it posts (native/hookd-hook.c, bin/hookd-hook), where a repository or
 * another user may have put something: the folder it names as a Codex project, and the token file.
 * Both forms must answer alike (docs/agents.md, "The shim, hookd-hook"); each runs here as an agent
 * runs it, a process with the event on stdin, against a stand-in that records what reaches it.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/processes.js'

const FORMS = [
  { form: 'compiled', path: join(ROOT, 'build', 'hookd-hook'), env: {} },
  { form: 'script over bash', path: join(ROOT, 'bin', 'hookd-hook'), env: {} },
  { form: 'script over curl', path: join(ROOT, 'bin', 'hookd-hook'), env: { HOOKD_HOOK_CURL: '1' } },
] as const

let root = ''

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'hookd-shim-inputs-'))
})

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true })
})

/** Stands in for hookd: records each request's head and answers 500 without a proof (every form then refuses). */
function standIn(heads: string[]): Server {
  return createServer((socket) => {
    let head = ''
    let answered = false
    socket.on('data', (c: Buffer) => {
      // Once per request: its body may arrive in a later chunk (on a busy machine it does).
      if (answered) return
      head += c.toString('latin1')
      if (!head.includes('\r\n\r\n')) return
      answered = true
      heads.push(head)
      socket.end('HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
    })
    socket.on('error', () => {})
  })
}

function runShim(form: (typeof FORMS)[number], args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(form.path, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...form.env, ...options.env }, timeout: 20_000 })
    let stderr = ''
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stderr }))
    child.stdin.on('error', () => {})
    child.stdin.end('{}')
  })
}

describe("the shim's project for Codex", () => {
  it('is the working folder when no folder above holds .codex/hooks.json (docs/agents.md), in every form, not the top folder of the path', async () => {
    const state = join(root, 'state')
    const work = join(root, 'work', 'deep')
    await mkdir(state, { recursive: true, mode: 0o700 })
    await writeFile(join(state, 'http-token'), 'hkd_shim-inputs-token-0123456789abcdefghijklmnopq\n', { mode: 0o600 })
    await mkdir(work, { recursive: true })
    const heads: string[] = []
    const server = standIn(heads)
    await new Promise<void>((resolve) => server.listen(join(state, 'front.sock'), resolve))
    const sent: string[][] = []
    try {
      // The script reaches the user's socket through curl alone: two forms here, each form's request apart.
      for (const form of FORMS.slice(0, 2)) {
        const from = heads.length
        await runShim(form, ['--hooks-dir', 'hooks', '/codex/guard'], { cwd: work, env: { HOOKD_STATE_DIR: state } })
        sent.push(heads.slice(from).map((h) => decodeURIComponent(/^x-hookd-project: *(\S+)\r$/im.exec(h)?.[1] ?? '')))
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    expect(sent).toEqual([[work], [work]])
  })
})

describe("the shim's token file", () => {
  it('that is a symbolic link (to a file of the user’s, closed to others) is refused before anything is sent, in every form, as hookd’s state files are', async () => {
    const dir = join(root, 'token-link')
    await mkdir(dir)
    await writeFile(join(dir, 'real-token'), 'hkd_shim-inputs-token-0123456789abcdefghijklmnopq\n', { mode: 0o600 })
    await symlink(join(dir, 'real-token'), join(dir, 'http-token'))
    const heads: string[] = []
    const server = standIn(heads)
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    const codes: Array<number | null> = []
    const said: string[] = []
    try {
      for (const form of FORMS) {
        const ran = await runShim(form, ['--token-file', join(dir, 'http-token'), `http://127.0.0.1:${port}/codex/guard`], { cwd: dir })
        codes.push(ran.code)
        said.push(ran.stderr)
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    expect(codes).toEqual([2, 2, 2])
    for (const stderr of said) expect(stderr).toContain(`the token file ${join(dir, 'http-token')} is a symbolic link; name the file itself`)
    expect(heads).toEqual([])
  })
})
