/**
 * The protected paths (src/protocol/protected-paths.ts) and the workdir rules (src/agents/workdir.ts):
 * which names match, under which spellings, what each refuses and how the refusal reads; that
 * docs/containment.md shows the code's own table; which folders are never a workdir; when a run gets
 * no file access (a home folder); and the file helper's framing bounds.
 */
import { mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { findAccount } from '../../src/agents/user-account.js'
import { SHARED_FOLDERS, SYSTEM_TREES, USER_TREES, checkWorkdir, systemFolder } from '../../src/agents/workdir.js'
import { PROTECTED_NAMES, foldName, hookdStateRoots, hooksRoot, protectedReason, protectionOf } from '../../src/protocol/protected-paths.js'
import { DEFAULT_POLICY, refusal } from '../../src/sidecar/session/policy.js'
import { FrameReader, MAX_FRAME_BYTES, frame } from '../../src/sidecar/http/user-files-wire.js'
import { ROOT } from '../support/processes.js'

const write = (path: string, roots = [hooksRoot('/p/hooks')]): string | undefined => {
  const hit = protectionOf(path, 'write', roots)
  return hit && protectedReason(hit, 'write')
}

describe('protectionOf', () => {
  it('matches a protected name at any depth, and everything under it', () => {
    for (const path of ['/p/.git', '/p/.git/config', '/p/sub/.git/hooks/pre-commit', '/p/package.json', '/p/web/app/package.json', '.envrc', 'a/.claude/settings.json']) {
      expect(protectionOf(path, 'write'), path).toBeDefined()
    }
  })

  it('takes the spellings a case-insensitive or normalising file system treats as the same name', () => {
    for (const spelling of ['.GIT', '.Git', '.git.', '.git ', '.git. .', '.g\u200cit', '\ufeff.git', '.git::$INDEX_ALLOCATION', '．ｇｉｔ', 'PACKAGE.JSON', 'pac\u200dkage.json', '.envrc.']) {
      expect(protectionOf(`/p/${spelling}/x`, 'write'), JSON.stringify(spelling)).toBeDefined()
    }
    expect(foldName('.GIT. ')).toBe('.git')
    expect(foldName('.huſky')).toBe('.husky')
    // A Windows host reads a backslash as a separator.
    expect(protectionOf('sub\\.git\\config', 'write')?.rule).toBe('under .git/')
  })

  it('leaves alone names that only start or end alike', () => {
    for (const path of ['/p/.gitignore', '/p/.github-cache/x', '/p/my.git/x', '/p/package.json.bak/x', '/p/old-package.json', '/p/src/claude.ts', '/p/.hookdrc', '/p/notes.txt']) {
      expect(protectionOf(path, 'write'), path).toBeUndefined()
    }
  })

  it('refuses reads only of what refuses reads: hookd\'s own folder, the old settings file with the token', () => {
    expect(protectionOf('/p/.hookd/http-token', 'read')?.rule).toBe('under .hookd/')
    expect(protectionOf('/p/.claude/settings.local.json', 'read')?.rule).toBe('.claude/settings.local.json')
    for (const path of ['/p/.git/config', '/p/package.json', '/p/.claude/settings.json', '/p/hooks/guard/index.js']) {
      expect(protectionOf(path, 'read', [hooksRoot('/p/hooks')]), path).toBeUndefined()
    }
  })

  it('protects roots wherever they are, as folders or files, and only on absolute paths', () => {
    expect(write('/p/hooks/guard/index.js')).toBe(
      'hookd never lets hooks write under the hooks folder /p/hooks/ (hookd serves hooks from there and reloads them when they change); write somewhere else in the project',
    )
    expect(write('/p/Hooks/x')).toBeDefined()
    expect(write('/p/hooks-old/x')).toBeUndefined()
    expect(write('hooks/guard/index.js')).toBeUndefined()
    const token = { path: '/srv/token', refuses: 'read-write' as const, what: "hookd's HTTP token", why: 'whoever holds it can post events', file: true }
    const hit = protectionOf('/srv/token', 'read', [token])
    expect(hit && protectedReason(hit, 'read')).toBe(
      "hookd never lets hooks read or write hookd's HTTP token /srv/token (whoever holds it can post events); a hook that needs a secret gets it through ctx.env",
    )
  })

  it("knows hookd's state folders: $HOOKD_STATE_DIR, else ~/.local/state/hookd, and ~/.config/hookd", () => {
    expect(hookdStateRoots({}, '/home/u').map((r) => [r.path, r.refuses])).toEqual([
      ['/home/u/.local/state/hookd', 'read-write'],
      ['/home/u/.config/hookd', 'read-write'],
    ])
    expect(hookdStateRoots({ HOOKD_STATE_DIR: '/var/lib/hookd' }, '/home/u').map((r) => r.path)).toEqual(['/var/lib/hookd', '/home/u/.config/hookd'])
    expect(hookdStateRoots({ HOOKD_STATE_DIR: 'relative' }, '/home/u').map((r) => r.path)).toEqual(['/home/u/.local/state/hookd', '/home/u/.config/hookd'])
    expect(hookdStateRoots({}, '')).toEqual([])
  })
})

describe('the policy refuses protected paths whatever the session allows', () => {
  const place = { workdir: '/p', roots: [hooksRoot('/p/hooks'), ...hookdStateRoots({}, '/home/u')] }
  const rw = { ...DEFAULT_POLICY, file: 'read-write' as const }

  it('says what was refused, why, and what to do instead', () => {
    expect(refusal(rw, 'file.write', ['.git/config', 'x'], place)).toBe(
      "ctx.file.write('.git/config') refused: hookd never lets hooks write under .git/ (git runs hooks and reads its config from there); write somewhere else in the project",
    )
    expect(refusal(rw, 'file.append', ['a/./b/../package.json', 'x'], place)).toBe(
      "ctx.file.append('a/./b/../package.json') refused: hookd never lets hooks write package.json (npm runs its scripts on install and test); write somewhere else in the project",
    )
    expect(refusal(rw, 'file.exists', ['.hookd/hookd.sock'], place)).toMatch(/^ctx\.file\.exists\('\.hookd\/hookd\.sock'\) refused: hookd never lets hooks read or write under \.hookd\//)
    expect(refusal(rw, 'file.write', ['notes.txt', 'x'], place)).toBeUndefined()
    expect(refusal(rw, 'file.read', ['.git/config'], place)).toBeUndefined()
  })

  it("matches the workdir's own folders too: a workdir inside .git/ or inside the hooks folder writes nothing", () => {
    expect(refusal(rw, 'file.write', ['config', 'x'], { ...place, workdir: '/p/.git' })).toContain('under .git/')
    expect(refusal(rw, 'file.write', ['index.js', 'x'], { ...place, workdir: '/p/hooks/guard' })).toContain('under the hooks folder /p/hooks/')
    expect(refusal(rw, 'file.read', ['tokens/a'], { ...place, workdir: '/home/u/.config/hookd' })).toContain("under hookd's configuration folder /home/u/.config/hookd/")
  })

  it('without a place (a tenant ceiling), names still match the path the hook gave', () => {
    expect(refusal(rw, 'file.write', ['sub/.husky/pre-commit', 'x'])).toContain('under .husky/')
  })
})

describe('the table in docs/containment.md', () => {
  it('says what the code says, row for row', async () => {
    const doc = await readFile(join(ROOT, 'docs', 'containment.md'), 'utf8')
    const section = doc.split('\n### Protected names\n')[1]?.split('\n### ')[0] ?? ''
    const rows = section
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .map((line) => line.split('|').slice(1, -1).map((cell) => cell.trim()))
      .filter((cells) => cells.length === 4)
    expect(rows).toEqual(PROTECTED_NAMES.map((p) => [`\`${p.name}\``, p.group, p.refuses === 'read-write' ? 'reads and writes' : 'writes', p.why]))
  })

  it('lists every folder that is never a workdir', async () => {
    const doc = await readFile(join(ROOT, 'docs', 'containment.md'), 'utf8')
    const section = doc.split('\n### Workdirs\n')[1]?.split('\n### ')[0] ?? ''
    for (const folder of [...SYSTEM_TREES, ...SHARED_FOLDERS, ...USER_TREES]) expect(section, folder).toContain(`\`${folder}\``)
  })
})

describe('systemFolder', () => {
  it('refuses system folders and what lies below them, shared folders themselves, and nothing of users\' own', () => {
    expect(systemFolder('/etc')).toBe('a system folder (/etc)')
    expect(systemFolder('/etc/ssh')).toBe('inside a system folder (/etc)')
    expect(systemFolder('/var/lib/dpkg')).toBe('inside a system folder (/var)')
    expect(systemFolder('/proc/1/root')).toBe('inside a system folder (/proc)')
    expect(systemFolder('/tmp')).toBe('a folder every user shares (/tmp)')
    expect(systemFolder('/home')).toBe('a folder every user shares (/home)')
    expect(systemFolder('/dev/shm')).toBe('a folder every user shares (/dev/shm)')
    expect(systemFolder('/opt')).toBe('a system folder (/opt)')
    for (const fine of ['/tmp/build', '/var/tmp/x', '/dev/shm/suite/project', '/home/u/project', '/var/home/u/p', '/opt/app', '/srv/site', '/etcetera', '/usrs/x']) {
      expect(systemFolder(fine), fine).toBeUndefined()
    }
  })
})

describe('checkWorkdir', () => {
  let scratch = ''
  let home = ''
  let passwd = ''
  const uid = process.geteuid?.() ?? 0

  beforeAll(async () => {
    scratch = await realpath(await mkdtemp(join(tmpdir(), 'hookd-workdir-')))
    home = join(scratch, 'home', 'u')
    await mkdir(join(home, 'project'), { recursive: true })
    passwd = join(scratch, 'passwd')
    await writeFile(passwd, `other:x:4242:4242::/nowhere:/bin/sh\nu:x:${uid}:${uid}:A User:${home}:/bin/sh\n`)
  })
  afterAll(() => rm(scratch, { recursive: true, force: true }))

  it('pins the real folder and gives its files when it is a project inside the home folder', async () => {
    const checked = await checkWorkdir(join(home, 'project'), 'cwd', { peer: { uid }, passwd })
    expect(checked).toEqual({ real: join(home, 'project'), pin: { dev: expect.any(String), ino: expect.any(String) }, uid, home })
  })

  it('opens the home folder, and the folders above it, with no file access', async () => {
    expect((await checkWorkdir(home, 'cwd', { peer: { uid }, passwd })).noFiles).toBe(
      `the session's folder ${home} is the home folder of uid ${uid}, which holds keys and shell start-up files; run the agent in a project folder inside it`,
    )
    expect((await checkWorkdir(dirname(home), 'cwd', { peer: { uid }, passwd })).noFiles).toBe(
      `the session's folder ${dirname(home)} is above ${home}, the home folder of uid ${uid}, which holds keys and shell start-up files; run the agent in a project folder inside it`,
    )
  })

  it('refuses when the peer is unknown: an unknown user owns nothing', async () => {
    await expect(checkWorkdir(join(home, 'project'), 'cwd', { peer: { uid: undefined }, passwd })).rejects.toThrow(
      "hookd cannot tell which user posted this event (the kernel's socket tables do not list its connection), and an unknown user owns no folder; post from this machine, as the agent's own user",
    )
  })

  it("refuses a folder another user owns, naming both uids", async () => {
    await expect(checkWorkdir(join(home, 'project'), 'cwd', { peer: { uid: 4242 }, passwd })).rejects.toThrow(
      `the event's cwd '${join(home, 'project')}' belongs to uid ${uid}, not to uid 4242, who posted the event; hooks work only in folders of the agent's own user`,
    )
  })

  it('refuses a system folder by its real path, however the event names it', async () => {
    const { symlink } = await import('node:fs/promises')
    await symlink('/etc', join(scratch, 'looks-fine'))
    await expect(checkWorkdir(join(scratch, 'looks-fine'), 'cwd', { passwd })).rejects.toThrow(
      `the event's cwd '${join(scratch, 'looks-fine')}' is a system folder (/etc), which hookd never makes a workdir for hooks; run the agent in a project folder`,
    )
  })
})

describe('findAccount', () => {
  it('reads passwd(5) lines, skipping ones that do not fit', () => {
    const text = ['broken', 'x:x:abc:1::/h:/bin/sh', 'norel:x:7:7::relative:/bin/sh', 'u:x:7:70:User:/home/u:/bin/sh'].join('\n')
    expect(findAccount(text, 7)).toEqual({ name: 'u', uid: 7, gid: 70, home: '/home/u' })
    expect(findAccount(text, 8)).toBeUndefined()
  })
})

describe("the file helper's frames", () => {
  it('reassembles frames split anywhere, and refuses one over the limit before reading it', () => {
    const reader = new FrameReader()
    const bytes = Buffer.concat([frame({ kind: 'ready' }), frame({ a: 'é'.repeat(100) })])
    const out: unknown[] = []
    for (let i = 0; i < bytes.length; i += 7) out.push(...reader.push(bytes.subarray(i, i + 7)))
    expect(out).toEqual([{ kind: 'ready' }, { a: 'é'.repeat(100) }])
    const head = Buffer.alloc(4)
    head.writeUInt32BE(MAX_FRAME_BYTES + 1)
    expect(() => new FrameReader().push(head)).toThrow(`a frame of ${MAX_FRAME_BYTES + 1} bytes, over the limit of ${MAX_FRAME_BYTES}`)
  })
})
