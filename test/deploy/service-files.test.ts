/**
 * deploy/systemd/hookd.service and deploy/launchd/dev.hookd.plist: systemd accepts the unit
 * (`systemd-analyze verify --user`), its sandboxing is what docs/operations.md says, the launchd job
 * is a well-formed property list with the keys launchd reads, and the command each one starts really
 * serves hooks.
 */
import { spawnSync } from 'node:child_process'
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { request } from 'node:http'
import { afterAll, describe, expect, it } from 'vitest'
import { launchdPlist, systemdUnit } from '../../src/cli/up/service-files.js'
import { parsePlist } from '../support/deploy/plist.js'
import { ROOT, runInProcess, startServe, stopProcess } from '../support/processes.js'
import { EXAMPLE_HOOKS } from '../support/sidecar.js'
import { parseUnit } from '../support/deploy/systemd-unit.js'

const UNIT = join(ROOT, 'deploy', 'systemd', 'hookd.service')
const PLIST = join(ROOT, 'deploy', 'launchd', 'dev.hookd.plist')
const PYTHON = process.env.HOOKD_PYTHON ?? '/usr/bin/python3'

/** The user's hookd's /healthz, asked on its socket. */
function healthz(socket: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath: socket, path: '/healthz' }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => resolve(JSON.parse(text)))
    })
    req.on('error', reject)
    req.end()
  })
}

const temps: string[] = []
afterAll(async () => {
  for (const dir of temps) await rm(dir, { recursive: true, force: true })
})
async function temp(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix))
  temps.push(dir)
  return dir
}

/**
 * `systemd-analyze verify --user` on a copy of `text`, with a home folder in which %h/.local/bin/hookd
 * is this checkout's command (systemd checks that ExecStart's program exists). Returns what it printed;
 * systemd prints nothing for a unit it accepts whole (an unknown key is only a warning, with exit 0).
 */
async function verify(text: string): Promise<{ status: number | null; output: string }> {
  const home = await temp('hookd-home-')
  await mkdir(join(home, '.local', 'bin'), { recursive: true })
  await symlink(join(ROOT, 'bin', 'hookd.js'), join(home, '.local', 'bin', 'hookd'))
  const runtime = await temp('hookd-xdg-')
  const dir = await temp('hookd-unit-')
  await writeFile(join(dir, 'hookd.service'), text)
  const ran = spawnSync('systemd-analyze', ['verify', '--user', '--man=no', join(dir, 'hookd.service')], {
    env: { PATH: process.env.PATH, HOME: home, XDG_RUNTIME_DIR: runtime },
    encoding: 'utf8',
  })
  if (ran.error) throw new Error(`cannot run systemd-analyze (${ran.error.message}); install Debian's systemd package (make deploy-deps)`)
  return { status: ran.status, output: `${ran.stdout}${ran.stderr}`.trim() }
}

