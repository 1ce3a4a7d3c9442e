/**
 * The second wall: what stands around a worker process, so that a hook that escaped its isolate (an
 * isolated-vm or V8 bug) finds nothing worth having. Each wall is measured on this machine when the
 * first pool starts (a probe), used when it works, and reported either way (`describe`, printed once by
 * `hookd serve`); docs/containment.md says what each blocks and what it costs.
 *
 * - **Environment**: a worker gets none of the sidecar's (no tokens, keys or `HOOKD_*` secrets): only
 *   what Node needs to run it.
 * - **Node's permission model**: file reads only below hookd's own package folder and isolated-vm's,
 *   each where Node resolved it (worker-folders.ts), no file writes, no child processes, no worker
 *   threads (`--experimental-permission`, with `--allow-addons` for isolated-vm).
 * - **Network**: a network namespace of its own, with no interface up (`unshare --net` as root,
 *   `unshare --user --net --map-root-user` otherwise). Workers need none: capabilities go through the
 *   sidecar over the inherited IPC channel.
 * - **User**: started as root, a worker runs as an unprivileged uid/gid of its own (one per worker, so
 *   that two workers cannot signal, trace or read each other's /proc), with no supplementary groups, no
 *   capabilities, no-new-privs, and a parent-death signal (`setpriv`).
 * - **Memory**: a memory cgroup per worker where hookd may create one (root, a writable memory
 *   controller); else an address-space limit (`prlimit --as`), which bounds what V8 can reserve.
 * - **Tenants**: each tenant has workers of its own (tenancy/tenants.ts), so a tenant's hooks, ctx and
 *   payloads never enter a process that runs another tenant's hooks.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, rmdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { workerFolders } from './worker-folders.js'

export interface WallOptions {
  /**
   * Put the walls up (default). False leaves only the minimal environment: for measuring what the walls
   * cost (bench/walls.ts), never for serving.
   */
  enabled?: boolean
  /** The first uid (and gid) given to workers when hookd runs as root. Default 1900000000. */
  uidBase?: number
  /** The memory one worker may use, in MB (cgroup limit, or address space when there is no cgroup). */
  workerMemoryMb?: number
  /**
   * Workers run from TypeScript source through tsx (tests, development): tsx needs threads, child
   * processes (esbuild) and reads outside the install folder, so Node's permission model stays off.
   */
  fromSource?: boolean
}

/** How a worker process is started: the program, its arguments, its environment. */
export interface WorkerCommand {
  file: string
  args: string[]
  env: NodeJS.ProcessEnv
  /** '/': a worker needs no folder of the sidecar's (and its uid may not be allowed into it). */
  cwd: string
}

export interface Walls {
  /** One line per wall: up, or down and why. */
  describe(): string[]
  /** The command that starts `entry` with Node options `execArgv` behind the walls, as worker `slot`. */
  command(entry: string, execArgv: readonly string[], slot: number): WorkerCommand
  /** Puts a started worker in its memory cgroup, when there is one; returns what removes it after exit. */
  attach(pid: number, slot: number): () => void
}

export const DEFAULT_UID_BASE = 1_900_000_000
export const DEFAULT_WORKER_MEMORY_MB = 1024
/** V8 reserves far more address space than it uses (code range, cage): the floor of an AS limit. */
const MIN_ADDRESS_SPACE_MB = 8 * 1024

/** What a worker's environment may hold of the sidecar's. */
const PASSED_ENV = ['HOOKD_WARM_ISOLATES', 'TZ', 'LANG', 'LC_ALL']

function which(program: string): string | undefined {
  for (const dir of ['/usr/bin', '/bin', '/usr/sbin', '/sbin', '/usr/local/bin']) {
    const path = join(dir, program)
    if (existsSync(path)) return path
  }
  return undefined
}

