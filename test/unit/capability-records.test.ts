/**
 * The capability records (src/protocol/capabilities.ts) against what is derived from them or kept
 * beside them by hand: the policy (a capability whose class has no rule is refused, in the policy and
 * through a session), docs/capabilities.md's tables, the proto's comments and the Python examples' calls. A record added without its docs row, or a list that drifts, fails here.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import * as z from 'zod'
import {
  CAPABILITIES,
  CAPABILITY_ERROR_CODES,
  CAPABILITY_NAMES,
  type CapabilityName,
  HOST_CAPABILITY_NAMES,
  type PermissionNeed,
  type PolicyClass,
} from '../../src/protocol/capabilities.js'
import { Session } from '../../src/sidecar/session/session.js'
import { DEFAULT_POLICY, type SessionPolicy, refusal } from '../../src/sidecar/session/policy.js'
import { FakeLink, FakeLoader, FakeRunner, exporting, fakeTenant, hooksFolder, loadedRegistry, nothing, openRequest, payload } from './fakes.js'

const ROOT = join(import.meta.dirname, '..', '..')
const read = (path: string): Promise<string> => readFile(join(ROOT, path), 'utf8')

/** Names fake records are added under, and taken out again after each test. */
const added: string[] = []
const table = CAPABILITIES as unknown as Record<string, unknown>

/** Adds a record to the table as a new capability would be added, with the class it names. */
function addRecord(name: string, policy: string): CapabilityName {
  added.push(name)
  table[name] = { policy, args: z.tuple([z.string()]), result: { schema: z.unknown(), example: 'null' }, server: 'host' }
  return name as CapabilityName
}

afterEach(() => {
  for (const name of added.splice(0)) delete table[name]
})

const policy = (overrides: Partial<SessionPolicy> = {}): SessionPolicy => ({ ...DEFAULT_POLICY, ...overrides })

describe('the policy judges each capability by its record\'s class', () => {
  it('refuses a capability whose class has no rule, under the most open policy', () => {
    const name = addRecord('kv.get', 'kv')
    const open = policy({ file: 'read-write', confirm: true, httpOrigins: ['https://a.example'] })
    expect(refusal(open, name, ['counter'] as never)).toBe(
      "ctx.kv.get refused: hookd has no policy rule for its class 'kv', and allows nothing it does not judge",
    )
  })

  it('refuses a name no record has', () => {
    expect(refusal(policy(), 'exec' as CapabilityName, ['ls'] as never)).toBe("ctx.'exec' refused: hookd has no capability of that name")
  })

  it('judges a new record by the rule of the class it names, and nothing else', () => {
    const name = addRecord('file.delete', 'file-write')
    expect(refusal(policy({ file: 'read' }), name, ['notes.txt'] as never)).toBe("ctx.file.delete('notes.txt') refused: this session allows reading files only")
    expect(refusal(policy({ file: 'read-write' }), name, ['.git/config'] as never)).toMatch(/^ctx\.file\.delete\('\.git\/config'\) refused: hookd never lets hooks write under \.git\//)
    expect(refusal(policy({ file: 'read-write' }), name, ['notes.txt'] as never)).toBeUndefined()
  })

  it('names a class for every record, each with a rule that refuses something or is always allowed by name', () => {
    const classes: Record<PolicyClass, string> = {
      'file-read': "ctx.NAME('a.txt') refused: this session allows no file access",
      'file-write': "ctx.NAME('a.txt') refused: this session allows reading files only",
      network: "ctx.NAME('https://b.example/') refused: origin https://b.example is not allowed (allowed origins: none)",
      ask: "ctx.NAME({ title: 'Go?' }) refused: this session does not allow ctx.NAME",
      notify: 'allowed',
    }
    const strict = (cls: PolicyClass): SessionPolicy => policy({ file: cls === 'file-read' ? 'none' : 'read', confirm: false, httpOrigins: [] })
    const sample: Record<PolicyClass, unknown[]> = { 'file-read': ['a.txt'], 'file-write': ['a.txt', 'x'], network: ['https://b.example/'], ask: [{ title: 'Go?' }], notify: [{ title: 'Go?' }] }
    for (const name of CAPABILITY_NAMES) {
      const cls = CAPABILITIES[name].policy
      const args = CAPABILITIES[name].args.parse(sample[cls])
      expect(refusal(strict(cls), name, args) ?? 'allowed', name).toBe(classes[cls].replaceAll('NAME', name))
    }
  })

  it('a session refuses a capability whose class has no rule before it reaches the host, and serves the next call', async () => {
    const name = addRecord('kv.get', 'kv')
    const folder = await hooksFolder({ h: { index: exporting('beforeToolExecute') } })
    try {
      const runner = new FakeRunner()
      const registry = await loadedRegistry(folder.root, new FakeLoader(), runner)
      const link = new FakeLink(() => ({ ok: true, value: null }))
      runner.script('h', async (r) => {
        await r.onCapability(name, ['counter'])
        await r.onCapability('notify', [{ title: 'after' }])
        return nothing()
      })
      const { session } = Session.open(fakeTenant(registry, runner), openRequest({ hooks: ['h'], policy: { file: 'read-write', httpOrigins: [], env: [], denyConfirm: false } }), link)
      await session.call(1, 'beforeToolExecute', payload({ id: 'c1', name: 'shell', arguments: {} }))
      expect(runner.calls[0]?.capabilities.map((c) => c.reply)).toEqual([
        { ok: false, code: 'denied', message: "ctx.kv.get refused: hookd has no policy rule for its class 'kv', and allows nothing it does not judge" },
        { ok: true, value: null },
      ])
      expect(link.capabilities.map((c) => c.capability)).toEqual(['notify'])
      await registry.close()
    } finally {
      await folder.dispose()
    }
  })
})

/** The rows of the markdown table under `heading` (through the next heading), as cells. */
function tableUnder(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n${heading}\n`)
  expect(start, heading).toBeGreaterThan(-1)
  const rest = markdown.slice(start + heading.length + 2)
  const end = rest.search(/\n#{2,4} /)
  const rows = (end === -1 ? rest : rest.slice(0, end)).split('\n').filter((line) => line.startsWith('| '))
  return rows.slice(2).map((row) => row.slice(2, -2).split(' | '))
}

describe('docs/capabilities.md lists the records', () => {
  /** How the Capabilities table says what each class allows. */
  const CLASS_TEXT: Record<PolicyClass, string> = {
    'file-read': 'file access `read` or `read-write`',
    'file-write': 'file access `read-write`',
    network: "the URL's origin is allowed",
    ask: '`policy.confirm`',
    notify: 'always allowed',
  }

  it("the hook authors' table: one row per record (and ctx.log), with its class's policy", async () => {
    const rows = tableUnder(await read('docs/capabilities.md'), '### Capabilities')
    const documented = rows.map(([call, , , rule]) => ({ path: /^`ctx\.([a-z.]+)\(/i.exec(call ?? '')?.[1], rule }))
    expect(documented.map((d) => d.path).sort()).toEqual(['log', ...CAPABILITY_NAMES].sort())
    expect(documented[0]?.path).toBe('log')
    expect(documented[0]?.rule).toBe('always allowed')
    for (const { path, rule } of documented.slice(1)) expect(rule, path).toBe(CLASS_TEXT[CAPABILITIES[path as CapabilityName].policy])
  })

  it("the same table's last column: the permission each record needs of a hook that declares its permissions", async () => {
    const PERMISSION_TEXT: Record<PermissionNeed, string> = {
      'files-read': '`"files": "read"` or `"read-write"`, the path in `"paths"`',
      'files-write': '`"files": "read-write"`, the path in `"paths"`',
      origin: 'the URL\'s origin in `"origins"`',
      confirm: '`"confirm": true`',
      notify: '`"notify": true`',
    }
    const rows = tableUnder(await read('docs/capabilities.md'), '### Capabilities')
    for (const [call, , , , needs] of rows.slice(1)) {
      const path = /^`ctx\.([a-z.]+)\(/i.exec(call ?? '')?.[1] as CapabilityName
      expect(needs, path).toBe(PERMISSION_TEXT[CAPABILITIES[path].permission])
    }
  })

  it('the wire table: one row per capability the host serves', async () => {
    const rows = tableUnder(await read('docs/capabilities.md'), '### The wire')
    expect(rows.map(([name]) => name?.replace(/`/g, ''))).toEqual(HOST_CAPABILITY_NAMES)
  })

  it('the errors table: every code hookd gives, then the system errors', async () => {
    const rows = tableUnder(await read('docs/capabilities.md'), '### Errors')
    expect(rows.map(([code]) => code)).toEqual([...Object.keys(CAPABILITY_ERROR_CODES).map((c) => `\`${c}\``), '`ENOENT`, `EISDIR`, `ENOTDIR`, `EACCES`, ...'])
  })
})

