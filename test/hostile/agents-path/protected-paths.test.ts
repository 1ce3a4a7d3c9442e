/**
 * gRPC sessions and the protected paths (src/protocol/protected-paths.ts): whatever the host's policy,
 * the sidecar refuses a hook's writes where something outside the sandbox runs what it finds (git's
 * hooks and config, an agent's settings, package scripts, the hooks folder) and its reads of hookd's
 * token, under every spelling a case-insensitive or normalising file system takes for the same name,
 * before the call reaches the host; the host library's default handlers catch the same through a
 * symbolic link, by real path. The workdir here holds the sidecar's hooks folder, as in the quickstart.
 */
import { cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { FileHandlers } from '../../../src/host/index.js'
import { quoted } from '../../../src/protocol/text.js'
import { type Running, startSidecar } from '../../support/sidecar.js'
import { FIXTURES, HOSTILE_LIMITS, expectServing, runHooks } from '../support.js'

let running: Running
let workdir: string
let hooks: string
const TOKEN = 'hkd_protected-paths-token-0123456789abcdefghijklmn'

beforeAll(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'hookd-protected-'))
  hooks = join(workdir, 'hooks')
  for (const name of ['protected-writes', 'ordinary']) await cp(join(FIXTURES, name), join(hooks, name), { recursive: true })
  await mkdir(join(workdir, '.git', 'hooks'), { recursive: true })
  await writeFile(join(workdir, '.git', 'config'), '[core]\n')
  await symlink('.git', join(workdir, 'linked-git'))
  await mkdir(join(workdir, '.hookd'))
  await writeFile(join(workdir, '.hookd', 'http-token'), TOKEN, { mode: 0o600 })
  await writeFile(join(workdir, 'package.json'), '{}\n')
  running = await startSidecar({ hooks, workers: 1, limits: HOSTILE_LIMITS, watch: false })
}, 60_000)

afterAll(async () => {
  await running?.stop()
  if (workdir) await rm(workdir, { recursive: true, force: true })
})

const advice = 'write somewhere else in the project'
const git = (path: string): string => `${path}: ctx.file.write(${quoted(path)}) refused: hookd never lets hooks write under .git/ (git runs hooks and reads its config from there); ${advice}`

/** What protected-writes reports, under a policy that allows writing. */
function expected(): string[] {
  return [
    git('.git/config'),
    git('.GIT/config'),
    git('.git./config'),
    git('.g\u200cit/config'),
    git('sub/.git/hooks/post-checkout'),
    `package.json: ctx.file.write('package.json') refused: hookd never lets hooks write package.json (npm runs its scripts on install and test); ${advice}`,
    `web/package.json: ctx.file.write('web/package.json') refused: hookd never lets hooks write package.json (npm runs its scripts on install and test); ${advice}`,
    `.claude/settings.json: ctx.file.write('.claude/settings.json') refused: hookd never lets hooks write under .claude/ (Claude Code runs the commands its settings name); ${advice}`,
    `.envrc: ctx.file.write('.envrc') refused: hookd never lets hooks write .envrc (direnv runs it when a shell enters the folder); ${advice}`,
    `hooks/ordinary/index.js: ctx.file.write('hooks/ordinary/index.js') refused: hookd never lets hooks write under the hooks folder ${hooks}/ (hookd serves hooks from there and reloads them when they change); ${advice}`,
    git('linked-git/config'),
    'notes/plain.txt: written',
    "token: ctx.file.read('.hookd/http-token') refused: hookd never lets hooks read or write under .hookd/ (hookd keeps its HTTP token, sockets and state there); a hook that needs a secret gets it through ctx.env",
  ]
}

describe('protected paths over gRPC', () => {
  it("refuses writes that would run outside the sandbox for a host whose policy is read-write, and the token's read", async () => {
    const run = await runHooks(running, ['protected-writes'], { workdir, policy: { file: 'read-write' } })
    expect(run.diagnostics).toEqual([])
    expect((run.result.arguments as { results: string[] }).results).toEqual(expected())
    expect(await readFile(join(workdir, '.git', 'config'), 'utf8')).toBe('[core]\n')
    expect(await readFile(join(workdir, 'package.json'), 'utf8')).toBe('{}\n')
    expect(await readFile(join(workdir, 'notes', 'plain.txt'), 'utf8')).toBe('echo owned\n')
    expect((await readdir(workdir)).sort()).toEqual(['.git', '.hookd', 'hooks', 'linked-git', 'notes', 'package.json'])
    expect(await readdir(join(workdir, '.git', 'hooks'))).toEqual([])
    expect(await readFile(join(hooks, 'ordinary', 'index.js'), 'utf8')).toBe(await readFile(join(FIXTURES, 'ordinary', 'index.js'), 'utf8'))
    await expectServing(running)
  })

  it('refuses in the sidecar, before the host is asked; only a symbolic link needs the host to see where it leads', async () => {
    const asked: string[] = []
    const file: Partial<FileHandlers> = {
      write: async (path) => {
        asked.push(path)
        if (path === 'linked-git/config') {
          const { CapabilityError } = await import('../../../src/host/index.js')
          throw new CapabilityError('denied', 'the host refuses it')
        }
      },
      read: async (path) => {
        asked.push(path)
        return 'the host answered'
      },
    }
    const run = await runHooks(running, ['protected-writes'], { workdir, policy: { file: 'read-write' }, capabilities: { file } })
    expect(asked).toEqual(['linked-git/config', 'notes/plain.txt'])
    expect((run.result.arguments as { results: string[] }).results.at(-1)).toMatch(/^token: ctx\.file\.read\('\.hookd\/http-token'\) refused: hookd never lets hooks read/)
    await expectServing(running)
  })
})
