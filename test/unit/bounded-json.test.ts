/** Bounded JSON: size and nesting are checked before anything recursive touches a document. */
import { describe, expect, it } from 'vitest'
import { nestingDepth, parseJson, stringifyJson } from '../../src/protocol/bounded-json.js'

const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n)

describe('parseJson', () => {
  it('parses documents within the limits', () => {
    expect(parseJson('{"a":[1,{"b":"[[[["}]}', 'x')).toEqual({ ok: true, value: { a: [1, { b: '[[[[' }] } })
    expect(parseJson(Buffer.from(deep(64)), 'x', { maxDepth: 64, maxBytes: 1000 }).ok).toBe(true)
  })

  it('refuses a document nested past the limit without parsing it, even one deep enough to overflow a stack', () => {
    expect(parseJson(deep(65), 'the payload', { maxDepth: 64, maxBytes: 1000 })).toEqual({
      ok: false,
      problem: 'too-deep',
      message: 'the payload nests arrays and objects more than 64 deep; flatten it',
    })
    const huge = deep(1_000_000)
    expect(parseJson(huge, 'x', { maxDepth: 64, maxBytes: 10_000_000 })).toMatchObject({ ok: false, problem: 'too-deep' })
  })

  it('counts brackets inside strings and escaped quotes as text', () => {
    expect(nestingDepth('["\\"[[[[", {"a": "}}}"}]')).toBe(2)
  })

  it('refuses a document over the size limit, counting UTF-8 bytes', () => {
    expect(parseJson('"ééé"', 'x', { maxDepth: 64, maxBytes: 7 })).toEqual({ ok: false, problem: 'too-large', message: 'x is 8 bytes, over the limit of 7 bytes' })
  })

  it('says what is wrong with text that is not JSON, or empty', () => {
    expect(parseJson('{id:', 'hook.json')).toMatchObject({ ok: false, problem: 'not-json', message: expect.stringMatching(/^hook\.json is not valid JSON \(/) })
    expect(parseJson('', 'x')).toEqual({ ok: false, problem: 'not-json', message: 'x is empty; send a UTF-8 JSON document' })
  })
})

describe('stringifyJson', () => {
  it('returns undefined instead of throwing for what cannot be serialized', () => {
    const cycle: Record<string, unknown> = {}
    cycle.self = cycle
    expect(stringifyJson(cycle)).toBeUndefined()
    expect(stringifyJson(1n)).toBeUndefined()
    expect(stringifyJson({ a: 1 })).toBe('{"a":1}')
  })
})
