/**
 * The source stays in pieces a reader can hold (docs/architecture.md): no file under src/ over 400
 * lines (the isolate's prelude excepted: its ctx tree is one object, held to the capability records by
 * test/types/hook-types.test.ts), and no folder under src/ or test/ with more than 20 files (hook
 * fixtures' own folders aside: each is a hook as its author would write it). (No import circles:
 * test/unit/import-graph.test.ts.)
 */
import { readFileSync, readdirSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/processes.js'

const SRC = join(ROOT, 'src')
const MAX_LINES = 400
const MAX_FILES = 20
const LONG_ALLOWED = new Set(['src/sidecar/worker/isolate/prelude.js'])

function walk(dir: string): { files: string[]; folders: Array<{ dir: string; files: number }> } {
  const files: string[] = []
  const folders: Array<{ dir: string; files: number }> = []
  const visit = (at: string): void => {
    const entries = readdirSync(at, { withFileTypes: true })
    folders.push({ dir: relative(ROOT, at), files: entries.filter((e) => e.isFile()).length })
    for (const e of entries) {
      if (e.isDirectory()) visit(join(at, e.name))
      else if (e.isFile()) files.push(join(at, e.name))
    }
  }
  visit(dir)
  return { files, folders }
}

describe("src/'s layout", () => {
  const { files, folders } = walk(SRC)

  it(`no source file is over ${MAX_LINES} lines`, () => {
    expect(files.length).toBeGreaterThan(200)
    const long = files
      .filter((f) => /\.(ts|js|mjs|cjs)$/.test(f) && !LONG_ALLOWED.has(relative(ROOT, f)))
      .map((f) => ({ file: relative(ROOT, f), lines: readFileSync(f, 'utf8').split('\n').length - 1 }))
      .filter((f) => f.lines > MAX_LINES)
    expect(long).toEqual([])
  })

  it(`no folder of src/ or test/ holds more than ${MAX_FILES} files`, () => {
    const tests = walk(join(ROOT, 'test')).folders.filter((f) => !/(^|\/)(fixtures|node_modules|out|gen|__pycache__)(\/|$)/.test(f.dir))
    expect(tests.length).toBeGreaterThan(10)
    expect([...folders, ...tests].filter((f) => f.files > MAX_FILES)).toEqual([])
  })

})