/** Runs `file args...` (then `/bin/true` unless told otherwise) and says whether it worked: a probe of one wall. */
function works(file: string, args: string[], then = '/bin/true'): { ok: true } | { ok: false; why: string } {
  const ran = spawnSync(file, then ? [...args, then] : args, { stdio: ['ignore', 'ignore', 'pipe'], timeout: 5000, encoding: 'utf8' })
  if (ran.status === 0) return { ok: true }
  return { ok: false, why: (ran.stderr || ran.error?.message || `exit ${ran.status}`).trim().split('\n')[0] || `exit ${ran.status}` }
}

const probed = new Map<string, Walls>()

/** The walls this machine allows, probed once per process (and per set of options). */
export function walls(options: WallOptions = {}): Walls {
  const key = JSON.stringify(options)
  let found = probed.get(key)
  if (!found) {
    found = probe(options)
    probed.set(key, found)
  }
  return found
}

function probe(options: WallOptions): Walls {
  const lines: string[] = []
  const enabled = options.enabled ?? true
  const memoryMb = options.workerMemoryMb ?? DEFAULT_WORKER_MEMORY_MB
  const uidBase = options.uidBase ?? DEFAULT_UID_BASE
  const root = process.getuid?.() === 0
  lines.push("environment: minimal (none of the sidecar's variables)")

  // hookd's package folder and isolated-vm's, wherever npm put them: all a worker reads.
  const folders = workerFolders()
  const readable = folders.readable
  const permission = options.fromSource || !enabled
    ? []
    : [
        '--experimental-permission',
        '--allow-addons',
        // One flag per folder, each with its wildcard (Node 20.20 takes no comma lists).
        ...readable.map((dir) => `--allow-fs-read=${join(dir, '*')}`),
        '--disable-warning=ExperimentalWarning',
        '--disable-warning=SecurityWarning',
      ]
  if (!enabled) {
    lines.push('permission model, network, user, memory: OFF (walls switched off)')
    return build(lines, [], [], undefined, memoryMb, uidBase, options.fromSource ?? false)
  }
  lines.push(
    options.fromSource
      ? 'permission model: OFF (workers run from TypeScript source through tsx; the built hookd has it)'
      : `permission model: reads only ${readable.join(' and ')}; no writes, no child processes, no threads`,
  )

  const prefix: string[] = []
  if (process.platform !== 'linux') {
    lines.push(`network, user, memory: NOT isolated (these walls need Linux; this is ${process.platform})`)
    return build(lines, prefix, permission, undefined, memoryMb, uidBase, options.fromSource ?? false)
  }

  const unshare = which('unshare')
  const setpriv = which('setpriv')
  const prlimit = which('prlimit')

  // Network namespace.
  let net: string[] | undefined
  if (unshare) {
    const asRoot = root ? works(unshare, ['--net', '--']) : { ok: false as const, why: 'not root' }
    if (asRoot.ok) net = [unshare, '--net', '--']
    else {
      const userNs = works(unshare, ['--user', '--net', '--map-root-user', '--'])
      if (userNs.ok) net = [unshare, '--user', '--net', '--map-root-user', '--']
      else lines.push(`network: NOT isolated (unshare --net: ${asRoot.why}; unshare --user --net: ${userNs.why})`)
    }
  } else lines.push('network: NOT isolated (unshare is not installed; install util-linux)')
  if (net) {
    prefix.push(...net)
    lines.push('network: a namespace of its own per worker, no interface up')
  }

  // User, capabilities, no-new-privs, parent-death signal.
  if (setpriv) {
    const drop = root ? ['--reuid', '{uid}', '--regid', '{uid}', '--clear-groups', '--inh-caps=-all', '--bounding-set=-all'] : []
    const base = [...drop, '--no-new-privs', '--pdeathsig', 'KILL', '--']
    const probeArgs = base.map((a) => (a === '{uid}' ? String(uidBase) : a))
    const tried = works(setpriv, probeArgs)
    // The worker's uid must be able to read hookd's code and its isolated-vm addon.
    const mustRead = [join(folders.hookd, 'package.json'), join(folders.isolatedVm, 'package.json')]
    const reads = tried.ok ? works(setpriv, [...probeArgs, '/bin/sh', '-c', 'test -r "$0" && test -r "$1"', ...mustRead], '') : tried
    if (!tried.ok) lines.push(`user: NOT dropped (setpriv: ${tried.why})`)
    else if (!reads.ok)
      lines.push(`user: NOT dropped: uid ${uidBase} cannot read ${readable.join(' and ')}; make those folders readable to others (chmod o+rX)`)
    else {
      prefix.push(setpriv, ...base)
      lines.push(root ? `user: an unprivileged uid/gid per worker (from ${uidBase}), no capabilities, no-new-privs` : "user: the sidecar's own (not root), no-new-privs")
    }
  } else lines.push(root ? 'user: NOT dropped: workers run as root (setpriv is not installed; install util-linux)' : "user: the sidecar's own (not root)")

  // Memory: a cgroup per worker, else an address-space limit.
  const cgroup = root ? memoryCgroup() : undefined
  if (cgroup) lines.push(`memory: a cgroup per worker, ${memoryMb} MB`)
  else if (prlimit) {
    const asMb = Math.max(MIN_ADDRESS_SPACE_MB, memoryMb)
    prefix.push(prlimit, `--as=${asMb * 1024 * 1024}`, '--')
    lines.push(`memory: an address-space limit of ${asMb} MB per worker (no memory cgroup hookd may create)`)
  } else lines.push('memory: bounded by the isolates\' limits only (no cgroup, prlimit not installed)')

  return build(lines, prefix, permission, cgroup, memoryMb, uidBase, options.fromSource ?? false)
}

