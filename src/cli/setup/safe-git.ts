/**
 * git, as setup and init run it in a folder a repository controls: with options that keep the
 * repository's own config from running anything, a bounded wait, and a bounded answer. The questions
 * they ask it: is this file ignored, tracked, where is the work tree's top, which files are there.
 */
import { execFile } from 'node:child_process'
import { dirname } from 'node:path'

/**
 * git's options that keep a repository's own config from running anything: a checkout's `.git/config`
 * (or a bare repository planted in the folder) can name commands that git runs on its own, such as
 * `core.fsmonitor` on any command that reads the index.
 */
export const SAFE_GIT = ['-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', '-c', 'safe.bareRepository=explicit', '--no-optional-locks']

export type GitAnswer = { ok: true; stdout: string } | { ok: false; code: number | undefined; why: string }

/** `git args...` in `cwd` (SAFE_GIT first): its output, or its exit code and why it failed. */
export function git(cwd: string, args: readonly string[], maxBuffer = 1024 * 1024): Promise<GitAnswer> {
  return new Promise((answer) => {
    execFile('git', [...SAFE_GIT, '-C', cwd, ...args], { timeout: 10_000, maxBuffer }, (err, stdout, stderr) => {
      if (!err) return answer({ ok: true, stdout })
      const code = typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : undefined
      answer({ ok: false, code, why: String(stderr).trim().split('\n')[0] || err.message })
    })
  })
}

/** Whether git ignores `file`; undefined when it is not in a git work tree (or git is missing). */
export async function gitIgnores(file: string): Promise<boolean | undefined> {
  if (!(await git(dirname(file), ['rev-parse', '--is-inside-work-tree'])).ok) return undefined
  const ignored = await git(dirname(file), ['check-ignore', '-q', file])
  return ignored.ok ? true : ignored.code === 1 ? false : undefined
}

/** Whether git tracks `file` (its index lists it); undefined when it is not in a git work tree. */
export async function gitTracks(file: string): Promise<boolean | undefined> {
  if (!(await git(dirname(file), ['rev-parse', '--is-inside-work-tree'])).ok) return undefined
  const listed = await git(dirname(file), ['--literal-pathspecs', 'ls-files', '-z', '--', file])
  return listed.ok ? listed.stdout !== '' : undefined
}

/** The top of the git work tree `dir` is in, or undefined. */
export async function gitRoot(dir: string): Promise<string | undefined> {
  const top = await git(dir, ['rev-parse', '--show-toplevel'])
  return top.ok ? top.stdout.trim() || undefined : undefined
}
