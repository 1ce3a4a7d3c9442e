/**
 * Hostile hooks that try to reach the host from inside the isolate: constructor chains, stack-trace
 * call sites, callers, prototype traps, promise tricks, returned proxies and getters, state left for the
 * next invocation. Each fixture is one attack (test/hostile/fixtures/<name>/index.js); each test asserts
 * the exact outcome and that the sidecar answers an ordinary call right after.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Running, sessionOptions } from '../support/sidecar.js'
import { CALL, UNCHANGED, afterFailure, expectServing, failed, runHooks, startHostile } from './support.js'
import { hintFor } from '../../src/sidecar/hooks/author-hints.js'
import { CAPABILITY_NAMES } from '../../src/protocol/capabilities.js'

let running: Running

beforeAll(async () => {
  running = await startHostile()
})

afterAll(async () => {
  await running?.stop()
})

/** ECMAScript (and ECMA-402, Annex B) globals: the only names an isolate's global may hold. */
const LANGUAGE_GLOBALS = new Set([
  'AggregateError', 'Array', 'ArrayBuffer', 'Atomics', 'BigInt', 'BigInt64Array', 'BigUint64Array', 'Boolean',
  'DataView', 'Date', 'Error', 'EvalError', 'FinalizationRegistry', 'Float16Array', 'Float32Array', 'Float64Array',
  'Function', 'Infinity', 'Int16Array', 'Int32Array', 'Int8Array', 'Intl', 'Iterator', 'JSON', 'Map', 'Math', 'NaN',
  'Number', 'Object', 'Promise', 'Proxy', 'RangeError', 'ReferenceError', 'Reflect', 'RegExp', 'Set',
  'SharedArrayBuffer', 'String', 'Symbol', 'SyntaxError', 'TypeError', 'URIError', 'Uint16Array', 'Uint32Array',
  'Uint8Array', 'Uint8ClampedArray', 'WeakMap', 'WeakRef', 'WeakSet', 'decodeURI', 'decodeURIComponent',
  'encodeURI', 'encodeURIComponent', 'escape', 'eval', 'globalThis', 'isFinite', 'isNaN', 'parseFloat', 'parseInt',
  'undefined', 'unescape',
])

