/**
 * The nesting scan bundling runs on every source file before esbuild sees it
 * (src/sidecar/hooks/source-nesting.ts): brackets and open arrow functions count, what is inside
 * strings, template text, comments and regular expressions does not, the line where the limit was
 * passed is the one reported, and real code, minified bundles included, stays far below the limit.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { extname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { DEFAULT_BUNDLE_LIMITS } from '../../src/sidecar/hooks/bundle.js'
import { nesting } from '../../src/sidecar/hooks/source-nesting.js'

const deepest = (text: string): number => nesting(text, 1000).deepest

describe('nesting', () => {
  it('counts brackets, braces, parentheses and template substitutions', () => {
    expect(deepest('const x = 1\n')).toBe(0)
    expect(deepest('function f(a) { return [a, (a)] }\n')).toBe(3)
    expect(deepest('const t = `a${`b${`c${x}`}`}`\n')).toBe(3)
    expect(deepest('const o = { a: { b: { c: [ { d: 1 } ] } } }\n')).toBe(5)
  })

  it('skips what is inside strings, template text, comments and regular expressions', () => {
    const quiet = [
      "const s = '(((( [[[[ {{{{'",
      'const d = "(((( \\" [[[["',
      '// (((( [[[[ {{{{',
      '/* (((( [[[[\n {{{{ */',
      'const t = `(((( [[[[ {{{{ \\${ not a substitution`',
      'const r = /[(]{2}\\(\\[/g',
      'const q = x.replace(/[[({]/, "")',
      'if (ok) return /((((/.test(s)',
      'const half = a / (b) / c',
    ].join('\n')
    expect(deepest(quiet)).toBe(1)
    // A string's brackets count nowhere, even when the file is cut off inside it.
    expect(deepest("const s = '(((((\n[x]\n")).toBe(1)
  })

  it('counts arrow functions whose body is an expression, until their expression ends', () => {
    expect(deepest('const f = a => b => c => d\n')).toBe(3)
    expect(deepest('const f = (a) =>\n  (b) =>\n    a + b\n')).toBe(2)
    // A block body is counted by its braces.
    expect(deepest('const f = a => { return a }\n')).toBe(1)
    // Commas, semicolons, a closing bracket and the end of a line end them: one level each, not 300.
    expect(deepest('const f = x => x + 1\n'.repeat(300))).toBe(1)
    expect(deepest(`${'const f = x => x + 1; '.repeat(300)}\n`)).toBe(1)
    expect(deepest(`list.map(x => x * 2).filter(y => y > 1)${', z => z'.repeat(300)}\n`)).toBe(2)
    // Without a bracket anywhere, a chain of arrows is as deep as it is long.
    expect(nesting(`export default ${'a=>'.repeat(10_000)}1\n`, DEFAULT_BUNDLE_LIMITS.maxDepth)).toEqual({ deepest: 257, passedAt: 1 })
  })

  it('stops at the line where the limit was passed, whatever follows', () => {
    const text = `const a = 1\n\nconst deep = ${'['.repeat(200)}\n${'['.repeat(200)}${']'.repeat(400)}\n`
    expect(nesting(text, 256)).toEqual({ deepest: 257, passedAt: 4 })
    expect(nesting(text, 400)).toEqual({ deepest: 400 })
    const huge = '{'.repeat(4 * 1024 * 1024)
    expect(nesting(huge, 256)).toEqual({ deepest: 257, passedAt: 1 })
    expect(nesting(`#!/usr/bin/env node ((((\n${'('.repeat(10)}`, 256)).toEqual({ deepest: 10 })
  })

  it('keeps real code far below the limit: the repository, zod, TypeScript, esbuild', () => {
    const root = join(import.meta.dirname, '..', '..')
    const files: string[] = []
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (entry.isFile() && ['.ts', '.js', '.mjs', '.cjs', '.json'].includes(extname(entry.name))) files.push(path)
      }
    }
    walk(join(root, 'src'))
    walk(join(root, 'node_modules', 'zod', 'v4'))
    files.push(join(root, 'node_modules', 'typescript', 'lib', 'typescript.js'), join(root, 'node_modules', 'esbuild', 'lib', 'main.js'))
    const depths = files.map((file) => ({ file, ...nesting(readFileSync(file, 'utf8'), DEFAULT_BUNDLE_LIMITS.maxDepth) }))
    expect(depths.length).toBeGreaterThan(200)
    expect(depths.filter((d) => d.passedAt !== undefined)).toEqual([])
    expect(Math.max(...depths.map((d) => d.deepest))).toBeLessThan(40)
  })
})
