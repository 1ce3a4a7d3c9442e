/**
 * `hookd check [DIR]`: loads every hook exactly as the sidecar would (one sandbox worker, the real
 * registry, no gRPC) and prints each problem with its file and line. The command to run before
 * committing a hook.
 */
import { readdir, stat } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { inert, inertJson, quoted } from '../../protocol/text.js'
import { splitHint } from '../../sidecar/hooks/author-hints.js'
import { closestPoint } from '../../sidecar/hooks/hook-files.js'
import { describePermissions } from '../../protocol/hook-permissions.js'
import { mayAsk } from '../../sidecar/hooks/may-ask.js'
import { HOOK_NAME } from '../../sidecar/hooks/hook-folder.js'
import { type AnyPoint, getPoint, isGate, isPointName } from '../../protocol/points/points.js'
import { Admission } from '../../sidecar/pinning/admission.js'
import { Registry } from '../../sidecar/hooks/registry.js'
import { DEFAULT_LIMITS } from '../../sidecar/limits.js'
import { WorkerPool } from '../../sidecar/worker/pool/worker-pool.js'
import { UsageError, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'

export const CHECK_HELP = `Usage: hookd check [DIR] [--json] [--allow-symlinks] [--locked] [--lock-file FILE]

Loads every hook in DIR (default: ./hooks) as 'hookd serve' would: each index.js is compiled and run
in a fresh isolate, each hook.json is validated, and the exports are checked against the hook points.
A remote hook (hook.json "remote", see docs/languages.md) is asked what it serves (Describe), so its
server must be running. DIR may also be a single hook's folder (one holding an index.js, or a
hook.json). Prints each problem as

  FILE:LINE: error: ...     the hook would not load (a running sidecar keeps serving its last good
                            version, or skips the hook if it never loaded)
  FILE:LINE: warning: ...   the hook loads, but something looks wrong: an exported function that is
                            not a hook point (with the closest point name), an ignored folder

and, for each hook that loads, what its hook.json "permissions" let it touch and decide:

  FILE: permissions: ...    what it declared (what it does not name, it may not do)
  FILE: note: ...           it declares none, so it may do whatever a session allows; what to add

Exit status: 0 when every hook would load (warnings alone included), 1 when any hook would not,
2 for a usage error (an unknown option, DIR missing).

With a hookd.lock beside DIR (hookd lock), a hook that changed since it was locked is a warning that
says what changed (an error with --locked, as 'hookd serve --locked' would hold it), and a hook whose
permissions ask for more than its locked ones is an error.

  --json            print the report as JSON
  --allow-symlinks  follow symbolic links in hook folders, as 'hookd serve --allow-symlinks' does
  --locked          check as 'hookd serve --locked' serves: a hook that does not match the lock is an error
  --lock-file FILE  the lock file (default: hookd.lock beside DIR)
  -h, --help        show this help`

export interface CheckProblem {
  severity: 'error' | 'warning'
  hook: string
  /** As printed: relative to the current folder when it is inside it. */
  file: string
  line?: number
  message: string
  /** What to write instead, for the usual first mistakes (author-hints.ts). */
  hint?: string
}

export interface CheckedHook {
  name: string
  ok: boolean
  version: string
  points: string[]
  /** Whether it may call ctx.confirm (read from its source: sidecar/hooks/may-ask.ts); `hookd init` registers the events that say what became of an ask. */
  mayAsk: boolean
  /** A remote hook's address, as hook.json writes it. */
  remote?: string
  /** hook.json "permissions" in one line; absent when it declares none (it may do whatever the session allows). */
  permissions?: string
  /** hook.json "tools": the tool calls it is called for; absent: every call. */
  tools?: string[]
}

export interface CheckReport {
  root: string
  hooks: CheckedHook[]
  problems: CheckProblem[]
  /** One line per hook that loads: its permissions, or that it declares none (not a warning). */
  permissions: Array<{ hook: string; file: string; declared: boolean; line: string }>
  errors: number
  warnings: number
}

export async function check(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(CHECK_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, 'allow-symlinks': { type: 'boolean' }, locked: { type: 'boolean' }, 'lock-file': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) {
    io.stdout.write(`${CHECK_HELP}\n`)
    return 0
  }
  if (positionals.length > 1) {
    throw new UsageError(`give one folder to check; got ${positionals.length}: ${positionals.join(' ')}\n\n${CHECK_HELP}`)
  }
  const report = await checkHooks(positionals[0] ?? 'hooks', io.cwd, {
    followSymlinks: values['allow-symlinks'] === true,
    locked: values.locked === true,
    ...(values['lock-file'] !== undefined ? { lockFile: resolve(io.cwd, values['lock-file']) } : {}),
  })
  if (values.json) {
    io.stdout.write(`${inertJson(JSON.stringify(report, null, 2))}\n`)
  } else {
    io.stdout.write(formatReport(report))
  }
  return report.errors > 0 ? 1 : 0
}

/** Checks a hooks folder, or one hook's folder. Usage errors (DIR missing) throw UsageError. */
export async function checkHooks(dir: string, cwd = process.cwd(), options: { followSymlinks?: boolean; locked?: boolean; lockFile?: string } = {}): Promise<CheckReport> {
  const full = resolve(cwd, dir)
  try {
    if (!(await stat(full)).isDirectory()) throw new UsageError(`'${dir}' is a file; pass the folder that holds your hooks (default: ./hooks)`)
  } catch (err) {
    if (err instanceof UsageError) throw err
    throw new UsageError(`no such folder '${dir}'; pass the folder that holds your hooks (default: ./hooks)`)
  }
  // One hook's folder (sandboxed or remote): check it alone, under its parent as the root.
  const single = (await isFile(join(full, 'index.js'))) || (await isFile(join(full, 'hook.json')))
  const root = single ? dirname(full) : full
  const problems: CheckProblem[] = []
  const show = (file: string): string => {
    const rel = relative(cwd, join(root, file))
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : join(root, file)
  }
  let names: string[]
  if (single) {
    names = [basename(full)]
  } else {
    const dirents = await readdir(root, { withFileTypes: true })
    names = []
    for (const d of dirents.sort((a, b) => a.name.localeCompare(b.name))) {
      if (!d.isDirectory() && !d.isSymbolicLink()) continue
      if (HOOK_NAME.test(d.name)) names.push(d.name)
      else if (!d.name.startsWith('.')) {
        problems.push({
          severity: 'warning',
          hook: d.name,
          file: show(d.name),
          message: `folder '${d.name}' is ignored: a hook name starts with a letter or digit and holds only letters, digits, '.', '_' and '-'`,
        })
      }
    }
  }
  if (single && !HOOK_NAME.test(names[0] ?? '')) {
    throw new UsageError(`'${dir}' cannot be a hook: a hook name starts with a letter or digit and holds only letters, digits, '.', '_' and '-'`)
  }

  const hooks: CheckedHook[] = []
  // As hookd serve judges them: the lock beside the folder (an invalid one fails the check, naming its line).
  const pinning = { locked: options.locked === true, ...(options.lockFile !== undefined ? { lockFile: options.lockFile } : {}) }
  const admission = await Admission.open(root, pinning)
  const asLocked = admission.lock && !pinning.locked ? await Admission.open(root, { ...pinning, locked: true }) : undefined
  const permissions: CheckReport['permissions'] = []
  const pool = new WorkerPool({ size: 1 })
  await pool.start()
  try {
    // Each hook is loaded once: a remote hook that does not answer is reported, not asked again.
    const registry = new Registry(root, { loader: pool, runner: pool, limits: DEFAULT_LIMITS, retryRemotes: false, followSymlinks: options.followSymlinks === true, admission })
    try {
      await checkEach(registry, names, hooks, problems, show, permissions)
      if (asLocked) await unlockedChanges(registry, asLocked, hooks, problems, show)
    } finally {
      await registry.close()
    }
  } finally {
    await pool.close()
  }
  if (names.length === 0) {
    problems.push({
      severity: 'warning',
      hook: '',
      file: show('.'),
      message: `no hook folders in ${root}; a hook is a folder holding an index.js (e.g. ${join(dir, 'guard', 'index.js')}), or a hook.json naming a remote hook's server ("remote")`,
    })
  }
  const errors = problems.filter((p) => p.severity === 'error').length
  return { root, hooks, problems, permissions, errors, warnings: problems.length - errors }
}

/** Loads each named hook once, adding what it found to `hooks` and `problems`. */
async function checkEach(
  registry: Registry,
  names: string[],
  hooks: CheckedHook[],
  problems: CheckProblem[],
  show: (file: string) => string,
  permissions: CheckReport['permissions'],
): Promise<void> {
  for (const name of names) {
    const failed = await registry.loadOne(name)
    const loaded = registry.get(name)
    const checked: CheckedHook = { name, ok: !failed, version: loaded?.version ?? '', points: loaded ? [...loaded.points] : [], mayAsk: loaded ? mayAsk(loaded) : false }
    if (loaded?.remote !== undefined) checked.remote = loaded.remote
    if (loaded?.tools !== undefined) checked.tools = [...loaded.tools]
    hooks.push(checked)
    if (failed) {
      const { message, hint } = splitHint({ kind: failed.kind, message: failed.message })
      const problem: CheckProblem = { severity: 'error', hook: name, file: show(failed.file ?? `${name}/index.js`), message }
      if (failed.line !== undefined) problem.line = failed.line
      if (hint !== undefined) problem.hint = hint
      problems.push(problem)
      continue
    }
    if (!loaded) continue
    const jsonFile = show(join(name, 'hook.json'))
    if (loaded.permissions) {
      checked.permissions = describePermissions(loaded.permissions)
      permissions.push({ hook: name, file: jsonFile, declared: true, line: checked.permissions })
    } else permissions.push({ hook: name, file: jsonFile, declared: false, line: UNDECLARED })
    // A guard whose own bug is skipped lets the call through where a host keeps the seed's rule.
    const gates = [...loaded.points].filter((p) => isPointName(p) && isGate(getPoint(p) as AnyPoint))
    if (gates.length && registry.onErrorOf(name) === 'default') {
      problems.push({
        severity: 'warning',
        hook: name,
        file: show(join(name, 'hook.json')),
        message: `the hook guards ${gates.join(', ')} and its hook.json sets no "onError": where a host keeps the seed's rule (gRPC hosts by default), a bug in it (a throw, an invalid answer, a failed load) lets the call through`,
        hint: 'add "onError": "refuse" to its hook.json (the agents\' front door already refuses then), or "skip" to let calls through whenever it fails',
      })
    }
    // One warning per name, for the first 20; one more says how many were left out.
    const unknown = loaded.unknownExports
    if (unknown.length > MAX_EXPORT_WARNINGS) {
      problems.push({
        severity: 'warning',
        hook: name,
        file: show(loaded.filename),
        message: `the hook exports ${unknown.length} functions that are not hook points; the first ${MAX_EXPORT_WARNINGS} are listed`,
      })
    }
    for (const exported of unknown.slice(0, MAX_EXPORT_WARNINGS)) {
      const near = closestPoint(exported)
      const at = registry.lineOf(loaded, exported)
      const problem: CheckProblem = {
        severity: 'warning',
        hook: name,
        file: show(at?.file ?? loaded.filename),
        message: near
          ? `${quoted(exported, 64)} is exported but is not a hook point, so it never runs; did you mean '${near}'?`
          : `${quoted(exported, 64)} is exported but is not a hook point, so it never runs; rename it to a point name or stop exporting it`,
      }
      if (at) problem.line = at.line
      problems.push(problem)
    }
  }
}

const MAX_EXPORT_WARNINGS = 20

/** A warning for each hook that loads but does not match the lock: hookd serve --locked would hold it. */
async function unlockedChanges(registry: Registry, locked: Admission, hooks: CheckedHook[], problems: CheckProblem[], show: (file: string) => string): Promise<void> {
  for (const hook of hooks) {
    const served = registry.get(hook.name)
    if (!hook.ok || !served) continue
    const held = locked.judge({ files: await registry.read(hook.name), permissions: served.writtenPermissions, served: false })
    if (held) problems.push({ severity: 'warning', hook: hook.name, file: show(held.file), message: held.message, hint: `${held.remedy.skipped.replace(/, then it loads$/, '')}; 'hookd serve --locked' holds it until then` })
  }
}

/** What `hookd check` says of a hook without a permissions block: one line, with what to add. */
const UNDECLARED =
  'no "permissions" in its hook.json, so the hook may touch and decide whatever a session allows; add a "permissions" block listing what it needs (docs/writing-hooks.md#permissions)'

function formatReport(report: CheckReport): string {
  const lines = report.problems.map(
    (p) => inert(`${p.file}${p.line !== undefined ? `:${p.line}` : ''}: ${p.severity}: ${p.message}`) + (p.hint ? `\n  hint: ${inert(p.hint)}` : ''),
  )
  for (const p of report.permissions) lines.push(inert(`${p.file}: ${p.declared ? 'permissions' : 'note'}: ${p.line}`))
  const ok = report.hooks.filter((h) => h.ok).length
  const broken = report.hooks.length - ok
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`
  lines.push(
    `checked ${plural(report.hooks.length, 'hook')} in ${report.root}: ${ok} would load, ${broken} would not; ${plural(report.warnings, 'warning')}`,
  )
  return `${lines.join('\n')}\n`
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile()
  } catch {
    return false
  }
}
