/**
 * What the repository's comments and docs cite is there, and src/ speaks the docs' words. A comment
 * that names a file which was renamed or split (`runner.ts`, `warm.ts`) sends a reader looking for
 * nothing; a name the docs never use (the code names of the hook systems hookd follows) makes a reader
 * learn a second vocabulary. Scanned: every line of the docs (README.md, docs/), and the comment lines
 * of the code (src/, bin/, scripts/, native/, types/, test/, bench/, examples/).
 *
 * - A repository path (`src/...`, `docs/...`, `test/...`, ...) must lead to a file or folder, from the
 *   repository's root or from the citing file's folder; a `*` in it must match something.
 * - A bare source file name in a comment of src/, bin/, scripts/ or types/ (`warm-isolates.ts`) must be
 *   the name of a file in the repository (a `.js` name may stand for its `.ts` source).
 * - No file name under src/ and no line of src/ holds the seeds' code names (SEED_NAMES).
 */
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../support/processes.js'

const TOP = ['src', 'docs', 'test', 'bin', 'scripts', 'native', 'types', 'examples', 'bench', 'proto', 'deploy']
/** Where a bare file name must be one of the repository's: hookd's own code, not tests' fixtures. */
const NAMES_CHECKED = /^(src|bin|scripts|types)\//
/** Names that look like a file and are something else (a runtime; a file of an installed package). */
const NOT_FILES = new Set(['Node.js', 'isolated-vm.js'])
/** Built from parts, so that this file does not hold them itself. */
const SEED_NAMES = new RegExp([['ri', 'enda'].join(''), ['zi', 'dane'].join('')].join('|'), 'i')

/**
 * A repository path: a top folder, then more, not inside a longer word, a URL, `~/`, `$X/`, `@scope/`,
 * or a quoted string (a value in an example: `{"path": "src/a.ts"}`).
 */
const PATH = new RegExp(`(?<![\\w.\\/~$@"'-])((?:${TOP.join('|')})\\/[\\w.*\\/-]*[\\w*])`, 'g')
const FILE_NAME = /(?<![\w./@-])([\w-]+\.(?:ts|js))\b(?![\w/])/g
/** A comment line in code: `//`, `/*`, ` *`, or `#` (shell, Python, Makefiles). */
const COMMENT = /^\s*(\/\/|\/\*|\*|#)/

/** The files git would commit (tracked, or new and not ignored): generated output is the machine's. */
function repositoryFiles(): string[] {
  const out = execFileSync('git', ['-c', 'core.fsmonitor=false', 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
  return out.split('\0').filter((f) => f && existsSync(join(ROOT, f)))
}

/** Whether git ignores `path` (an output that a build or a run writes, not a file of the repository's). */
function ignoredByGit(path: string): boolean {
  // As a file, or as a folder (a pattern such as `bench/out/` names folders only).
  return [path, `${path}/`].some((p) => {
    try {
      execFileSync('git', ['check-ignore', '-q', '--no-index', p], { cwd: ROOT, stdio: 'ignore' })
      return true
    } catch {
      return false
    }
  })
}

interface Repository {
  files: readonly string[]
  names: ReadonlySet<string>
}

/** Whether `pattern` (a path with `*`s) matches a file of the repository, from the root or from `from`. */
function globMatches(repo: Repository, pattern: string, from: string): boolean {
  const source = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')
  const re = new RegExp(`^(?:${source})(?:/|$)`)
  return repo.files.some((f) => re.test(f) || (from !== '.' && f.startsWith(`${from}/`) && re.test(f.slice(from.length + 1))))
}

/** `file:line: what` for each citation in `text` (the file `file`, relative to the root) that leads nowhere. */
function brokenCitations(repo: Repository, file: string, text: string): string[] {
  const found: string[] = []
  const doc = file.endsWith('.md')
  const from = dirname(file)
  text.split('\n').forEach((line, i) => {
    if (!doc && !COMMENT.test(line)) return
    for (const match of line.matchAll(PATH)) {
      const path = (match[1] as string).replace(/\.$/, '')
      // `src/../../x`: an example of a path that climbs out, not a citation.
      if (path.split('/').includes('..')) continue
      const there = path.includes('*') ? globMatches(repo, path, from) : existsSync(join(ROOT, path)) || existsSync(join(ROOT, from, path))
      // What a build or a run writes (bench/out/results.json) is cited as an output: git ignores it.
      if (!there && !ignoredByGit(path)) found.push(`${file}:${i + 1}: ${path} is not in the repository`)
    }
    if (doc || !NAMES_CHECKED.test(file)) return
    for (const match of line.matchAll(FILE_NAME)) {
      const name = match[1] as string
      if (NOT_FILES.has(name) || repo.names.has(name) || repo.names.has(name.replace(/\.js$/, '.ts'))) continue
      found.push(`${file}:${i + 1}: no file of the repository is named ${name}`)
    }
  })
  return found
}

describe('citations in comments and docs', () => {
  const files = repositoryFiles()
  const repo: Repository = { files, names: new Set(files.map((f) => basename(f))) }
  const scanned = files.filter((f) => (/^(src|docs|test|bin|scripts|native|types|examples|bench)\//.test(f) || f === 'README.md') && !/\/(fixtures?|gen)\//.test(f))

  it('lead to files that exist', () => {
    expect(scanned.length).toBeGreaterThan(300)
    const found: string[] = []
    for (const file of scanned) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      if (!text.includes('\u0000')) found.push(...brokenCitations(repo, file, text))
    }
    expect(found).toEqual([])
  })

  it('the check catches a missing path, a missing file name and a glob that matches nothing; it leaves examples and code alone', () => {
    const cited = [
      ['src/x.ts', ' * the runner (src/sidecar/runners/runner.ts) decides'],
      ['src/x.ts', ' * A fresh isolate (warm.ts), used once.'],
      ['docs/x.md', 'Bundling (`src/sidecar/hooks/bundler*.ts`) runs apart.'],
      ['docs/x.md', 'see [the guide](docs/gone.md)'],
    ] as const
    for (const [file, line] of cited) expect(brokenCitations(repo, file, line), line).toHaveLength(1)
    const fine = [
      ['src/x.ts', ' * the session (src/sidecar/session/session.ts, docs/architecture.md)'],
      ['src/x.ts', ' * warm-isolates.ts keeps them; run-in-isolate.js takes one'],
      ['src/x.ts', "const path = 'src/gone.ts' // code, not a comment"],
      ['src/x.ts', ' * a Node.js child process'],
      ['docs/x.md', 'Bundling (`src/sidecar/hooks/bundle*.ts`) runs apart; `@types/picomatch`; `src/../../x` is refused.'],
      ['test/x.test.ts', ' * writes a.ts and b.ts into the fixture'],
      ['docs/x.md', 'https://github.com/o/r/blob/main/src/nowhere.ts and ~/src/mine and $HOME/docs/x'],
      ['docs/x.md', '| `read_file` | `{"path": "src/a.ts"}` | the text |'],
      ['docs/x.md', 'the bench writes bench/out/never-written-yet.json into bench/out'],
    ] as const
    for (const [file, line] of fine) expect(brokenCitations(repo, file, line), line).toEqual([])
  })

  it("src/ uses the docs' names for the two hook families (step points, event points), never the seeds' code names", () => {
    const found: string[] = []
    for (const file of files.filter((f) => f.startsWith('src/'))) {
      if (SEED_NAMES.test(basename(file))) found.push(`${file}: the file's name`)
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (SEED_NAMES.test(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`)
        })
    }
    expect(found).toEqual([])
  })
})
