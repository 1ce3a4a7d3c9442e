/**
 * What an agent's own setup code (Codex's trust, Claude Code's checks of its settings) may do to the
 * machine, handed to it by the `hookd setup` and `hookd init` commands (src/cli/setup/settings-io.ts):
 * read files the way setup reads them (never through a link a repository planted, never waiting on a
 * FIFO), ask git the way setup asks it (a repository's config runs nothing), and name the files it
 * changes, which the command writes with a backup or shows in a dry run. Agent folders stay free of
 * the command's own plumbing, and the command stays free of any one agent's steps.
 */

/** One file setup changes: its text before and after. */
export interface FileChange {
  file: string
  /** The folder the file belongs to: no part of the path below it may be a symbolic link. */
  base: string
  before: string
  after: string
  /** 0600 for files that hold a secret; else 0644 (or the mode the file has). */
  secret?: boolean
  /** The file is removed (a hook script of hookd's that no hook needs any more); `after` is ''. */
  remove?: boolean
}

export type GitAnswer = { ok: true; stdout: string } | { ok: false; code: number | undefined; why: string }

export interface SettingsPort {
  readonly env: NodeJS.ProcessEnv
  /**
   * The text of an agent's file, '' when there is none; an error saying so when a part of its path
   * below `base` is a link, or it is not a regular file (a repository may have planted it).
   */
  readSettings(file: string, base: string): Promise<string>
  /** A regular file's text, or undefined (missing, a link unless `follow`, not a regular file, past `maxBytes`). */
  readRegular(file: string, maxBytes: number, follow?: boolean): Promise<string | undefined>
  /** `git args...` in `cwd`, with options that keep the repository's own config from running anything. */
  git(cwd: string, args: readonly string[], maxBytes?: number): Promise<GitAnswer>
  /** The top of the git work tree `dir` is in, or undefined. */
  gitRoot(dir: string): Promise<string | undefined>
  /** A mistake in how the command was called (exit 2), for the agent's code to throw. */
  usage(message: string): Error
}
