/**
 * hookd reads a Codex patch as Codex does: the pinned Codex 0.169.0 applies each patch below
 * (`codex --codex-run-as-apply-patch PATCH`, the same parser its apply_patch tool runs) in a fresh
 * project, and the files it leaves must be the files src/agents/codex/patch-parser.ts says the patch
 * touches, with the content it says for each added file. The patches are the ones whose reading
 * depends on how whitespace is trimmed (Rust's Unicode trim, not JavaScript's), how lines split, and
 * where a header's path starts and ends; a patch Codex refuses must be one hookd's parser refuses.
 *
 * Then the canonical call hooks see for the same headers: a header with a character that is not
 * plain (patch-header.ts) is refused, whichever way the agent would read it.
 */
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative, resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { APPLY_PATCH } from '../../../src/agents/codex/apply-patch.js'
import { type PatchHunk, parsePatch } from '../../../src/agents/codex/patch-parser.js'
import { agentCli } from '../support/cli.js'
import { run } from '../support/other-clis.js'

let codex: string
let scratch: string

beforeAll(async () => {
  codex = await agentCli('codex')
  scratch = await mkdtemp(join(tmpdir(), 'hookd-codex-patch-'))
}, 600_000)

afterAll(async () => {
  await rm(scratch, { recursive: true, force: true })
})

/** Every file under `root`, by its path relative to `root`, with its content. */
async function files(root: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    out[relative(root, path)] = await readFile(path, 'utf8')
  }
  return out
}

/** The files under root after `hunks` apply in root/project, as far as names and added content go. */
function expected(before: Record<string, string>, hunks: readonly PatchHunk[], root: string, project: string): Record<string, string | undefined> {
  const after: Record<string, string | undefined> = { ...before }
  const name = (path: string): string => relative(root, resolve(project, path))
  for (const h of hunks) {
    if (h.op === 'add') after[name(h.header.path)] = h.content
    else if (h.op === 'delete') delete after[name(h.header.path)]
    else if (h.move) {
      after[name(h.move.path)] = expect.any(String) as unknown as string
      delete after[name(h.header.path)]
    } else after[name(h.header.path)] = expect.any(String) as unknown as string
  }
  return after
}

const patch = (...lines: string[]): string => ['*** Begin Patch', ...lines, '*** End Patch', ''].join('\n')

/** Each patch, and the files it starts from (in the project folder). */
const CASES: ReadonlyArray<{ what: string; patch: string; seed?: Record<string, string> }> = [
  { what: 'a plain add', patch: patch('*** Add File: notes.txt', '+one', '+two') },
  { what: 'trailing spaces and a tab after the path', patch: patch('*** Add File: trail.txt \t ', '+x') },
  { what: 'a second space after the marker (part of the path)', patch: patch('*** Add File:  lead.txt', '+x') },
  { what: 'U+0085 (NEL) ending the path: Rust trims it', patch: patch('*** Add File: .env\u0085', '+SECRET=1') },
  { what: 'U+00A0, U+2028 and U+3000 ending paths: Unicode White_Space, trimmed', patch: patch('*** Add File: a\u00a0', '+x', '*** Add File: b\u2028', '+y', '*** Add File: c\u3000', '+z') },
  { what: 'a BOM ending the path: not White_Space, kept', patch: patch('*** Add File: bom\ufeff', '+x') },
  { what: 'a zero-width space inside the path: kept', patch: patch('*** Add File: a\u200bb', '+x') },
  { what: 'an indented header: the line is trimmed first', patch: patch('\t *** Add File: indented.txt', '+x') },
  { what: 'CRLF line ends', patch: '*** Begin Patch\r\n*** Add File: crlf.txt\r\n+x\r\n*** End Patch\r\n' },
  { what: 'blank lines and a heredoc around the patch', patch: `\n\n<<'EOF'\n${patch('*** Add File: heredoc.txt', '+x')}EOF\n` },
  { what: 'a path climbing out of the project', patch: patch('*** Add File: src/../../outside.txt', '+x') },
  { what: 'content lines with trailing whitespace, kept', patch: patch('*** Add File: spaced.txt', '+x  ', '+\ty\t') },
  { what: 'an add, a delete and an update in one patch', patch: patch('*** Add File: new.txt', '+n', '*** Delete File: old.txt', '*** Update File: a.txt', '@@', '-a', '+b'), seed: { 'old.txt': 'o\n', 'a.txt': 'a\n' } },
  { what: 'a move whose path ends in a space and a NEL: trimmed', patch: patch('*** Update File: a.txt', '*** Move to: moved.txt \u0085', '@@', '-a', '+b'), seed: { 'a.txt': 'a\n' } },
  { what: 'a move with a second space after the marker', patch: patch('*** Update File: a.txt', '*** Move to:  moved.txt', '@@', '-a', '+b'), seed: { 'a.txt': 'a\n' } },
  { what: 'an update of two chunks with context and a blank line between', patch: patch('*** Update File: a.txt', '@@ one', '-two', '+2', '', '@@ three', '-four', '+4'), seed: { 'a.txt': 'one\ntwo\nthree\nfour\n' } },
  { what: 'an update header ending in U+3000', patch: patch('*** Update File: a.txt\u3000', '@@', '-a', '+b'), seed: { 'a.txt': 'a\n' } },
  { what: 'no end marker: refused', patch: '*** Begin Patch\n*** Add File: no-end.txt\n+x\n' },
  { what: 'a line after an add that is no header: refused', patch: patch('*** Add File: stray.txt', '+x', 'stray') },
  { what: 'an update with no chunk: refused', patch: patch('*** Update File: a.txt'), seed: { 'a.txt': 'a\n' } },
]