function build(lines: string[], prefix: string[], permission: string[], cgroup: string | undefined, memoryMb: number, uidBase: number, fromSource: boolean): Walls {
  return {
    describe: () => [...lines],
    command: (entry, execArgv, slot) => {
      const env: NodeJS.ProcessEnv = {}
      for (const name of PASSED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name]
      // From source, each worker's uid would get a tsx cache folder of its own in /tmp, never reused.
      if (fromSource) env.TSX_DISABLE_CACHE = '1'
      const node = [process.execPath, ...permission, ...execArgv, entry]
      const wrapped = [...prefix.map((a) => (a === '{uid}' ? String(uidBase + (slot % 65536)) : a)), ...node]
      return { file: wrapped[0] as string, args: wrapped.slice(1), env, cwd: '/' }
    },
    attach: (pid, slot) => {
      if (!cgroup) return () => {}
      const dir = join(cgroup, `worker-${process.pid}-${slot}`)
      try {
        mkdirSync(dir, { recursive: true })
        writeFileSync(join(dir, 'memory.limit_in_bytes'), String(memoryMb * 1024 * 1024))
        writeFileSync(join(dir, 'cgroup.procs'), String(pid))
      } catch {
        return () => {}
      }
      return () => removeCgroup(dir)
    },
  }
}

/** Removes a worker's cgroup once the kernel lets go of it (a moment after the exit), trying for a few seconds. */
function removeCgroup(dir: string, tries = 20): void {
  try {
    rmdirSync(dir)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EBUSY' && tries > 1) setTimeout(() => removeCgroup(dir, tries - 1), 250).unref()
  }
}

/** True when process `pid` exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * A memory cgroup folder hookd may create children in (cgroup v1 memory controller), if any. Workers'
 * cgroups left by sidecars that are gone (killed before they could remove them) are removed.
 */
function memoryCgroup(): string | undefined {
  const v1 = '/sys/fs/cgroup/memory'
  if (!existsSync(join(v1, 'memory.limit_in_bytes'))) return undefined
  const dir = join(v1, 'hookd')
  try {
    mkdirSync(dir, { recursive: true })
  } catch {
    return undefined
  }
  for (const name of readdirSync(dir)) {
    const owner = /^worker-(\d+)-\d+$/.exec(name)?.[1]
    if (owner !== undefined && !alive(Number(owner))) removeCgroup(join(dir, name), 1)
  }
  return dir
}
