/**
 * Paths in canonical calls (vocabulary.ts): one convention whatever the agent wrote. A path is
 * resolved lexically against the session's workdir (`.` and `..` taken out, as the agents' own tools
 * resolve them: Node's path.resolve in Claude Code and Gemini CLI, Codex's apply_patch likewise, checked
 * with the pinned Codex), then written relative to the workdir when it lies inside it (`.` for the
 * workdir itself) and absolute otherwise. So `src/../../x` reaches hooks as the absolute path of a file
 * outside the project, never as a relative path that looks like it is inside.
 *
 * Some paths have no such form, and a gate refuses them rather than guess (tool-gate.ts): one with a
 * NUL byte (no file name holds one; Gemini CLI strips them, so `a\0b` would be `ab`), and one starting
 * with `~`, which Claude Code reads as the home folder of a user hookd cannot see, and Codex as a
 * folder named `~`.
 */
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { quoted } from '../protocol/text.js'

export type PathRead = { ok: true; path: string } | { ok: false; problem: string }

/** `path` in the canonical convention, lexically normalised; no checks (see readPath). */
export function toWorkdirPath(path: string, workdir: string): string {
  const absolute = resolve(workdir, path)
  const rel = relative(resolve(workdir), absolute)
  if (rel === '') return '.'
  if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) return absolute
  return rel
}

/**
 * `path` in the canonical convention, or why it has none. `field` names it in the problem, as the
 * agent's tool does (`Read's file_path`).
 */
export function readPath(path: string, workdir: string, field: string): PathRead {
  if (path.includes('\0')) return { ok: false, problem: `${field} holds a NUL byte, which no file name can` }
  if (path.startsWith('~')) {
    return { ok: false, problem: `${field} ${quoted(path)} starts with '~', which the agent may read as a home folder; give the path without it` }
  }
  return { ok: true, path: toWorkdirPath(path, workdir) }
}