describe('the lists kept beside the records', () => {
  it("the proto's comments on CapabilityCall.capability", async () => {
    for (const file of ['proto/hookd/v1/hookd.proto', 'proto/hookd/v1/hook.proto']) {
      const line = /\/\/ One of: ([^\n]*)\./.exec(await read(file))?.[1] ?? ''
      expect([...line.matchAll(/"([a-z.]+)"/g)].map((m) => m[1]), file).toEqual(HOST_CAPABILITY_NAMES)
    }
  })

  it("the Python host serves every capability the host serves, and the Python hook's ctx calls each record", async () => {
    const host = await read('examples/python/hookd_host.py')
    const served = [...host.matchAll(/(?:call\.capability|name) == "([a-z.]+)"/g)].map((m) => m[1])
    expect([...new Set(served)].sort()).toEqual([...HOST_CAPABILITY_NAMES].sort())
    const hook = await read('examples/python/hookd_hook.py')
    const called = [...hook.matchAll(/self\._stream\.call\("([a-z.]+)"/g)].map((m) => m[1])
    expect([...new Set(called)].sort()).toEqual([...CAPABILITY_NAMES].sort())
  })
})

describe("README.md's ctx paragraph names the records", () => {
  it('every capability, and none that is not one (`file.read/write/...` names each file capability)', async () => {
    const readme = await read('README.md')
    const start = readme.indexOf('`ctx` holds')
    expect(start).toBeGreaterThan(0)
    const paragraph = readme.slice(start, readme.indexOf('\n\n', start))
    const named = new Set<string>()
    for (const m of paragraph.matchAll(/`([a-z]+(?:\.[a-z]+(?:\/[a-z]+)*)?)(?:\([^`]*\))?`/g)) {
      const [family, members] = (m[1] as string).split('.')
      if (members === undefined) named.add(family as string)
      else for (const member of members.split('/')) named.add(`${family}.${member}`)
    }
    // What the paragraph names in the records' families (`file`, `http`, and the plain names), not `package.json`.
    const families = new Set(HOST_CAPABILITY_NAMES.map((n) => n.split('.')[0] as string))
    const capabilities = [...named].filter((n) => families.has(n.split('.')[0] as string) && (n.includes('.') || HOST_CAPABILITY_NAMES.includes(n as CapabilityName)))
    expect(capabilities.sort()).toEqual([...HOST_CAPABILITY_NAMES].sort())
  })
})
