/**
 * hook.json's "permissions" block (src/protocol/hook-permissions.ts): its schema, its parsed form, what a
 * new version asks for beyond an older one, and the rules that judge a capability call against it
 * (src/sidecar/session/permission-rules.ts).
 */
import { describe, expect, it } from 'vitest'
import { issueText } from '../../src/protocol/issue-text.js'
import { globMatches, permissionRefusal } from '../../src/sidecar/session/permission-rules.js'
import { type HookPermissions, MAX_ENV_NAMES, MAX_GLOB_CHARS, NO_PERMISSIONS, parsePermissions, widenedPermissions } from '../../src/protocol/hook-permissions.js'

function parsed(raw: unknown): HookPermissions {
  const read = parsePermissions(raw)
  if (!read.ok) throw new Error(issueText(read.error, 'permissions'))
  return read.permissions
}

function problem(raw: unknown): string {
  const read = parsePermissions(raw)
  if (read.ok) throw new Error('expected the block to be refused')
  return issueText(read.error, 'permissions')
}

describe('the permissions block', () => {
  it('parses to what it writes, and nothing else: absent is not permitted', () => {
    expect(parsed({})).toEqual(NO_PERMISSIONS)
    expect(
      parsed({
        files: 'read',
        paths: ['src/**', 'package.json', 'src/**'],
        origins: ['HTTPS://API.Example.com:443', 'http://127.0.0.1:8080'],
        env: ['GITHUB_TOKEN'],
        confirm: true,
        decide: { refuse: true, rewriteArguments: ['write_file', 'shell'] },
      }),
    ).toEqual({
      files: 'read',
      paths: ['package.json', 'src/**'],
      origins: ['http://127.0.0.1:8080', 'https://api.example.com'],
      env: ['GITHUB_TOKEN'],
      confirm: true,
      notify: false,
      decide: { refuse: true, approve: false, rewriteArguments: ['shell', 'write_file'], rewriteResults: false, rewriteModelText: false, addContext: false },
    })
    expect(parsed({ decide: { rewriteArguments: ['shell', '*'] } }).decide.rewriteArguments).toEqual(['*'])
  })

  it('refuses a glob of more than 8 wildcards, whose matching would cost the sidecar per file call', () => {
    expect(problem({ files: 'read', paths: ['*a'.repeat(9)] })).toBe("permissions.paths[0]: a path glob holds at most 8 wildcards ('*', '**', '?')")
    expect(parsePermissions({ files: 'read', paths: ['src/**/*.ts', '**/a?/*/*/*/*/*.js'] }).ok).toBe(true)
  })

  it('refuses unknown keys by name, at the top and in "decide"', () => {
    expect(problem({ file: 'read' })).toBe('permissions: Unrecognized key: "file"')
    expect(problem({ decide: { rewrite: true } })).toBe('permissions.decide: Unrecognized key: "rewrite"')
  })

  it('is bounded, and says what fits', () => {
    expect(problem({ env: Array.from({ length: MAX_ENV_NAMES + 1 }, (_, i) => `N${i}`) })).toBe(`permissions.env: at most ${MAX_ENV_NAMES} env names`)
    expect(problem({ files: 'read', paths: ['a'.repeat(MAX_GLOB_CHARS + 1)] })).toBe(`permissions.paths[0]: a path glob is at most ${MAX_GLOB_CHARS} characters`)
    expect(problem({ env: ['1X'] })).toBe('permissions.env[0]: an env name is letters, digits and _, not starting with a digit')
    expect(problem({ files: 'write' })).toBe('permissions.files: expected "none", "read" or "read-write"')
    expect(problem({ confirm: 'yes' })).toBe('permissions.confirm: expected true or false')
  })

  it('keeps paths inside the workdir, and asks for file access with them', () => {
    expect(problem({ files: 'read', paths: ['../x'] })).toBe("permissions.paths[0]: a path glob stays inside the workdir: no '..' segment")
    expect(problem({ files: 'read', paths: ['/etc/*'] })).toBe('permissions.paths[0]: a path glob is relative to the workdir, not absolute')
    expect(problem({ paths: ['src/**'] })).toBe('permissions.paths: "paths" narrows file access: give "files": "read" or "read-write" with it')
  })

  it('takes origins only, not URLs', () => {
    expect(problem({ origins: ['https://example.com/api'] })).toBe(
      'permissions.origins[0]: "https://example.com/api" is not an origin; write scheme://host[:port], e.g. "https://api.example.com"',
    )
    expect(problem({ origins: ['file:///etc'] })).toMatch(/is not an origin/)
    expect(parsed({ origins: ['https://example.com/'] }).origins).toEqual(['https://example.com'])
  })
})