describe('constructor-chain escapes', () => {
  it('ctor-this: from `this` to Function finds no process', async () => {
    const run = await runHooks(running, ['ctor-this'])
    expect(run.diagnostics).toEqual([failed('ctor-this', 'throw', withHint('ReferenceError: process is not defined'), 4)])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('ctor-promise: from a promise to Function finds no require', async () => {
    const run = await runHooks(running, ['ctor-promise'])
    expect(run.diagnostics).toEqual([failed('ctor-promise', 'throw', withHint('ReferenceError: require is not defined'), 4)])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('ctor-async: from an async function to AsyncFunction finds no Buffer', async () => {
    const run = await runHooks(running, ['ctor-async'])
    expect(run.diagnostics).toEqual([failed('ctor-async', 'throw', withHint('ReferenceError: Buffer is not defined'), 5)])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it("ctor-ctx-error: from a ctx call's error and from ctx functions reaches only the isolate's own global", async () => {
    const run = await runHooks(running, ['ctor-ctx-error'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { sameGlobal: true, errorIsLocal: true, code: 'denied', host: [] } })
    await expectServing(running)
  })
})

describe('nothing of the host in the isolate', () => {
  it('global-inventory: the global holds language built-ins only, and ctx only its documented members', async () => {
    const run = await runHooks(running, ['global-inventory'])
    expect(run.diagnostics).toEqual([])
    const seen = run.result.arguments as { globals: string[]; symbols: string[]; waitAsync: string; ctxKeys: string[] }
    expect(seen.globals.filter((name) => !LANGUAGE_GLOBALS.has(name))).toEqual([])
    for (const name of ['require', 'process', 'Buffer', 'module', 'global', 'console', 'WebAssembly', 'ivm', 'setTimeout', 'fetch']) {
      expect(seen.globals).not.toContain(name)
    }
    expect(seen.symbols).toEqual([])
    expect(seen.waitAsync).toBe('undefined')
    // The data members, ctx.log, and the first part of every capability record's path (ctx.file, ctx.http, ...).
    const capabilities = CAPABILITY_NAMES.map((name) => name.split('.')[0] as string)
    expect(seen.ctxKeys).toEqual([...new Set(['agent', 'config', 'env', 'log', 'session', 'system', 'workdir', ...capabilities])].sort())
    await expectServing(running)
  })

  it('prepare-stack-trace: structured call sites show no prelude function or receiver, and no bridge', async () => {
    const run = await runHooks(running, ['prepare-stack-trace'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({
      allow: true,
      arguments: { stack: 'custom', found: [], prelude: ['undefined/undefined'], preludeFrames: true },
    })
    expect(run.logs).toEqual(['"custom"'])
    await expectServing(running)
  })

  it('caller-chain: Function.prototype.caller never yields a prelude function', async () => {
    const run = await runHooks(running, ['caller-chain'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { seen: { handler: 'null', toJSON: 'null', then: 'null' } } })
    await expectServing(running)
  })

  it('prototype-getters: accessors on built-in prototypes are never handed the bridge', async () => {
    const run = await runHooks(running, ['prototype-getters'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({
      allow: true,
      arguments: { found: 0, code: 'denied', exists: false, callId: 'c1', touched: true },
    })
    expect(run.logs).toEqual(['logged {"a":1}'])
    await expectServing(running)
  })

  it('wrapper-escape: code that closes the CommonJS wrapper early can only be the hook, and finds nothing of hookd', async () => {
    const run = await runHooks(running, ['wrapper-escape'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { escaped: 'undefined/undefined/undefined/undefined' } })
    await expectServing(running)
  })
  it('wrapper-twice: the entry works once, so a script that enters its own module never runs the wrapped one', async () => {
    const run = await runHooks(running, ['wrapper-twice'])
    expect(run.diagnostics).toEqual([
      failed(
        'wrapper-twice',
        'timeout',
        'ran longer than its wall-time limit of 800 ms (time waiting on the host is not counted) and was stopped',
      ),
    ])
    expect(run.result).toEqual(afterFailure('wrapper-twice', 'timeout'))
    await expectServing(running)
  })

  it('wrapper-throw: code that escapes the wrapper and throws before the module is entered fails to load', async () => {
    const pushed: string[] = []
    const run = await runHooks(running, ['wrapper-throw', 'ordinary'], {
      capabilities: { diagnostic: (d) => pushed.push(`${d.hook}: ${d.kind}: ${d.message}`) },
    })
    expect(pushed).toEqual([
      expect.stringMatching(/^wrapper-throw: load: the hook's top-level code failed: Error: thrown before any module was entered/),
    ])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { ...UNCHANGED.arguments, ordinary: true } })
    const listed = (await running.client.listHooks()).find((h) => h.name === 'wrapper-throw')
    expect(listed?.status).toBe('broken')
    await expectServing(running)
  })
})

describe('errors built to confuse the sidecar', () => {
  it("replaced-error: a refused call still throws the prelude's own Error with the refusal", async () => {
    const run = await runHooks(running, ['replaced-error'])
    expect(run.diagnostics).toEqual([
      failed(
        'replaced-error',
        'capability-denied',
        "Error: ctx.file.read('/etc/passwd') refused: absolute paths are refused; use a path relative to the workdir",
        8,
      ),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('symbol-name: an error named by a Symbol is reported as an Error with its message', async () => {
    const run = await runHooks(running, ['symbol-name'])
    expect(run.diagnostics).toEqual([failed('symbol-name', 'throw', 'Error: named by a symbol', 4)])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('message-flood: a million-character error message is clipped', async () => {
    const run = await runHooks(running, ['message-flood'])
    expect(run.diagnostics).toEqual([
      failed('message-flood', 'throw', `Error: ${'x'.repeat(1993)}... (998007 more characters)`, 4),
    ])
    await expectServing(running)
  })

  it('fake-line: a stack that claims an absurd line number yields no line', async () => {
    const run = await runHooks(running, ['fake-line'])
    expect(run.diagnostics).toEqual([failed('fake-line', 'throw', 'Error: lying about the line')])
    await expectServing(running)
  })

  it('unhandled-rejection: a rejection nobody handles fails the hook as a throw', async () => {
    const run = await runHooks(running, ['unhandled-rejection'])
    expect(run.diagnostics).toEqual([
      failed('unhandled-rejection', 'throw', 'an unhandled promise rejection: Error: stray rejection', 4),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })
})

describe('returned values are copied out inside the isolate', () => {
  it('inspect-tojson: toJSON runs in the isolate, custom inspect never runs', async () => {
    const run = await runHooks(running, ['inspect-tojson'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { by: 'toJSON', where: 'undefined/undefined' } })
    await expectServing(running)
  })

  it("proxy-result: a returned Proxy's traps run in the isolate", async () => {
    const run = await runHooks(running, ['proxy-result'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({
      allow: true,
      arguments: { traps: ['ownKeys', 'getOwnPropertyDescriptor', 'get'], where: 'undefined' },
    })
    await expectServing(running)
  })

  it('revoked-proxy: a revoked Proxy fails the hook, not the sidecar', async () => {
    const run = await runHooks(running, ['revoked-proxy'])
    expect(run.diagnostics).toEqual([
      failed('revoked-proxy', 'throw', "TypeError: Cannot perform 'get' on a proxy that has been revoked"),
    ])
    expect(run.result).toEqual(UNCHANGED)
    await expectServing(running)
  })

  it('getter-loop: a getter that loops while the answer is copied out hits the CPU limit', async () => {
    const run = await runHooks(running, ['getter-loop'])
    expect(run.diagnostics).toEqual([failed('getter-loop', 'cpu', 'used more than its CPU time limit of 300 ms and was stopped')])
    expect(run.result).toEqual(afterFailure('getter-loop', 'cpu'))
    await expectServing(running)
  })

  it('thenable: a hand-made thenable is awaited like a promise', async () => {
    const run = await runHooks(running, ['thenable'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { via: 'thenable' } })
    await expectServing(running)
  })

  it('thenable-never: a thenable that never calls back hits the wall-time limit', async () => {
    const run = await runHooks(running, ['thenable-never'])
    expect(run.diagnostics).toEqual([
      failed(
        'thenable-never',
        'timeout',
        'ran longer than its wall-time limit of 800 ms (time waiting on the host is not counted) and was stopped',
      ),
    ])
    expect(run.result).toEqual(afterFailure('thenable-never', 'timeout'))
    await expectServing(running)
  })

  it('promise-species: replaced then, constructor and species are never handed the bridge', async () => {
    const run = await runHooks(running, ['promise-species'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { found: 0, tricked: true } })
    await expectServing(running)
  })
})

describe('nothing survives an invocation', () => {
  it('leftover-state: globals, prototypes and replaced built-ins do not reach the next invocation or session', async () => {
    const clean = {
      found: { leftover: 'undefined', polluted: 'undefined', stringify: '{"a":1}', map: '2,4' },
      ctxWrite: 'unchanged',
    }
    const session = await running.client.openSession(sessionOptions(['leftover-state']))
    const first = await session.call('beforeToolExecute', CALL)
    const second = await session.call('beforeToolExecute', CALL)
    session.abandon()
    const other = await runHooks(running, ['leftover-state'])
    for (const out of [first, second, other]) {
      expect(out.diagnostics).toEqual([])
      expect(out.result).toEqual({ allow: true, arguments: clean })
    }
    await expectServing(running)
  })

  it('finalization-after-answer: finalizers and microtasks left behind never reach the host', async () => {
    const run = await runHooks(running, ['finalization-after-answer'])
    expect(run.diagnostics).toEqual([])
    expect(run.result).toEqual({ allow: true, arguments: { registered: 5000 } })
    // Let anything that could still arrive arrive: the next call goes through the same worker.
    await expectServing(running)
    expect(run.logs).toEqual(['before the answer'])
  })
})

/** The sandbox's error with the hint hookd adds to it (author-hints.ts; its exact text is tested in test/unit/hooks/author-hints.test.ts). */
function withHint(message: string): string {
  return `${message}; ${hintFor({ message })}`
}
