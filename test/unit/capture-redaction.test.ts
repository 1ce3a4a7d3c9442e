/**
 * What keeps secrets and floods out of a capture folder, in memory: the credential redactor's shapes,
 * names and literals (src/testing/credential-redactor.ts), what it leaves alone, and inputs built to make
 * a careless pattern backtrack (each would take minutes if one did); the sink's bounds on files, bytes
 * and writes under way, with its count of what it did not write (capture-sink.ts); and the path move an
 * agent-event case replays with (run-agent-case.ts).
 */
import { mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { CaptureSink } from '../../src/testing/capture-sink.js'
import { credentialRedactor, secretEnv } from '../../src/testing/credential-redactor.js'
import { folders } from '../../src/testing/front-door-capture.js'
import { movePaths } from '../../src/testing/run-agent-case.js'

const redact = (value: unknown, literals: Array<{ label: string; value: string }> = []): unknown => credentialRedactor(literals).redact(value)

describe('credentialRedactor', () => {
  it.each([
    ['an Anthropic key', `export ANTHROPIC_API_KEY=sk-ant-api03-${'x'.repeat(40)}`, 'export ANTHROPIC_API_KEY=<redacted anthropic-key>'],
    ['an OpenAI key', `key sk-proj-${'A1b2'.repeat(10)} here`, 'key <redacted openai-key> here'],
    ['a GitHub token', `git clone https://x-access:ghp_${'a'.repeat(36)}@github.com/o/r`, 'git clone https://x-access:<redacted github-token>@github.com/o/r'],
    ['a bare GitHub token', `GH=ghp_${'a'.repeat(36)}`, 'GH=<redacted github-token>'],
    ['a fine-grained GitHub token', `github_pat_${'A'.repeat(40)}`, '<redacted github-token>'],
    ['a GitLab token', `glpat-${'z'.repeat(20)}`, '<redacted gitlab-token>'],
    ['a Slack token', 'xoxb-123456789012-abcdefABCDEF', '<redacted slack-token>'],
    ['an AWS key id', 'aws AKIAIOSFODNN7EXAMPLE done', 'aws <redacted aws-key-id> done'],
    ['a Google API key', `AIza${'S'.repeat(35)}`, '<redacted google-api-key>'],
    ['a Stripe key', `sk_live_${'4'.repeat(24)}`, '<redacted stripe-key>'],
    ['an npm token', `//registry.npmjs.org/:_authToken=npm_${'n'.repeat(36)}`, '//registry.npmjs.org/:_authToken=<redacted npm-token>'],
    ["hookd's own token shape", `hkd_${'t'.repeat(43)}`, '<redacted hookd-token>'],
    ['a JWT', 'jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U', 'jwt <redacted jwt>'],
    ['a bearer header', 'curl -H "Authorization: Bearer abc.def-ghi_jkl" x', 'curl -H "Authorization: Bearer <redacted bearer>" x'],
    ['a basic header', 'Authorization: Basic dXNlcjpwYXNzd29yZA==', 'Authorization: Basic <redacted bearer>'],
    ["a hookd-hmac header", 'authorization: hookd-hmac ts=1,nonce=ab,mac=cd', 'authorization: hookd-hmac <redacted>'],
    ['a password in a URL', 'postgres://app:hunter22@db:5432/x', 'postgres://app:<redacted password>@db:5432/x'],
    ['a secret-named assignment', 'DB_PASSWORD=hunter22 ./run', 'DB_PASSWORD=<redacted> ./run'],
    ['a secret-named JSON pair in text', '{"client_secret": "s3cr3t-v4lue", "id": 4}', '{"client_secret": "<redacted>", "id": 4}'],
    ['a private key', 'a\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nxyz\n-----END RSA PRIVATE KEY-----\nb', 'a\n<redacted private-key>\nb'],
    ['a private key cut off', 'x -----BEGIN PRIVATE KEY-----\nMIIE...', 'x <redacted private-key>'],
  ])('replaces %s', (_what, text, expected) => {
    expect(redact({ text })).toEqual({ text: expected })
  })

  it('replaces the value under a key that names a secret, in any object, and keeps "__proto__" a key', () => {
    const value = JSON.parse('{"headers":{"Authorization":"Token abc","X-Api-Key":"k1234"},"password":"p","__proto__":{"token":"t0"},"tokens":"many","max_tokens":100}')
    const out = redact(value) as Record<string, unknown>
    expect(out).toEqual(JSON.parse('{"headers":{"Authorization":"<redacted>","X-Api-Key":"<redacted>"},"password":"<redacted>","__proto__":{"token":"<redacted>"},"tokens":"many","max_tokens":100}'))
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype)
  })

  it('replaces literal values as themselves, escaped in JSON and URL-encoded, and leaves placeholders alone', () => {
    const token = 'hkd_literal "token"/value'
    const text = `a ${token} b ${JSON.stringify(token).slice(1, -1)} c ${encodeURIComponent(token)}`
    expect(redact({ text, authorization: 'Bearer <env CI>' }, [{ label: 'hookd token', value: token }])).toEqual({
      text: 'a <hookd token> b <hookd token> c <hookd token>',
      authorization: 'Bearer <env CI>',
    })
    // A literal too short to be a token is no literal.
    expect(redact({ text: 'abc abc' }, [{ label: 'x', value: 'abc' }])).toEqual({ text: 'abc abc' })
  })

  it('leaves ordinary text alone', () => {
    const ordinary = {
      command: 'git log --author alice && npm test -- --max_tokens=1024',
      text: 'the token count is 5; key: value; see https://example.com/a:b@c',
      tool_use_id: 'toolu_01ABCDEF',
      transcript_path: '/home/me/.claude/projects/x/session.jsonl',
      skip: 'sk-short',
    }
    expect(redact(ordinary)).toEqual(ordinary)
  })

  it('says which kinds it replaced', () => {
    const r = credentialRedactor([{ label: 'hookd token', value: 'hkd_this-is-the-token' }])
    r.redact({ a: 'hkd_this-is-the-token', b: `ghp_${'q'.repeat(36)}`, password: 'x' })
    expect([...r.replaced]).toEqual(['hookd token', 'github-token', 'named'])
  })

  it('stays linear on text built to make a pattern backtrack', () => {
    const floods = [
      'a'.repeat(300_000),
      'eyJ-'.repeat(80_000),
      'sk-'.repeat(100_000),
      `${'A'.repeat(200_000)}=`,
      `${'x_'.repeat(100_000)}token`,
      `${'-----BEGIN PRIVATE KEY-----'.repeat(10_000)}`,
      `${'https://'.repeat(40_000)}`,
      `${'http://u:'.repeat(30_000)}`,
      `${'Bearer '.repeat(50_000)}`,
    ]
    for (const text of floods) expect(typeof (redact({ text }) as { text: string }).text).toBe('string')
  })
})

