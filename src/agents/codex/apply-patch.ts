/**
 * Codex's `apply_patch` in the canonical vocabulary. Its input is one patch (`{command: "*** Begin
 * Patch\n..."}`, measured with Codex 0.169.0), which may touch several files; a patch that adds one
 * file reads as `write_file {path, content}`, and one that changes one contiguous block of one file as
 * `edit_file {path, old_string, new_string}`. Any other patch (several files, several blocks, a
 * delete, a move) keeps its own name, so hooks see `apply_patch` with the patch text.
 *
 * A rewrite goes back as a patch of the same kind: the file's new content as added lines, or the old
 * block as removed lines and the new one as added lines (no context lines: the old lines anchor it).
 */
import type { ToolCodec } from '../tool-mapping.js'
import { toWorkdirPath } from '../tool-mapping.js'

const BEGIN = '*** Begin Patch'
const END = '*** End Patch'

interface Hunk {
  op: 'add' | 'update' | 'other'
  path: string
  lines: string[]
}

/** The patch's file hunks, or undefined when the text is not a patch. */
function hunks(patch: string): Hunk[] | undefined {
  const lines = patch.replace(/\r\n/g, '\n').split('\n')
  while (lines.length && lines[lines.length - 1] === '') lines.pop()
  if (lines[0]?.trim() !== BEGIN || lines[lines.length - 1]?.trim() !== END) return undefined
  const out: Hunk[] = []
  for (const line of lines.slice(1, -1)) {
    const header = /^\*\*\* (Add|Update|Delete) File: (.+)$/.exec(line)
    if (header) {
      out.push({ op: header[1] === 'Add' ? 'add' : header[1] === 'Update' ? 'update' : 'other', path: (header[2] as string).trim(), lines: [] })
      continue
    }
    const current = out[out.length - 1]
    if (!current) return undefined
    current.lines.push(line)
  }
  return out
}

function addArgs(hunk: Hunk, workdir: string): Record<string, unknown> | undefined {
  if (!hunk.lines.every((l) => l.startsWith('+'))) return undefined
  const content = hunk.lines.map((l) => l.slice(1)).join('\n')
  return { path: toWorkdirPath(hunk.path, workdir), content: hunk.lines.length ? `${content}\n` : '' }
}

function updateArgs(hunk: Hunk, workdir: string): Record<string, unknown> | undefined {
  let body = hunk.lines
  if (body[0]?.startsWith('@@')) body = body.slice(1)
  if (body[body.length - 1] === '*** End of File') body = body.slice(0, -1)
  // One block only: a second `@@` or a move makes it more than one edit.
  if (!body.length || body.some((l) => !/^[ +-]/.test(l))) return undefined
  const old = body.filter((l) => !l.startsWith('+')).map((l) => l.slice(1))
  const next = body.filter((l) => !l.startsWith('-')).map((l) => l.slice(1))
  if (!old.length) return undefined
  return { path: toWorkdirPath(hunk.path, workdir), old_string: old.join('\n'), new_string: next.join('\n') }
}

function patchOf(header: string, lines: string[]): string {
  return [BEGIN, header, ...lines, END, ''].join('\n')
}

function linesOf(text: string): string[] {
  return (text.endsWith('\n') ? text.slice(0, -1) : text).split('\n')
}

export const APPLY_PATCH: ToolCodec = {
  native: 'apply_patch',
  toCanonical(input, workdir) {
    const all = typeof input.command === 'string' ? hunks(input.command) : undefined
    const hunk = all?.length === 1 ? all[0] : undefined
    if (hunk?.op === 'add') {
      const args = addArgs(hunk, workdir)
      return args && { name: 'write_file', arguments: args }
    }
    if (hunk?.op === 'update') {
      const args = updateArgs(hunk, workdir)
      return args && { name: 'edit_file', arguments: args }
    }
    return undefined
  },
  toNative(name, args, input) {
    const path = String(args.path)
    if (/[\n\r]/.test(path)) return `the rewritten ${name} path holds a line break, which a patch cannot carry`
    if (name === 'write_file') {
      const content = String(args.content)
      return { ...input, command: patchOf(`*** Add File: ${path}`, content === '' ? [] : linesOf(content).map((l) => `+${l}`)) }
    }
    if (name === 'edit_file') {
      if (args.replace_all === true) return "the rewritten edit_file asks for replace_all, which Codex's apply_patch cannot do (it changes one block)"
      const lines = [...linesOf(String(args.old_string)).map((l) => `-${l}`), ...linesOf(String(args.new_string)).map((l) => `+${l}`)]
      return { ...input, command: patchOf(`*** Update File: ${path}`, ['@@', ...lines]) }
    }
    return `Codex's apply_patch cannot become ${name}`
  },
}
