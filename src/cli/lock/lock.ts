/**
 * `hookd lock` and `hookd trust`: pin the hooks of a folder by content digest (and permissions) in
 * hookd.lock beside it (src/sidecar/pinning/lock-file.ts). `hookd lock` writes every hook's entry;
 * `hookd trust HOOK...` approves the named hooks as they are now and leaves the others' entries alone.
 * A running `hookd serve` reads the lock again when it changes and serves what it now approves.
 */
import { resolve } from 'node:path'
import { inert } from '../../protocol/text.js'
import { type LockChange, lockHooks } from '../../sidecar/pinning/lock-hooks.js'
import { CommandError, UsageError, parse } from '../common/args.js'
import { isDirectory } from '../common/hook-paths.js'
import type { CliIo } from '../common/io.js'

export const LOCK_HELP = `Usage: hookd lock [--hooks DIR] [--lock-file FILE]

Writes hookd.lock beside the hooks folder (./hooks → ./hookd.lock): each hook's content digest (over
every file it loads: hook.json, index.js, or every file its bundle is made from) and its hook.json
"permissions". Commit it with the hooks. 'hookd serve --locked' then serves only hooks whose files
match it; a version asking for more permissions than its locked one is held even without --locked.
Review what changed before you lock (git diff); a hook that cannot be read is not locked, and the
command exits 1 naming it.

  --hooks DIR         the hooks folder (default: ./hooks)
  --lock-file FILE    the lock file (default: hookd.lock beside DIR)
  --allow-symlinks    follow symbolic links in hook folders, as 'hookd serve --allow-symlinks' does
  -h, --help          show this help`

export const TRUST_HELP = `Usage: hookd trust HOOK... [--hooks DIR] [--lock-file FILE]

Approves the named hooks as their folders are now: writes their entries (content digest and
permissions) to hookd.lock and leaves every other entry as it was. Use it after reviewing a change
that 'hookd serve --locked' or 'hookd check' reported as held; a running sidecar picks the new lock up
and serves the approved version.

  --hooks DIR         the hooks folder (default: ./hooks)
  --lock-file FILE    the lock file (default: hookd.lock beside DIR)
  --allow-symlinks    follow symbolic links in hook folders
  -h, --help          show this help`

const FLAGS = {
  hooks: { type: 'string' },
  'lock-file': { type: 'string' },
  'allow-symlinks': { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const

export function lock(argv: string[], io: CliIo): Promise<number> {
  return run(LOCK_HELP, 'lock', argv, io)
}

export function trust(argv: string[], io: CliIo): Promise<number> {
  return run(TRUST_HELP, 'trust', argv, io)
}

async function run(help: string, command: 'lock' | 'trust', argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(help, { args: argv, strict: true, allowPositionals: true, options: FLAGS })
  if (values.help) {
    io.stdout.write(`${help}\n`)
    return 0
  }
  if (command === 'lock' && positionals.length) throw new UsageError(`'hookd lock' locks every hook of the folder and takes no hook names; to approve some, use hookd trust ${positionals.join(' ')}\n\n${help}`)
  if (command === 'trust' && !positionals.length) throw new UsageError(`name the hooks to approve, e.g. hookd trust guard\n\n${help}`)
  const root = resolve(io.cwd, values.hooks ?? 'hooks')
  if (!(await isDirectory(root))) throw new UsageError(`no such folder '${values.hooks ?? 'hooks'}'; pass the folder that holds your hooks with --hooks DIR`)
  const result = await lockHooks(root, {
    ...(values['lock-file'] !== undefined ? { lockFile: resolve(io.cwd, values['lock-file']) } : {}),
    ...(command === 'trust' ? { only: positionals } : {}),
    followSymlinks: values['allow-symlinks'] === true,
  })
  for (const change of result.changes) io.stdout.write(`${inert(line(change))}\n`)
  const refused = result.changes.filter((c) => c.change === 'refused')
  io.stdout.write(`wrote ${result.path}: ${result.changes.length - refused.length} hook(s) ${command === 'lock' ? 'locked' : 'approved'}\n`)
  if (refused.length) throw new CommandError(`${refused.map((c) => c.name).join(', ')} not ${command === 'lock' ? 'locked' : 'approved'}: fix ${refused.length === 1 ? 'it' : 'them'} (hookd check ${values.hooks ?? 'hooks'} says what is wrong) and run hookd ${command} again`)
  return 0
}

function line(c: LockChange): string {
  switch (c.change) {
    case 'added':
      return `${c.name}: locked (new)`
    case 'unchanged':
      return `${c.name}: unchanged`
    case 'removed':
      return `${c.name}: removed from the lock (its folder is gone)`
    case 'refused':
      return `${c.name}: not locked: ${c.why ?? ''}`
    case 'changed': {
      const perms = c.permissions ? `; permissions ${c.permissions.locked ?? 'none'} -> ${c.permissions.now ?? 'none'}` : ''
      return `${c.name}: changed: ${c.files?.join(', ') || 'no files'}${perms}`
    }
  }
}