describe('secretEnv', () => {
  it('takes the values whose names say they are secrets, long enough to be one', () => {
    expect(secretEnv({ ANTHROPIC_API_KEY: 'sk-ant-123456', GITHUB_TOKEN: 'ghp_12345678', PATH: '/usr/bin:/bin', SHORT_SECRET: 'abc', HOME: '/root', DB_PASSWORD: 'hunter22' })).toEqual({
      ANTHROPIC_API_KEY: 'sk-ant-123456',
      GITHUB_TOKEN: 'ghp_12345678',
      DB_PASSWORD: 'hunter22',
    })
  })
})

describe('CaptureSink', () => {
  let dir = ''
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hookd-sink-'))
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  it('writes at most maxPending at once, maxFiles and maxBytes in all, and counts and says the rest once each', async () => {
    const lines: string[] = []
    const pending = new CaptureSink(join(dir, 'pending'), (l) => lines.push(l), { maxPending: 4 })
    for (let i = 0; i < 50; i++) pending.write(['a', 'b'], 'beforeRun', 'a beforeRun call', () => ({ i }))
    await pending.close()
    expect(pending.written).toBe(4)
    expect(pending.unwritten).toBe(46)
    expect(await readdir(join(dir, 'pending', 'a', 'b'))).toHaveLength(4)
    expect((await stat(join(dir, 'pending', 'a'))).mode & 0o777).toBe(0o700)
    expect(lines).toEqual([
      `4 captured cases are still being written to ${join(dir, 'pending')}; calls past that are counted, not written, until the disk catches up`,
      `capture: 46 cases were not written to ${join(dir, 'pending')} (46 while the disk was behind); 4 written`,
    ])

    const byBytes = new CaptureSink(join(dir, 'bytes'), (l) => lines.push(l), { maxBytes: 1000 })
    let built = 0
    for (let i = 0; i < 20; i++) {
      byBytes.write([], 'beforeRun', 'a beforeRun call', () => ((built += 1), { text: 'x'.repeat(300) }))
      await new Promise((r) => setTimeout(r, 5))
    }
    await byBytes.close()
    expect(byBytes.written).toBe(3)
    expect(byBytes.unwritten).toBe(17)
    // Past the cap, a case is not even built.
    expect(built).toBe(4)
    expect(lines.at(-1)).toBe(`capture: 17 cases were not written to ${join(dir, 'bytes')} (17 past the byte cap); 3 written`)

    const broken = new CaptureSink(join(dir, 'broken'), (l) => lines.push(l))
    broken.write([], 'beforeRun', 'a beforeRun call', () => {
      throw new Error('the session sent 65 environment values')
    })
    broken.write([], 'x', 'a beforeToolExecute call', () => ({ text: 'x'.repeat(5 * 1024 * 1024) }))
    await broken.close()
    expect(lines.slice(-3)).toEqual([
      `cannot write a captured case to ${join(dir, 'broken')}: the session sent 65 environment values; calls are no longer all captured`,
      expect.stringMatching(/^a beforeToolExecute call is \d+ characters as a test case, over the 4194304 written; it was not captured$/),
      `capture: 2 cases were not written to ${join(dir, 'broken')} (1 failed, 1 too large); 0 written`,
    ])
  })
})

