/**
 * `hookd up`, `hookd down`, `hookd status`: this user's own hookd, the one the entries of `hookd init`
 * reach. `up` installs hookd's shim in the user's state folder (where committed entries find it,
 * whatever the machine), then starts `hookd serve --projects` the way this machine keeps a program
 * running: a systemd user service, a launchd agent on a Mac, or else a background process (which
 * does not survive a reboot: `up` says so). It waits until hookd answers on its socket. Run again, it
 * restarts hookd when its version or its service file changed, and leaves a running one alone
 * otherwise.
 */
import { spawn, spawnSync } from 'node:child_process'
import { closeSync, constants, openSync } from 'node:fs'
import { copyFile, lstat, mkdir, readFile, realpath, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { HOOKD_VERSION } from '../../protocol/version.js'
import { StateFolder, userStateDir, writeReplacing } from '../../sidecar/state/state-folder.js'
import { CommandError, UsageError, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { PROJECTS_SOCKET } from '../serve/serve-http.js'
import { NATIVE_SHIM, SCRIPT_SHIM, shimPath } from '../../agents/settings/shim-command.js'
import { launchdPlist, systemdUnit } from './service-files.js'

export const UP_HELP = `Usage: hookd up [--service auto|systemd|launchd|process] [--new-token]
       hookd down
       hookd status

Starts this user's own hookd, which guards every project set up with 'hookd init' (docs/agents.md,
"A team sets up once"): installs hookd's shim in the state folder ($HOOKD_STATE_DIR, else
~/.local/state/hookd), where the committed entries find it, then runs 'hookd serve --projects' as a
systemd user service (Linux), a launchd agent (macOS), or else a background process, and waits until
it answers. Run it once per machine; run it again after upgrading hookd.

  --service auto        (default) systemd or launchd when this machine has one, else a process
  --service process     a background process (its log: hookd.log in the state folder); it does not
                        come back after a reboot
  --new-token           make a new token (the old one stops working at once)
  -h, --help            show this help

'hookd down' stops it (and disables the service); 'hookd status' says whether it runs, and where.`

type Manager = 'systemd' | 'launchd' | 'process'

const PACKAGE = join(dirname(SCRIPT_SHIM), '..')

/** What an answer from the user's hookd on its socket says, or undefined when nothing answers. */
async function ping(socket: string, timeoutMs = 2000): Promise<{ status: string; version?: string } | undefined> {
  return new Promise((resolve) => {
    const req = request({ socketPath: socket, path: '/healthz', timeout: timeoutMs }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        if (text.length < 4096) text += chunk
      })
      res.on('end', () => {
        try {
          const body = JSON.parse(text) as { status?: unknown; version?: unknown }
          resolve({ status: String(body.status), ...(typeof body.version === 'string' ? { version: body.version } : {}) })
        } catch {
          resolve(undefined)
        }
      })
    })
    req.on('timeout', () => req.destroy())
    req.on('error', () => resolve(undefined))
    req.end()
  })
}

function has(command: string, args: string[]): boolean {
  const ran = spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 })
  return ran.status === 0
}

/** The service manager this machine runs for the user. */
function detect(): Manager {
  if (process.platform === 'darwin') return 'launchd'
  if (has('systemctl', ['--user', 'show-environment'])) return 'systemd'
  return 'process'
}

function home(io: CliIo): string {
  return io.env.HOME || homedir()
}

function unitFile(io: CliIo): string {
  return join(io.env.XDG_CONFIG_HOME || join(home(io), '.config'), 'systemd', 'user', 'hookd.service')
}

function plistFile(io: CliIo): string {
  return join(home(io), 'Library', 'LaunchAgents', 'dev.hookd.plist')
}

/** The command that runs this very hookd: node, and the package's bin/hookd.js, by real path. */
async function program(): Promise<string[]> {
  return [process.execPath, await realpath(join(PACKAGE, 'bin', 'hookd.js'))]
}

/** Copies the shim into the state folder's bin/, where committed entries run it. */
async function installShim(state: StateFolder): Promise<string> {
  const bin = (await StateFolder.open(join(state.path, 'bin'), { create: true })) as StateFolder
  const target = bin.file('hookd-hook')
  const source = shimPath()
  const temp = `${target}.${process.pid}.tmp`
  await copyFile(source, temp, constants.COPYFILE_EXCL)
  await writeReplacing(target, await readFile(temp), 0o700)
  await rm(temp, { force: true })
  return target
}

