/**
 * The files `hookd setup` and `hookd init` change (an agent's settings or hooks file, Codex's
 * config.toml, a tenant's token file), read and written so that a repository cannot steer where the
 * bytes go: every part of the path below the folder the file belongs to (the project, or the user's
 * home) is checked with lstat, and a symbolic link anywhere there is refused (a committed `.claude`
 * that links to the user's own settings, a settings file that links to `~/.bashrc`, a dangling link
 * that would create a file elsewhere). Files are written through a temporary file and a rename, so
 * nothing is written through a link that appears meanwhile.
 *
 * The file as it was is kept as a backup in the user's own state folder
 * (`~/.local/state/hookd/backups/`, 0600), never beside it: a backup of an older setup held the token
 * in the project tree, where `git add .` would commit it.
 */
import { constants } from 'node:fs'
import { lstat, mkdir, open, unlink } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, sep } from 'node:path'
import type { FileChange } from '../../agents/settings/settings-port.js'
import { StateFolder, userStateDir, writeReplacing } from '../../sidecar/state/state-folder.js'
import { CommandError } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { lineDiff } from './text-diff.js'

/** The largest agent file setup reads: settings files are a few KiB. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024

export type { FileChange }

/**
 * Why some part of `file`'s path below `base` is not a plain folder (or the file itself not a regular
 * file), or undefined when every part is one or does not exist yet.
 */
async function linkOnTheWay(file: string, base: string): Promise<string | undefined> {
  const rel = relative(base, file)
  if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || isAbsolute(rel)) return `${file} is not inside ${base}`
  const parts = rel.split(sep)
  let path = base
  for (const [i, part] of parts.entries()) {
    path = join(path, part)
    let info
    try {
      info = await lstat(path)
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
      return `${path} cannot be checked (${(err as Error).message})`
    }
    if (info.isSymbolicLink()) return `${path} is a symbolic link`
    const last = i === parts.length - 1
    if (last && !info.isFile()) return `${path} is not a regular file`
    if (!last && !info.isDirectory()) return `${path} is not a folder`
  }
  return undefined
}

function linkRefusal(problem: string): CommandError {
  return new CommandError(
    `${problem}; hookd setup writes no file through a link or anything but a plain file (a repository may have planted it to send hookd's entries elsewhere): remove it, or edit the file it points to yourself (--dry-run shows the change)`,
  )
}

/** The text of `file`, or '' when there is none; a CommandError when its path holds a link below `base`. */
export async function readConfig(file: string, base: string): Promise<string> {
  const problem = await linkOnTheWay(file, base)
  if (problem) throw linkRefusal(problem)
  let handle
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return ''
    if (code === 'ELOOP') throw linkRefusal(`${file} is a symbolic link`)
    throw new CommandError(`cannot read ${file}: ${(err as Error).message}`)
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) throw linkRefusal(`${file} is not a regular file`)
    if (info.size > MAX_CONFIG_BYTES) throw new CommandError(`${file} is ${info.size} bytes, more than a settings file holds; fix it by hand`)
    return (await handle.readFile()).toString('utf8')
  } finally {
    await handle.close()
  }
}

/** Writes `change.after` to its file: folders made, no link followed, through a temp file and a rename. */
async function writeConfig(change: FileChange): Promise<void> {
  const problem = await linkOnTheWay(change.file, change.base)
  if (problem) throw linkRefusal(problem)
  await mkdir(dirname(change.file), { recursive: true })
  // The folders just made, and any made meanwhile by someone else, are checked again before the write.
  const again = await linkOnTheWay(change.file, change.base)
  if (again) throw linkRefusal(again)
  let mode = change.secret ? 0o600 : 0o644
  if (!change.secret) {
    const info = await lstat(change.file).catch(() => undefined)
    if (info?.isFile()) mode = info.mode & 0o777
  }
  await writeReplacing(change.file, change.after, mode)
}

/** The user's backups folder, made on first use. */
async function backups(io: CliIo): Promise<StateFolder> {
  const state = (await StateFolder.open(userStateDir(io.env), { create: true })) as StateFolder
  return (await StateFolder.open(join(state.path, 'backups'), { create: true })) as StateFolder
}

/** `/home/me/p/.claude/settings.local.json` -> `home-me-p-.claude-settings.local.json`: a backup's name. */
function backupName(file: string, stamp: string): string {
  const flat = file.replace(/^[/\\]+/, '').replace(/[/\\]+/g, '-').replace(/[^A-Za-z0-9._-]/g, '_')
  return `${stamp}-${flat.slice(-180)}.bak`
}

/**
 * Shows the changes (--dry-run, with every secret in `masks` shown as `<token>`), or writes them, each
 * changed file backed up first in the user's state folder. Returns the files written.
 */
export async function applyChanges(changes: readonly FileChange[], io: CliIo, options: { dryRun: boolean; masks?: readonly string[]; command?: string }): Promise<string[]> {
  const say = `hookd ${options.command ?? 'setup'}`
  const masks = (options.masks ?? []).filter((m) => m.length >= 8)
  const shown = (text: string): string => masks.reduce((t, m) => t.split(m).join('<token>'), text)
  if (options.dryRun) {
    for (const c of changes) io.stdout.write(`${say}: would write ${c.file}:\n${c.before === c.after ? '  (no change)' : lineDiff(shown(c.before), shown(c.after))}\n`)
    return []
  }
  for (const c of changes) {
    const problem = await linkOnTheWay(c.file, c.base)
    if (problem) throw linkRefusal(problem)
  }
  const written: string[] = []
  const stamp = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*$/, '')
  for (const c of changes) {
    if (c.before === c.after) {
      io.stdout.write(`${say}: ${c.file} already says this; nothing changed\n`)
      continue
    }
    let backup: string | undefined
    if (c.before !== '') {
      const folder = await backups(io)
      const name = backupName(c.file, stamp)
      await folder.write(name, c.before)
      backup = folder.file(name)
    }
    if (c.remove) {
      await unlink(c.file)
      io.stdout.write(`${say}: removed ${c.file}${backup ? ` (the old one is ${backup})` : ''}\n`)
    } else {
      await writeConfig(c)
      io.stdout.write(`${say}: wrote ${c.file}${backup ? ` (the old one is ${backup})` : ''}\n`)
    }
    written.push(c.file)
  }
  return written
}