describe('CaptureSink, with a link planted in its folder', () => {
  it("writes nothing through it, and says why once", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-sink-link-'))
    try {
      const elsewhere = join(dir, 'elsewhere')
      await mkdir(join(dir, 'captured'), { recursive: true })
      await mkdir(elsewhere)
      await symlink(elsewhere, join(dir, 'captured', 'claude-code'))
      const lines: string[] = []
      const sink = new CaptureSink(join(dir, 'captured'), (l) => lines.push(l))
      sink.write(['claude-code', 'guard'], 'beforeRun', 'a beforeRun call', () => ({ a: 1 }))
      sink.write(['codex', 'guard'], 'beforeRun', 'a beforeRun call', () => ({ a: 1 }))
      await sink.close()
      expect(await readdir(elsewhere)).toEqual([])
      expect(await readdir(join(dir, 'captured', 'codex', 'guard'))).toHaveLength(1)
      expect(lines).toEqual([
        `cannot write a captured case to ${join(dir, 'captured')}: ${join(dir, 'captured', 'claude-code')} is a link; capture writes only into folders of its own; calls are no longer all captured`,
        `capture: 1 case was not written to ${join(dir, 'captured')} (1 failed); 1 written`,
      ])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})

describe('folders', () => {
  it('makes a route one folder name that cannot climb out, and keeps long ones apart', () => {
    expect(folders('claude-code', 'guard,audit')).toEqual(['claude-code', 'guard,audit'])
    expect(folders('codex', 'profile/strict')).toEqual(['codex', 'profile-strict'])
    expect(folders('codex', '..')).toEqual(['codex', '_..'])
    expect(folders('codex', '../x/y')).toEqual(['codex', '_..-x-y'])
    const a = folders('codex', `${'g'.repeat(150)}a`)[1] as string
    const b = folders('codex', `${'g'.repeat(150)}b`)[1] as string
    expect(a.length).toBeLessThanOrEqual(120)
    expect(a).not.toBe(b)
  })
})

describe('movePaths', () => {
  it('moves the folder and paths below it in every string, and nothing that only starts the same', () => {
    expect(movePaths({ cwd: '/home/u/p', cmd: 'cd /home/u/p && cat /home/u/p/a.txt /home/u/p2/b', list: ['/home/u/p/'], n: 1 }, ['/home/u/p'], '/tmp/case')).toEqual({
      cwd: '/tmp/case',
      cmd: 'cd /tmp/case && cat /tmp/case/a.txt /home/u/p2/b',
      list: ['/tmp/case/'],
      n: 1,
    })
  })
})