/** Writes a service file (through a temp file and a rename; no link followed), and says whether it changed. */
async function writeService(file: string, text: string): Promise<boolean> {
  const before = await readFile(file, 'utf8').catch(() => undefined)
  if (before === text) return false
  const info = await lstat(file).catch(() => undefined)
  if (info?.isSymbolicLink()) throw new CommandError(`${file} is a symbolic link; hookd writes no service file through a link: remove it, or pass --service process`)
  await mkdir(dirname(file), { recursive: true })
  await writeReplacing(file, text, 0o644)
  return true
}

function run(io: CliIo, command: string, args: string[]): void {
  const ran = spawnSync(command, args, { encoding: 'utf8', timeout: 30_000 })
  if (ran.status !== 0) throw new CommandError(`${command} ${args.join(' ')} failed (${ran.error?.message ?? `exit ${ran.status}`}): ${(ran.stderr ?? '').trim().split('\n').slice(-3).join(' ')}`)
  io.stdout.write(`hookd up: ran ${command} ${args.join(' ')}\n`)
}

/** The pid in the state folder's hookd.pid, when that process is still this user's hookd serve --projects. */
async function runningPid(state: StateFolder): Promise<number | undefined> {
  const text = await state.read('hookd.pid').catch(() => undefined)
  const pid = Number(text?.trim())
  if (!Number.isSafeInteger(pid) || pid <= 1) return undefined
  const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined)
  if (cmdline === undefined) {
    try {
      process.kill(pid, 0)
      return pid
    } catch {
      return undefined
    }
  }
  return cmdline.split('\0').includes('--projects') ? pid : undefined
}

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM')
  } catch {
    return
  }
  const until = Date.now() + 25_000
  while (Date.now() < until) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  try {
    process.kill(pid, 'SIGKILL')
  } catch {
    // gone
  }
}

async function waitUntilUp(socket: string, timeoutMs: number, log: string): Promise<{ version?: string }> {
  const until = Date.now() + timeoutMs
  for (;;) {
    const answer = await ping(socket)
    if (answer?.status === 'serving') return answer
    if (Date.now() > until) throw new CommandError(`hookd did not answer on ${socket} within ${Math.round(timeoutMs / 1000)} s; see ${log}`)
    await new Promise((r) => setTimeout(r, 200))
  }
}

