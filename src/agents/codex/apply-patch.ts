/**
 * Codex's `apply_patch` in the canonical vocabulary. Its input is one patch (`{command: "*** Begin
 * Patch\n..."}`, measured with Codex 0.169.0), which may touch several files; a patch that adds one
 * file reads as `write_file {path, content}`, and one that changes one block of one file as
 * `edit_file {path, old_string, new_string}`. Any other patch (several files, several blocks, a
 * delete, a move) keeps its own name, so hooks see `apply_patch` with the patch text.
 *
 * The patch is read as Codex reads it (patch-parser.ts), and its paths in the canonical convention
 * (../canonical-path.ts). A patch with a header that does not name its file plainly (patch-header.ts),
 * in any of its hunks, has no canonical form: the gate refuses it, naming the header.
 *
 * A rewrite goes back as a patch of the same kind: the file's new content as added lines, or the old
 * block as removed lines and the new one as added lines (no context lines: the old lines anchor it).
 */
import { readPath } from '../canonical-path.js'
import type { ToolCodec } from '../tool-mapping.js'
import { headerProblem } from './patch-header.js'
import { type PatchHunk, parsePatch } from './patch-parser.js'

const BEGIN = '*** Begin Patch'
const END = '*** End Patch'

/** The first header of `hunks` that does not name its file plainly, as a problem; undefined when all do. */
function unplainHeader(hunks: readonly PatchHunk[]): string | undefined {
  for (const h of hunks) {
    const problem = headerProblem(h.header.line) ?? (h.op === 'update' && h.move ? headerProblem(h.move.line) : undefined)
    if (problem) return problem
  }
  return undefined
}

function patchOf(header: string, lines: string[]): string {
  return [BEGIN, header, ...lines, END, ''].join('\n')
}

function linesOf(text: string): string[] {
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n')
}

export const APPLY_PATCH: ToolCodec = {
  native: 'apply_patch',
  reads: ['write_file', 'edit_file'],
  toCanonical(input, workdir) {
    const hunks = typeof input.command === 'string' ? parsePatch(input.command) : undefined
    // Not a patch the agent would apply: it reaches hooks as it is, and the agent refuses it.
    if (!hunks) return undefined
    const unplain = unplainHeader(hunks)
    if (unplain) return { unreadable: unplain }
    const hunk = hunks.length === 1 ? hunks[0] : undefined
    if (!hunk || hunk.op === 'delete') return undefined
    const one = hunk.op === 'update' ? hunk.first : undefined
    if (hunk.op === 'update' && (hunk.move || hunk.chunks !== 1 || !one?.oldLines.length)) return undefined
    const path = readPath(hunk.header.path, workdir, "the patch's path")
    if (!path.ok) return { unreadable: path.problem }
    if (hunk.op === 'add') return { name: 'write_file', arguments: { path: path.path, content: hunk.content } }
    return { name: 'edit_file', arguments: { path: path.path, old_string: one?.oldLines.join('\n'), new_string: one?.newLines.join('\n') } }
  },
  toNative(name, args, input) {
    const path = String(args.path)
    const marker = name === 'write_file' ? '*** Add File: ' : '*** Update File: '
    const unplain = headerProblem(`${marker}${path}`)
    if (unplain) return `the rewritten ${name} path cannot be written in a patch: ${unplain}`
    if (path === '' || path.endsWith(' ')) return `the rewritten ${name} path ${path === '' ? 'is empty' : 'ends with a space'}, which a patch header cannot carry`
    if (name === 'write_file') {
      const content = String(args.content)
      return { ...input, command: patchOf(`${marker}${path}`, content === '' ? [] : linesOf(content).map((l) => `+${l}`)) }
    }
    if (name === 'edit_file') {
      if (args.replace_all === true) return "the rewritten edit_file asks for replace_all, which Codex's apply_patch cannot do (it changes one block)"
      const lines = [...linesOf(String(args.old_string)).map((l) => `-${l}`), ...linesOf(String(args.new_string)).map((l) => `+${l}`)]
      return { ...input, command: patchOf(`${marker}${path}`, ['@@', ...lines]) }
    }
    return `Codex's apply_patch cannot become ${name}`
  },
}