describe('deploy/systemd/hookd.service', () => {
  it('is accepted by systemd-analyze verify --user, without a warning', async () => {
    expect(await verify(await readFile(UNIT, 'utf8'))).toEqual({ status: 0, output: '' })
  })

  it('a mistake in it is caught: a misspelt sandboxing key, a missing program', async () => {
    const text = await readFile(UNIT, 'utf8')
    const typo = await verify(text.replace('RestrictNamespaces=user net', 'RestrictNamespace=user net'))
    expect(typo.output).toMatch(/hookd\.service:\d+: Unknown key 'RestrictNamespace' in section \[Service\], ignoring\./)
    const missing = await verify(text.replace('%h/.local/bin/hookd serve', '%h/.local/bin/hookdd serve'))
    expect(missing.status).not.toBe(0)
    expect(missing.output).toMatch(/Command .*\/\.local\/bin\/hookdd is not executable/)
  })

  it('sandboxes hookd, leaves user and network namespaces to its workers, and leaves JIT memory alone', async () => {
    const service = parseUnit(await readFile(UNIT, 'utf8')).Service as Record<string, string[]>
    const one = (key: string): string | undefined => service[key]?.at(-1)
    for (const [key, value] of Object.entries({
      NoNewPrivileges: 'yes',
      ProtectSystem: 'strict',
      ProtectHome: 'read-only',
      PrivateTmp: 'yes',
      PrivateDevices: 'yes',
      LockPersonality: 'yes',
      RestrictRealtime: 'yes',
      RestrictSUIDSGID: 'yes',
      RestrictAddressFamilies: 'AF_UNIX AF_INET AF_INET6',
      SystemCallFilter: '@system-service',
      ReadWritePaths: '%h/.local/state/hookd',
    })) {
      expect(one(key), key).toBe(value)
    }
    expect(one('RestrictNamespaces')?.split(/\s+/).sort()).toEqual(['net', 'user'])
    for (const absent of ['MemoryDenyWriteExecute', 'PrivateNetwork', 'ProcSubset']) expect(service[absent], absent).toBeUndefined()
    // The state folder the shim looks in (HOOKD_STATE_DIR, else ~/.local/state/hookd), and the only one it may write.
    expect(service.Environment).toContain('HOOKD_STATE_DIR=%h/.local/state/hookd')
    // systemd's SIGKILL comes after TimeoutStopSec: the drain (--grace-ms) and the workers' stop must fit.
    const grace = Number(/--grace-ms (\d+)/.exec(one('ExecStart') ?? '')?.[1] ?? 5000)
    expect(Number(one('TimeoutStopSec')) * 1000).toBeGreaterThanOrEqual(grace + 5000)
  })

  it('MemoryDenyWriteExecute stays unset: under the same rule node aborts before running any JavaScript', (ctx) => {
    // PR_SET_MDWE (65) with PR_MDWE_REFUSE_EXEC_GAIN (1): the kernel's own form of the rule (Linux 6.3+).
    const script = 'import ctypes, os, sys\nlibc = ctypes.CDLL(None, use_errno=True)\nif sys.argv[2] == "mdwe" and libc.prctl(65, 1, 0, 0, 0) != 0: sys.exit(77)\nos.execv(sys.argv[1], [sys.argv[1], "-e", "console.log(6 * 7)"])'
    const run = (mode: string) => spawnSync(PYTHON, ['-c', script, process.execPath, mode], { encoding: 'utf8' })
    const plain = run('plain')
    if (plain.error) ctx.skip(`no ${PYTHON}`)
    expect(plain.stdout).toBe('42\n')
    const mdwe = run('mdwe')
    if (mdwe.status === 77) ctx.skip('this kernel has no PR_SET_MDWE (Linux 6.3+)')
    expect(mdwe.stdout).toBe('')
    expect(mdwe.signal ?? mdwe.status).not.toBe(0)
    expect(mdwe.stderr).toContain('SetPermissions')
  })

  it('is what hookd up writes, for an npm install under ~/.local', async () => {
    expect(await readFile(UNIT, 'utf8')).toBe(systemdUnit({ program: ['%h/.local/bin/hookd'], stateDir: '%h/.local/state/hookd' }))
  })

  it("starts the user's hookd, which answers on its socket, and stops it within TimeoutStopSec", async () => {
    const service = parseUnit(await readFile(UNIT, 'utf8')).Service as Record<string, string[]>
    const home = await temp('hookd-home-')
    const fill = (text: string): string => text.replaceAll('%h', home)
    // What hookd up does before starting it: the state folder, 0700 (ReadWritePaths needs it to exist).
    await mkdir(join(home, '.local', 'state', 'hookd'), { recursive: true, mode: 0o700 })
    const argv = fill(service.ExecStart?.at(-1) as string).split(/\s+/)
    expect(argv.slice(0, 2)).toEqual([join(home, '.local', 'bin', 'hookd'), 'serve'])
    const env = Object.fromEntries((service.Environment ?? []).map((e) => fill(e).split('=', 2) as [string, string]))
    const serving = await startServe(argv.slice(2), { cwd: home, env })
    try {
      expect(serving.address).toBe(`unix:${join(home, '.local', 'state', 'hookd', 'front.sock')}`)
      expect(await healthz(join(home, '.local', 'state', 'hookd', 'front.sock'))).toMatchObject({ status: 'serving' })
      const started = performance.now()
      expect(await stopProcess(serving.child, 'SIGTERM')).toBe(0)
      expect(performance.now() - started).toBeLessThan(Number(service.TimeoutStopSec?.at(-1)) * 1000)
    } finally {
      await stopProcess(serving.child, 'SIGKILL')
    }
  })
})

/** The launchd.plist(5) keys a job may carry that this file uses or might; anything else is a typo. */
const LAUNCHD_KEYS = new Set([
  'Label', 'Program', 'ProgramArguments', 'EnvironmentVariables', 'WorkingDirectory', 'RunAtLoad', 'KeepAlive', 'ThrottleInterval',
  'ExitTimeOut', 'ProcessType', 'Umask', 'StandardOutPath', 'StandardErrorPath', 'StandardInPath', 'UserName', 'GroupName',
  'LimitLoadToSessionType', 'Nice', 'SoftResourceLimits', 'HardResourceLimits', 'LowPriorityIO', 'Disabled', 'AbandonProcessGroup',
])

