/**
 * Nothing in the repository cites a file outside it. hookd was developed in a workplace with notes and
 * shared documents beside the checkout (OUTSIDE below names their folders); a comment or a doc that
 * points there points at nothing for everyone else who reads the package or the repository.
 * Example paths (`/tmp/x`, `/home/you/project`) are not citations and are left alone.
 */
import { execFileSync } from 'node:child_process'
import { readFile, readdir } from 'node:fs/promises'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/processes.js'

/** What is scanned: every folder and top-level file of the repository's own (tracked) sources and docs. */
const SCANNED = ['src', 'docs', 'README.md', 'bin', 'scripts', 'native', 'hooks', 'test', 'bench', 'examples', 'deploy', 'proto', 'types', '.ci', 'Makefile', 'Dockerfile', '.dockerignore', 'package.json', 'vitest.config.ts', 'vitest.unit.config.ts']
/** Folders that hold what was generated or installed, not written here. */
const SKIPPED = new Set(['node_modules', 'dist', 'build', 'gen', '__pycache__', '.cache'])

// Built from parts, so that this file does not cite them itself.
const W = ['', 'work', ''].join('/')
const OUTSIDE: Array<{ pattern: RegExp; what: string }> = [
  { pattern: new RegExp(`(^|[^\\w.~-])${W}`), what: `an absolute path under ${W}` },
  { pattern: new RegExp(['\\.\\./', 'shared', '/'].join('')), what: "a path into the shared folder beside the checkout" },
  { pattern: new RegExp(['(^|\\W)', 'shared/', '(seeds|MEASURED|ARCHITECTURE|STYLE)'].join('')), what: 'a shared document' },
  { pattern: new RegExp(['MEASURED', '\\.md'].join('')), what: 'the shared measurements file' },
]

/**
 * The files git would commit under `path` (tracked, or new and not ignored): generated output such as
 * `bench/out/` is ignored, and is the machine's, not the repository's. Outside a git checkout, every file.
 */
function gitFiles(): Set<string> | undefined {
  try {
    const out = execFileSync('git', ['-c', 'core.fsmonitor=false', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
    return new Set(out.split('\0').filter(Boolean).map((f) => join(ROOT, f)))
  } catch {
    return undefined
  }
}

async function files(path: string): Promise<string[]> {
  const at = join(ROOT, path)
  const entries = await readdir(at, { withFileTypes: true }).catch(() => undefined)
  if (!entries) return [at]
  const out: string[] = []
  for (const entry of entries) {
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) out.push(...(await files(join(path, entry.name))))
    } else if (entry.isFile()) out.push(join(at, entry.name))
  }
  return out
}

/** `file:line: text` for each line of `text` that cites a path outside the repository. */
function citations(file: string, text: string): string[] {
  const found: string[] = []
  text.split('\n').forEach((line, i) => {
    const hit = OUTSIDE.find(({ pattern }) => pattern.test(line))
    if (hit) found.push(`${relative(ROOT, file)}:${i + 1}: ${hit.what}: ${line.trim().slice(0, 160)}`)
  })
  return found
}

describe('paths outside the repository', () => {
  it('are cited nowhere: src/, docs/, README.md, bin/, scripts/, native/, hooks/, test/ and the rest', async () => {
    const committed = gitFiles()
    const all = (await Promise.all(SCANNED.map(files))).flat().filter((f) => committed?.has(f) ?? true)
    expect(all.length).toBeGreaterThan(300)
    const found: string[] = []
    for (const file of all) {
      const text = await readFile(file, 'utf8')
      if (text.includes('\u0000')) continue
      found.push(...citations(file, text))
    }
    expect(found).toEqual([])
  })

  it('the check catches each kind of citation, and leaves example paths alone', () => {
    const cited = [
      `measured (${W}notes/claude-code.md)`,
      `see ${['..', '..', '..', 'shared', 'seeds', 'zidane-hooks.md'].join('/')}`,
      `per unary call (${['MEASURED', 'md'].join('.')})`,
      `the ${['shared', 'ARCHITECTURE.md'].join('/')} layout`,
    ]
    for (const line of cited) expect(citations(join(ROOT, 'x.md'), line), line).toHaveLength(1)
    for (const line of ['rm -rf /tmp/x', 'workdir: "/home/me/proj"', 'the framework/ folder', 'a network/ namespace', 'docs/architecture.md', 'hookd-sandbox/hook']) {
      expect(citations(join(ROOT, 'x.md'), line), line).toEqual([])
    }
  })
})