describe('widenedPermissions', () => {
  const base = parsed({ files: 'read', paths: ['src/**'], origins: ['https://a.example'], env: ['A'], decide: { refuse: true, rewriteArguments: ['write_file'] } })

  it('is empty when the new version asks for no more (less, or the same)', () => {
    expect(widenedPermissions(base, base)).toEqual([])
    expect(widenedPermissions(base, NO_PERMISSIONS)).toEqual([])
    expect(widenedPermissions(undefined, base)).toEqual([])
    expect(widenedPermissions(parsed({ decide: { rewriteModelText: true } }), parsed({ decide: { addContext: true } }))).toEqual([])
  })

  it('names each thing the new version may do that the old may not', () => {
    const next = parsed({
      files: 'read-write',
      origins: ['https://a.example', 'https://b.example'],
      env: ['A', 'B'],
      confirm: true,
      notify: true,
      decide: { refuse: true, rewriteArguments: ['shell', 'write_file'], rewriteResults: true, rewriteModelText: true },
    })
    expect(widenedPermissions(base, next)).toEqual([
      'reads and writes files (was: reads files)',
      'files anywhere in the workdir the session allows (was: only src/**)',
      'fetches from https://b.example',
      'reads env B',
      'asks the person (ctx.confirm)',
      'notifies the person (ctx.notify)',
      'rewrites the arguments of shell',
      "rewrites tools' results",
      "rewrites the model's text (system prompt, messages, answers)",
    ])
    expect(widenedPermissions(base, parsed({ files: 'read', paths: ['src/**', 'docs/**'] }))).toEqual(['file paths docs/**'])
    expect(widenedPermissions(base, parsed({ decide: { rewriteArguments: ['*'] } }))).toEqual(["rewrites every tool's arguments"])
    expect(widenedPermissions(base, undefined)).toEqual(['declares no permissions, so it may do whatever the session allows'])
  })
})

describe('path globs (permission-rules.ts)', () => {
  it('match within a folder with * and ?, across folders with **, and name a folder with dir/**', () => {
    const yes: Array<[string, string]> = [
      ['src/**', 'src/a.ts'],
      ['src/**', 'src/deep/er/b.ts'],
      ['src/**', 'src'],
      ['*.md', 'README.md'],
      ['**/*.md', 'README.md'],
      ['**/*.md', 'docs/x/y.md'],
      ['docs/?.md', 'docs/a.md'],
      ['logs/**/*.log', 'logs/a.log'],
      ['**', '.'],
    ]
    const no: Array<[string, string]> = [
      ['src/**', 'srcx/a.ts'],
      ['*.md', 'docs/a.md'],
      ['docs/?.md', 'docs/ab.md'],
      ['src/*.ts', 'src/a/b.ts'],
      ['package.json', 'package.json5'],
    ]
    for (const [glob, path] of yes) expect(globMatches(glob, path), `${glob} ${path}`).toBe(true)
    for (const [glob, path] of no) expect(globMatches(glob, path), `${glob} ${path}`).toBe(false)
  })

  it('take time bounded by the lengths, whatever the glob (no backtracking)', () => {
    const glob = '*a'.repeat(60)
    const path = 'a'.repeat(16 * 1024)
    expect(globMatches(glob, `${path}b`)).toBe(false)
    expect(globMatches(`**${'**a'.repeat(40)}`, `${'a/'.repeat(4000)}b`)).toBe(false)
  })
})

describe('permissionRefusal', () => {
  const granted = parsed({ files: 'read', paths: ['src/**'], origins: ['https://a.example'], decide: {} })

  it('judges each capability by the permission its record names, and nothing for a hook without a block', () => {
    expect(permissionRefusal(granted, 'h', 'file.read', ['src/x.ts'])).toBeUndefined()
    expect(permissionRefusal(granted, 'h', 'file.read', ['./src/../src/x.ts'])).toBeUndefined()
    expect(permissionRefusal(granted, 'h', 'file.read', ['src/../secret.txt'])).toMatch(/declares no path that matches 'secret.txt'/)
    expect(permissionRefusal(granted, 'h', 'http.fetch', ['https://a.example/x'])).toBeUndefined()
    expect(permissionRefusal(granted, 'h', 'http.fetch', ['https://b.example/x'])).toMatch(/does not declare origin https:\/\/b.example/)
    expect(permissionRefusal(granted, 'h', 'notify', [{ title: 't' }])).toMatch(/does not declare "notify": true/)
    expect(permissionRefusal(undefined, 'h', 'file.write', ['anything', 'x'])).toBeUndefined()
  })
})