interface LaunchdJob {
  Label: string
  ProgramArguments: string[]
  EnvironmentVariables: Record<string, string>
  KeepAlive: { SuccessfulExit: boolean }
  ExitTimeOut: number
  [key: string]: unknown
}

describe('deploy/launchd/dev.hookd.plist', () => {
  it('is a property list that Python’s plistlib reads the same way', async (ctx) => {
    const job = parsePlist(await readFile(PLIST, 'utf8'))
    const python = spawnSync(PYTHON, ['-c', 'import json, plistlib, sys; print(json.dumps(plistlib.load(open(sys.argv[1], "rb"))))', PLIST], { encoding: 'utf8' })
    if (python.error) ctx.skip(`no ${PYTHON} to compare with`)
    expect(python.status, python.stderr).toBe(0)
    expect(JSON.parse(python.stdout)).toEqual(job)
  })

  it('is a launchd job named after its file, with absolute paths and a drain that fits ExitTimeOut', async () => {
    const job = parsePlist(await readFile(PLIST, 'utf8')) as LaunchdJob
    expect(Object.keys(job).filter((k) => !LAUNCHD_KEYS.has(k))).toEqual([])
    expect(job.Label).toBe(basename(PLIST, '.plist'))
    const [program, command, ...args] = job.ProgramArguments
    expect(program).toMatch(/^\/.*\/hookd$/)
    expect(command).toBe('serve')
    // `#!/usr/bin/env node`: node must be on the job's PATH, beside hookd for an npm global install.
    expect(job.EnvironmentVariables.PATH?.split(':')).toContain(dirname(program as string))
    // launchd expands neither ~ nor $HOME: every path is absolute.
    const strings = JSON.stringify(job)
    expect(strings).not.toMatch(/[~$]/)
    expect(args).toContain('--projects')
    expect(job.EnvironmentVariables.HOOKD_STATE_DIR).toMatch(/^\//)
    expect(job.KeepAlive).toEqual({ SuccessfulExit: false })
    const grace = Number(args[args.indexOf('--grace-ms') + 1] ?? 5000)
    expect(job.ExitTimeOut * 1000).toBeGreaterThanOrEqual(grace + 5000)
  })

  it('a broken property list is refused, saying where', () => {
    expect(() => parsePlist('<plist version="1.0"><dict><key>Label</key><string>a</string><key>Label</key><string>b</string></dict></plist>')).toThrow(
      "key 'Label' appears twice",
    )
    expect(() => parsePlist('<plist version="1.0"><dict><key>Label</key><string>a</dict></plist>')).toThrow('</dict> at offset 52 closes <string>')
    expect(() => parsePlist('<plist version="1.0"><dict><key>RunAtLoad</key><yes/></dict></plist>')).toThrow('<yes> at offset 47 is not a plist value')
    expect(() => parsePlist('<plist version="1.0"><dict><key>A</key><string>x & y</string></dict></plist>')).toThrow("a bare '&'")
    expect(() => parsePlist('<!-- npm install --global -->\n<plist version="1.0"><dict/></plist>')).toThrow(
      "the comment at offset 0 contains '--', which XML does not allow in comments",
    )
  })

  it('is what hookd up writes, for a global install with Homebrew\'s node', async () => {
    expect(await readFile(PLIST, 'utf8')).toBe(launchdPlist({ program: ['/opt/homebrew/bin/hookd'], stateDir: '/Users/YOU/.local/state/hookd', logFile: '/Users/YOU/Library/Logs/hookd.log' }))
  })

  it("starts the user's hookd, with its home folder written in", async () => {
    const job = parsePlist(await readFile(PLIST, 'utf8')) as LaunchdJob
    const home = await temp('hookd-mac-')
    const fill = (text: string): string => text.replaceAll('/Users/YOU', home)
    const args = job.ProgramArguments.slice(2).map(fill)
    const env = Object.fromEntries(Object.entries(job.EnvironmentVariables).map(([k, v]) => [k, fill(v)]))
    const serving = await startServe(args, { cwd: home, env })
    try {
      expect(serving.address).toBe(`unix:${join(home, '.local', 'state', 'hookd', 'front.sock')}`)
      expect(await healthz(join(home, '.local', 'state', 'hookd', 'front.sock'))).toMatchObject({ status: 'serving' })
      expect(await stopProcess(serving.child, 'SIGTERM')).toBe(0)
    } finally {
      await stopProcess(serving.child, 'SIGKILL')
    }
  })
})
