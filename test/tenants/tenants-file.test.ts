/**
 * The tenants file's validation (messages that point at the bad entry) and the credential helpers.
 */
import { describe, expect, it } from 'vitest'
import { bearerToken, hashBytes, hashToken, matchToken, newToken } from '../../src/sidecar/tenancy/tenant-token.js'
import { parseTenants } from '../../src/sidecar/tenancy/tenants-file.js'

const hash = (c: string): string => `sha256:${c.repeat(64)}`
const parse = (tenants: unknown): string => {
  try {
    parseTenants(JSON.stringify({ tenants }), '/etc/hookd/tenants.json')
    return 'ok'
  } catch (err) {
    return (err as Error).message.replace('tenants file /etc/hookd/tenants.json: ', '')
  }
}

describe('parseTenants', () => {
  it('fills defaults, resolves hooks against the file, normalises origins', () => {
    const [t] = parseTenants(
      JSON.stringify({ tenants: [{ id: 'acme', tokenHash: hash('a'), hooks: 'acme-hooks', policy: { httpOrigins: ['https://API.example.com/path'] } }] }),
      '/etc/hookd/tenants.json',
    )
    expect(t).toEqual({
      id: 'acme',
      tokenHash: hash('a'),
      hooks: '/etc/hookd/acme-hooks',
      limits: { invocation: {} },
      policy: { file: 'none', httpOrigins: ['https://api.example.com'], env: [], confirm: true },
      remoteHooks: [],
      onError: 'default',
      workers: 1,
      locked: false,
      requireSigned: false,
      requirePermissions: false,
    })
  })

  it('reads "remoteHooks": relative unix paths against the file, ports without leading zeros', () => {
    const [t] = parseTenants(
      JSON.stringify({ tenants: [{ id: 'acme', tokenHash: hash('a'), hooks: 'h', remoteHooks: ['unix:sockets/*.sock', 'unix:///run/acme/x.sock', '127.0.0.1:09000', '[::1]:*'] }] }),
      '/etc/hookd/tenants.json',
    )
    expect(t?.remoteHooks).toEqual(['unix:/etc/hookd/sockets/*.sock', 'unix:/run/acme/x.sock', '127.0.0.1:9000', '[::1]:*'])
  })

  it('says what a bad "remoteHooks" entry should look like', () => {
    const good = { id: 'a', tokenHash: hash('a'), hooks: 'h' }
    expect(parse([{ ...good, remoteHooks: 'unix:/run/a.sock' }])).toBe(
      'tenants[0].remoteHooks: expected an array of addresses, e.g. ["unix:/run/acme/*.sock", "127.0.0.1:9000"]',
    )
    expect(parse([{ ...good, remoteHooks: ['unix:/ok.sock', 'localhost'] }])).toBe(
      "tenants[0].remoteHooks[1]: 'localhost' is not an address; write unix:PATH or HOST:PORT, where * stands for any characters of a path segment or host name, or for any port (e.g. \"unix:/run/acme/*.sock\" or \"127.0.0.1:9000\")",
    )
    expect(parse([{ ...good, remoteHooks: ['unix:'] }])).toBe(
      "tenants[0].remoteHooks[0]: 'unix:' has no path; write unix:PATH, e.g. \"unix:/run/acme/*.sock\" or \"127.0.0.1:9000\"",
    )
    expect(parse([{ ...good, remoteHooks: ['127.0.0.1:70000'] }])).toBe("tenants[0].remoteHooks[0]: '127.0.0.1:70000': port 70000 is above 65535")
    expect(parse([{ ...good, remoteHooks: [7] }])).toBe('tenants[0].remoteHooks[0]: expected a string: unix:PATH or HOST:PORT')
    expect(parse([{ ...good, remotehooks: [] }])).toBe(
      "tenants[0]: unknown field 'remotehooks' (known fields: id, tokenHash, hooks, limits, policy, remoteHooks, onError, workers, locked, requireSigned, trustedKeys, requirePermissions)",
    )
  })

  it('points at the bad entry and says what was expected', () => {
    const good = { id: 'a', tokenHash: hash('a'), hooks: 'h' }
    expect(parse([good, { ...good, id: 'b', tokenHash: hash('b') }, { ...good, id: 'c', tokenHash: hash('c'), limits: { cpuMs: 0 } }])).toBe(
      'tenants[2].limits.cpuMs: expected a positive integer',
    )
    expect(parse([{ ...good, limits: { memoryMb: 4 } }])).toBe('tenants[0].limits.memoryMb: expected an integer of at least 8')
    expect(parse([{ ...good, tokenHash: 'abc' }])).toBe(
      "tenants[0].tokenHash: expected 'sha256:' and 64 lowercase hex digits; run 'hookd tenant token' to make a token and its hash",
    )
    expect(parse([{ ...good, policy: { file: 'all' } }])).toBe('tenants[0].policy.file: expected one of "read-write", "none", "read"')
    expect(parse([{ ...good, policy: { httpOrigins: ['ftp://x'] } }])).toBe(
      "tenants[0].policy.httpOrigins[0]: 'ftp://x' is not an http(s) origin; write it like https://api.example.com",
    )
    expect(parse([{ ...good, policy: { env: ['NOT OK'] } }])).toBe('tenants[0].policy.env[0]: expected an environment variable name')
    expect(parse([{ ...good, limits: { concurrency: 2 } }])).toBe(
      "tenants[0].limits: unknown field 'concurrency' (known fields: memoryMb, cpuMs, wallMs, resultBytes, logBytes, logLines, capabilityCalls, capabilityBytes, jsonDepth, concurrentInvocations, invocationsPerSecond)",
    )
    expect(parse([{ id: 'a', hooks: 'h' }])).toBe('tenants[0].tokenHash: missing; expected a string')
    expect(parse('nope')).toBe('tenants: expected an array of tenants')
  })

  it('refuses duplicate ids and shared tokens', () => {
    const a = { id: 'a', tokenHash: hash('a'), hooks: 'h' }
    expect(parse([a, { ...a, tokenHash: hash('b') }])).toBe("tenants[1].id: 'a' is already the id of tenants[0]; ids must be unique")
    expect(parse([a, { ...a, id: 'b' }])).toBe(
      "tenants[1].tokenHash: the same as tenants[0]'s ('a'); every tenant needs its own token ('hookd tenant token')",
    )
  })

  it('says where JSON breaks', () => {
    expect(() => parseTenants('{"tenants": [', 'x.json')).toThrow(/^tenants file x.json is not valid JSON \(/)
  })
})

describe('credentials', () => {
  it('matches a token to its hash, and nothing else', () => {
    const tokens = [newToken(), newToken(), newToken()]
    const hashes = tokens.map((t) => hashBytes(hashToken(t)))
    expect(tokens.map((t) => matchToken(t, hashes))).toEqual([0, 1, 2])
    expect(matchToken(`${tokens[0]}x`, hashes)).toBe(-1)
    expect(matchToken('', hashes)).toBe(-1)
    expect(hashToken('abc')).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('reads a bearer token from authorization metadata', () => {
    expect(bearerToken(['Bearer abc'])).toEqual({ ok: true, token: 'abc' })
    expect(bearerToken(['bearer  abc '])).toEqual({ ok: true, token: 'abc' })
    expect(bearerToken([])).toEqual({ ok: false, why: 'no authorization metadata was sent' })
    expect(bearerToken(['Basic abc'])).toEqual({ ok: false, why: "the authorization metadata is not of the form 'Bearer <token>'" })
    expect(bearerToken(['Bearer a', 'Bearer b'])).toEqual({ ok: false, why: 'authorization metadata was sent more than once' })
  })
})