describe('Codex 0.169.0 applies each patch to the files hookd reads in it', () => {
  it.each(CASES)('$what', async ({ patch: text, seed }) => {
    const root = await mkdtemp(join(scratch, 'case-'))
    const project = join(root, 'project')
    await mkdir(project)
    for (const [name, content] of Object.entries(seed ?? {})) await writeFile(join(project, name), content)
    const before = await files(root)
    const ran = await run(process.execPath, [codex, '--codex-run-as-apply-patch', text], { cwd: project, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, timeoutMs: 60_000 })
    const hunks = parsePatch(text)
    if (hunks === undefined) {
      expect(ran.code, ran.stdout).not.toBe(0)
      expect(await files(root)).toEqual(before)
    } else {
      expect(ran.code, ran.stderr).toBe(0)
      expect(await files(root)).toEqual(expected(before, hunks, root, project))
    }
  })
})

describe('the canonical call hooks see for those headers', () => {
  const W = '/home/me/project'
  const canonical = (text: string) => APPLY_PATCH.toCanonical({ command: text }, W)

  it('is the file Codex writes, in the canonical path convention', () => {
    expect(canonical(patch('*** Add File: trail.txt   ', '+x'))).toEqual({ name: 'write_file', arguments: { path: 'trail.txt', content: 'x\n' } })
    expect(canonical(patch('*** Add File:  lead.txt', '+x'))).toEqual({ name: 'write_file', arguments: { path: ' lead.txt', content: 'x\n' } })
    expect(canonical(patch('*** Add File: src/../../outside.txt', '+x'))).toEqual({ name: 'write_file', arguments: { path: '/home/me/outside.txt', content: 'x\n' } })
    expect(canonical('*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n-a\r\n+b\r\n*** End Patch\r\n')).toEqual({ name: 'edit_file', arguments: { path: 'a.txt', old_string: 'a', new_string: 'b' } })
  })

  it('is refused for a header that is not plain, whichever way an agent trims it', () => {
    for (const header of ['*** Add File: .env\u0085', '*** Add File: bom\ufeff', '*** Add File: a\u200bb', '\t *** Add File: indented.txt', '*** Add File: a\u00a0', '*** Add File: trail.txt \t ']) {
      expect(canonical(patch(header, '+x')), JSON.stringify(header)).toEqual({ unreadable: expect.stringMatching(/^the patch header '.*' holds U\+[0-9A-F]{4} \(.*\); a patch header must name its file in plain characters$/) })
    }
    expect(canonical(patch('*** Update File: a.txt', '*** Move to: moved.txt \u0085', '@@', '-a', '+b'))).toEqual({
      unreadable: "the patch header '*** Move to: moved.txt <U+0085>' holds U+0085 (whitespace other than a space); a patch header must name its file in plain characters",
    })
  })

  it('a patch Codex refuses has none: it reaches hooks as apply_patch with its text', () => {
    expect(canonical(patch('*** Add File: stray.txt', '+x', 'stray'))).toBeUndefined()
    expect(canonical('*** Begin Patch\n*** Add File: no-end.txt\n+x\n')).toBeUndefined()
  })
})
