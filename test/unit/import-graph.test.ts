/**
 * No import circles under src/ (docs/architecture.md, "Folders, and what each may import"): the graph of
 * every `import ... from '...'` and `export ... from '...'` between hookd's own files, type-only
 * imports included, has no cycle. A circle names its files in order.
 */
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src')

/** The relative specifiers a module's static imports and re-exports name (`import './x.js'` too). */
function specifiers(source: string): string[] {
  const found: string[] = []
  for (const m of source.matchAll(/(?:^|\n)[ \t]*(?:import|export)\b[^'";]*?\bfrom[ \t]*['"](\.{1,2}\/[^'"]+)['"]/g)) found.push(m[1] as string)
  for (const m of source.matchAll(/(?:^|\n)[ \t]*import[ \t]*['"](\.{1,2}\/[^'"]+)['"]/g)) found.push(m[1] as string)
  return found
}

/** Each import circle of `modules` (path -> source), as the paths around it, the first repeated last. */
function importCycles(modules: ReadonlyMap<string, string>): string[][] {
  const edges = new Map<string, string[]>()
  for (const [path, source] of modules) {
    const targets = specifiers(source)
      .map((s) => resolve(dirname(path), s))
      .flatMap((target) => [target, target.replace(/\.js$/, '.ts')].filter((t) => modules.has(t)).slice(0, 1))
    edges.set(path, targets)
  }
  const state = new Map<string, 'open' | 'done'>()
  const stack: string[] = []
  const cycles: string[][] = []
  const visit = (path: string): void => {
    state.set(path, 'open')
    stack.push(path)
    for (const next of edges.get(path) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next])
      else if (!state.has(next)) visit(next)
    }
    stack.pop()
    state.set(path, 'done')
  }
  for (const path of modules.keys()) if (!state.has(path)) visit(path)
  return cycles
}

function sources(root: string): Map<string, string> {
  const modules = new Map<string, string>()
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) modules.set(path, readFileSync(path, 'utf8'))
    }
  }
  walk(root)
  return modules
}

describe('the import graph', () => {
  it('finds a circle, through a type import or a re-export, and names its files', () => {
    const modules = new Map([
      ['/s/a.ts', "import { b } from './b.js'\n"],
      ['/s/b.ts', "import type {\n  C,\n} from './sub/c.js'\nexport const b = 1\n"],
      ['/s/sub/c.ts', "export { a } from '../a.js'\n"],
      ['/s/d.ts', "import { a } from './a.js'\n/* import { d } from './d.js' */\n"],
    ])
    expect(importCycles(modules)).toEqual([['/s/a.ts', '/s/b.ts', '/s/sub/c.ts', '/s/a.ts']])
    expect(importCycles(new Map([...modules].filter(([path]) => path !== '/s/sub/c.ts')))).toEqual([])
  })

  it('has no circle under src/', () => {
    const modules = sources(SRC)
    expect(modules.size).toBeGreaterThan(100)
    expect(importCycles(modules).map((cycle) => cycle.map((path) => relative(SRC, path)).join(' -> '))).toEqual([])
  })
})