export async function up(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(UP_HELP, {
    args: argv,
    strict: true,
    options: { service: { type: 'string' }, 'new-token': { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) {
    io.stdout.write(`${UP_HELP}\n`)
    return 0
  }
  const wanted = values.service ?? 'auto'
  if (!['auto', 'systemd', 'launchd', 'process'].includes(wanted)) throw new UsageError(`--service takes auto, systemd, launchd or process, not '${wanted}'`)
  const manager: Manager = wanted === 'auto' ? detect() : (wanted as Manager)
  let stateDir: string
  try {
    stateDir = userStateDir(io.env)
  } catch (err) {
    throw new UsageError(HookdError.from(err).message)
  }
  const state = (await StateFolder.open(stateDir, { create: true })) as StateFolder
  const shim = await installShim(state)
  io.stdout.write(`hookd up: installed the shim at ${shim}${shim.endsWith('hookd-hook') && shimPath() === NATIVE_SHIM ? '' : ' (the script form: this install could not compile the shim)'}\n`)
  if (values['new-token']) await state.remove('http-token')
  const socket = state.file(PROJECTS_SOCKET)
  const before = await ping(socket)
  const stale = values['new-token'] || (before !== undefined && before.version !== HOOKD_VERSION)
  const cmd = await program()
  if (cmd[1]?.includes(`${'/'}node_modules${'/'}`) && !cmd[1].includes('/lib/node_modules/')) {
    io.stderr.write(`hookd up: warning: the service runs hookd from ${dirname(dirname(cmd[1]))}; if that folder goes (a project's node_modules, npx's cache), hookd stops. Install it once for your user (npm install --global hookd-sandbox) and run hookd up from there\n`)
  }
  const spec = { program: cmd, stateDir, path: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin` }
  const log = manager === 'systemd' ? 'journalctl --user -u hookd' : state.file('hookd.log')
  if (manager === 'systemd') {
    const changed = await writeService(unitFile(io), systemdUnit(spec))
    run(io, 'systemctl', ['--user', 'daemon-reload'])
    run(io, 'systemctl', ['--user', 'enable', 'hookd.service'])
    run(io, 'systemctl', ['--user', changed || stale ? 'restart' : 'start', 'hookd.service'])
  } else if (manager === 'launchd') {
    const file = plistFile(io)
    const changed = await writeService(file, launchdPlist({ ...spec, logFile: state.file('hookd.log') }))
    const uid = process.getuid?.() ?? 0
    if (changed || stale || !before) {
      spawnSync('launchctl', ['bootout', `gui/${uid}/dev.hookd`], { stdio: 'ignore' })
      run(io, 'launchctl', ['bootstrap', `gui/${uid}`, file])
    }
  } else {
    const pid = await runningPid(state)
    if (pid !== undefined && !stale && before) {
      io.stdout.write(`hookd up: hookd ${before.version ?? ''} already runs (pid ${pid})\n`)
    } else {
      if (pid !== undefined) await stopPid(pid)
      const out = openSync(state.file('hookd.log'), constants.O_WRONLY | constants.O_CREAT | constants.O_APPEND | constants.O_NOFOLLOW, 0o600)
      const child = spawn(cmd[0] as string, [...cmd.slice(1), 'serve', '--projects', '--grace-ms', '10000'], {
        detached: true,
        stdio: ['ignore', out, out],
        cwd: home(io),
        env: { ...io.env, HOOKD_STATE_DIR: stateDir },
      })
      closeSync(out)
      child.unref()
      await state.write('hookd.pid', `${child.pid}\n`)
      io.stdout.write(`hookd up: started hookd (pid ${child.pid}) as a background process; it does not come back after a reboot: run 'hookd up' again then\n`)
    }
  }
  const answer = await waitUntilUp(socket, 60_000, log)
  io.stdout.write(
    `hookd up: hookd ${answer.version ?? ''} is up for this user, on ${socket}. Every project set up with 'hookd init' is now guarded by its own hooks folder.\n` +
      `  logs: ${log}\n  stop: hookd down\n`,
  )
  return 0
}

export async function down(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(UP_HELP, { args: argv, strict: true, options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    io.stdout.write(`${UP_HELP}\n`)
    return 0
  }
  const stateDir = userStateDir(io.env)
  const state = await StateFolder.open(stateDir, { create: false })
  let stopped = false
  if (await lstat(unitFile(io)).then(() => true, () => false)) {
    if (has('systemctl', ['--user', 'show-environment'])) {
      run(io, 'systemctl', ['--user', 'disable', '--now', 'hookd.service'])
      stopped = true
    }
  }
  if (process.platform === 'darwin' && (await lstat(plistFile(io)).then(() => true, () => false))) {
    spawnSync('launchctl', ['bootout', `gui/${process.getuid?.() ?? 0}/dev.hookd`], { stdio: 'ignore' })
    stopped = true
  }
  const pid = state ? await runningPid(state) : undefined
  if (pid !== undefined && state) {
    await stopPid(pid)
    await state.remove('hookd.pid')
    stopped = true
  }
  io.stdout.write(stopped ? "hookd down: this user's hookd is stopped; agents' calls in projects set up with 'hookd init' are refused until 'hookd up'\n" : "hookd down: this user's hookd was not running\n")
  return 0
}

export async function status(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(UP_HELP, { args: argv, strict: true, options: { help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    io.stdout.write(`${UP_HELP}\n`)
    return 0
  }
  const stateDir = userStateDir(io.env)
  const socket = join(stateDir, PROJECTS_SOCKET)
  const answer = await ping(socket)
  const shim = join(stateDir, 'bin', 'hookd-hook')
  const shimThere = await lstat(shim).then((i) => i.isFile(), () => false)
  const service = (await lstat(unitFile(io)).then(() => unitFile(io), () => undefined)) ?? (await lstat(plistFile(io)).then(() => plistFile(io), () => undefined))
  io.stdout.write(
    [
      `hookd status: ${answer?.status === 'serving' ? `running (hookd ${answer.version ?? '?'}; this command is ${HOOKD_VERSION})` : 'not running'}`,
      `  socket:  ${socket}`,
      `  shim:    ${shimThere ? shim : `${shim} (missing: run hookd up)`}`,
      `  service: ${service ?? 'none (a background process, or not set up)'}`,
      '',
    ].join('\n'),
  )
  return answer?.status === 'serving' ? 0 : 1
}
