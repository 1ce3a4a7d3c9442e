/**
 * The change that adds a file holding a secret to its repository's own exclude list (`info/exclude`:
 * never committed, unlike .gitignore), so that neither `git status` nor `git add .` shows it.
 *
 * Which exclude list is the repository's own is decided here, not by asking git: git follows a `.git`
 * *file* (`gitdir: PATH`) wherever it points, so a folder holding `gitdir: /other/repo/.git` would have
 * setup append to another repository's list. A `.git` folder is the repository's own; a `.git` file is
 * followed only where it is what `git worktree add` makes: its gitdir is `<common>/worktrees/<name>`,
 * that folder's `gitdir` file points back at this `.git` file, and its `commondir` names `<common>`,
 * whose `info/exclude` git reads for every worktree. Anything else (a link, a submodule's `.git` file,
 * one pointing at another repository) is not written to; the refusal says what to add where.
 */
import { lstat, realpath } from 'node:fs/promises'
import { basename, dirname, join, relative, resolve, sep } from 'node:path'
import { readRegularFile } from '../../sidecar/hooks/read-regular-file.js'
import { type FileChange, readConfig } from './setup-files.js'

export type ExcludePlan =
  /** Not in a git work tree, or the file is excluded already: nothing to do. */
  | { kind: 'none' }
  | { kind: 'change'; change: FileChange }
  /** The exclude list could not be told to be this repository's own: what the user should do instead. */
  | { kind: 'refused'; message: string }

/** The folder at or above `dir` that holds `.git`, as git looks for it, or undefined. */
async function workTreeTop(dir: string): Promise<string | undefined> {
  for (let at = resolve(dir); ; at = dirname(at)) {
    if (await lstat(join(at, '.git')).catch(() => undefined)) return at
    if (dirname(at) === at) return undefined
  }
}

/** The first line of a small regular file (no link, no FIFO), or undefined. */
async function firstLine(file: string): Promise<string | undefined> {
  const read = await readRegularFile(file, 4096)
  if (!read.ok) return undefined
  const [line, ...rest] = read.text.split('\n')
  return rest.every((r) => r.trim() === '') ? line?.trim() || undefined : undefined
}

async function samePath(a: string, b: string): Promise<boolean> {
  const [ra, rb] = await Promise.all([realpath(a).catch(() => undefined), realpath(b).catch(() => undefined)])
  return ra !== undefined && ra === rb
}

/**
 * The common git folder of the worktree whose `.git` file is `dotGit`, or why it is not one that
 * `git worktree add` made for this folder.
 */
async function worktreeCommon(dotGit: string): Promise<{ common: string } | { why: string }> {
  const pointer = await firstLine(dotGit)
  const named = pointer && /^gitdir: (.+)$/.exec(pointer)?.[1]
  if (!named) return { why: `${dotGit} is a file that does not say 'gitdir: PATH'` }
  const gitdir = resolve(dirname(dotGit), named)
  const not = `${dotGit} names ${gitdir}, which is not a worktree of this folder`
  if (basename(dirname(gitdir)) !== 'worktrees') return { why: `${not} (a worktree's is <repository>/worktrees/<name>: this may be a submodule's, or another repository's)` }
  const back = await firstLine(join(gitdir, 'gitdir'))
  if (!back || !(await samePath(resolve(gitdir, back), dotGit))) return { why: `${not} (its gitdir file does not point back at ${dotGit})` }
  const commonName = await firstLine(join(gitdir, 'commondir'))
  const common = commonName && resolve(gitdir, commonName)
  if (!common || !(await samePath(common, dirname(dirname(gitdir))))) return { why: `${not} (its commondir does not name the repository it is in)` }
  return { common: await realpath(common) }
}

/** What adding `file` to the exclude list of the repository `project` is in takes (see the file's comment). */
export async function gitExcludeChange(file: string, project: string): Promise<ExcludePlan> {
  const top = await workTreeTop(project)
  if (!top) return { kind: 'none' }
  const line = `/${relative(top, file).split(sep).join('/')}`
  const dotGit = join(top, '.git')
  const info = await lstat(dotGit)
  let common: string
  if (info.isDirectory()) {
    common = dotGit
  } else {
    const worktree = info.isFile() ? await worktreeCommon(dotGit) : { why: `${dotGit} is ${info.isSymbolicLink() ? 'a symbolic link' : 'neither a folder nor a file'}` }
    if ('why' in worktree) {
      return {
        kind: 'refused',
        message: `${worktree.why}; hookd setup writes to no exclude list it cannot tell is this repository's own. Keep ${file} out of git yourself: add '${line}' to this repository's info/exclude (the one 'git rev-parse --git-path info/exclude' names, once you have checked it is yours) or to .gitignore`,
      }
    }
    common = worktree.common
  }
  const excludeFile = join(common, 'info', 'exclude')
  const before = await readConfig(excludeFile, common)
  if (before.split('\n').some((l) => l.trim() === line)) return { kind: 'none' }
  const after = `${before}${before === '' || before.endsWith('\n') ? '' : '\n'}# hookd setup: this file holds hookd's token\n${line}\n`
  return { kind: 'change', change: { file: excludeFile, base: common, before, after } }
}
