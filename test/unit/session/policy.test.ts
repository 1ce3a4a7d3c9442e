/** The capability policy (src/sidecar/session/policy.ts): what a session lets a hook ask its host for. */
import { describe, expect, it } from 'vitest'
import { DEFAULT_POLICY, type SessionPolicy, confinedPath, refusal } from '../../../src/sidecar/session/policy.js'

const policy = (overrides: Partial<SessionPolicy> = {}): SessionPolicy => ({ ...DEFAULT_POLICY, ...overrides })

describe('confinedPath', () => {
  it('accepts relative paths inside the workdir, normalised', () => {
    expect(confinedPath('notes.txt')).toEqual({ ok: true, path: 'notes.txt' })
    expect(confinedPath('./src//a/../b.ts')).toEqual({ ok: true, path: 'src/b.ts' })
    expect(confinedPath('a/..')).toEqual({ ok: true, path: '.' })
    expect(confinedPath('..hidden/x')).toEqual({ ok: true, path: '..hidden/x' })
  })

  it('refuses paths that lead outside the workdir, however they get there', () => {
    for (const path of ['..', '../secrets', 'a/../../b', './../x', 'a/b/../../..']) {
      expect(confinedPath(path), path).toEqual({ ok: false, why: 'the path leads outside the workdir' })
    }
  })

  it('refuses absolute paths and paths with a NUL byte', () => {
    expect(confinedPath('/etc/passwd')).toEqual({ ok: false, why: 'absolute paths are refused; use a path relative to the workdir' })
    expect(confinedPath('a\0b')).toEqual({ ok: false, why: 'the path contains a NUL byte' })
  })
})

describe('refusal: files', () => {
  it('lets every file capability through under read-write, inside the workdir', () => {
    const p = policy({ file: 'read-write' })
    expect(refusal(p, 'file.read', ['a.txt'])).toBeUndefined()
    expect(refusal(p, 'file.write', ['out/a.txt', 'text'])).toBeUndefined()
    expect(refusal(p, 'file.exists', ['a.txt'])).toBeUndefined()
    expect(refusal(p, 'file.list', ['.'])).toBeUndefined()
  })

  it('refuses every file capability when the session allows no file access', () => {
    const p = policy({ file: 'none' })
    expect(refusal(p, 'file.read', ['a.txt'])).toBe("ctx.file.read('a.txt') refused: this session allows no file access")
    expect(refusal(p, 'file.exists', ['a.txt'])).toBe("ctx.file.exists('a.txt') refused: this session allows no file access")
    expect(refusal(p, 'file.list', ['.'])).toBe("ctx.file.list('.') refused: this session allows no file access")
    expect(refusal(p, 'file.write', ['a.txt', 'x'])).toBe("ctx.file.write('a.txt') refused: this session allows no file access")
  })

  it('refuses only writes when the session allows reading', () => {
    const p = policy({ file: 'read' })
    expect(refusal(p, 'file.write', ['a.txt', 'x'])).toBe("ctx.file.write('a.txt') refused: this session allows reading files only")
    expect(refusal(p, 'file.read', ['a.txt'])).toBeUndefined()
    expect(refusal(p, 'file.list', ['src'])).toBeUndefined()
  })

  it('refuses paths outside the workdir, and absolute ones, saying which', () => {
    expect(refusal(policy(), 'file.read', ['../secrets'])).toBe("ctx.file.read('../secrets') refused: the path leads outside the workdir")
    expect(refusal(policy(), 'file.write', ['/etc/hosts', 'x'])).toBe(
      "ctx.file.write('/etc/hosts') refused: absolute paths are refused; use a path relative to the workdir",
    )
  })

  it('quotes a hostile path on one readable line: quotes and control characters escaped, long paths cut', () => {
    expect(refusal(policy(), 'file.read', ["/it's\nhere"])).toBe(
      "ctx.file.read('/it\\'s\\u000ahere') refused: absolute paths are refused; use a path relative to the workdir",
    )
    const long = `/${'a'.repeat(300)}`
    expect(refusal(policy(), 'file.read', [long])).toBe(`ctx.file.read('/${'a'.repeat(199)}...') refused: absolute paths are refused; use a path relative to the workdir`)
  })
})

describe('refusal: http', () => {
  const p = policy({ httpOrigins: ['https://api.example.com', 'http://127.0.0.1:8080'] })

  it('lets a URL of an allowed origin through, whatever its path', () => {
    expect(refusal(p, 'http.fetch', ['https://api.example.com/v1/items?q=1', undefined])).toBeUndefined()
    expect(refusal(p, 'http.fetch', ['http://127.0.0.1:8080/', { method: 'POST' }])).toBeUndefined()
    expect(refusal(p, 'http.fetch', ['HTTPS://API.EXAMPLE.COM:443/x', undefined])).toBeUndefined()
  })

  it('refuses another origin, naming it and the allowed ones', () => {
    expect(refusal(p, 'http.fetch', ['https://evil.example/x', undefined])).toBe(
      "ctx.http.fetch('https://evil.example/x') refused: origin https://evil.example is not allowed (allowed origins: https://api.example.com, http://127.0.0.1:8080)",
    )
    expect(refusal(p, 'http.fetch', ['http://api.example.com/', undefined])).toContain('origin http://api.example.com is not allowed')
    expect(refusal(p, 'http.fetch', ['http://127.0.0.1:8081/', undefined])).toContain('origin http://127.0.0.1:8081 is not allowed')
  })

  it('says none are allowed when the session lists no origin', () => {
    expect(refusal(policy(), 'http.fetch', ['https://a.example/', undefined])).toBe(
      "ctx.http.fetch('https://a.example/') refused: origin https://a.example is not allowed (allowed origins: none)",
    )
  })

  it('refuses what is not an absolute http(s) URL', () => {
    for (const url of ['/relative', 'ftp://files.example/x', 'file:///etc/passwd', 'not a url']) {
      expect(refusal(p, 'http.fetch', [url, undefined]), url).toMatch(/refused: only absolute http:\/\/ and https:\/\/ URLs can be fetched$/)
    }
  })
})

describe('refusal: confirm and notify', () => {
  it('refuses confirm when the session denies it, quoting the title', () => {
    expect(refusal(policy({ confirm: false }), 'confirm', [{ title: 'Delete build?' }])).toBe(
      "ctx.confirm({ title: 'Delete build?' }) refused: this session does not allow ctx.confirm",
    )
    expect(refusal(policy({ confirm: true }), 'confirm', [{ title: 'Delete build?' }])).toBeUndefined()
  })

  it('never refuses notify', () => {
    expect(refusal(policy({ confirm: false, file: 'none' }), 'notify', [{ title: 'done' }])).toBeUndefined()
  })
})

describe('the default policy', () => {
  it('allows files read-write and confirm, no HTTP origin and no env', () => {
    expect(DEFAULT_POLICY).toEqual({ file: 'read-write', httpOrigins: [], env: [], confirm: true })
  })
})
