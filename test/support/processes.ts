/**
 * The hookd command as its own process, for tests and benchmarks: run it to completion and collect
 * what it printed (`runHookd`), or start `hookd serve` and wait for its ready line (`startServe`), then
 * stop it (`stopProcess`). Both run the compiled command (dist/) unless given other `cli` arguments,
 * such as SOURCE_CLI_ARGS.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { join } from 'node:path'
import { Readable, Writable } from 'node:stream'
import type { CliIo } from '../../src/cli/common/io.js'

/** The repository's root folder, where both default to running the command. */
export const ROOT = join(import.meta.dirname, '..', '..')

/** The compiled CLI (`npm run build`; test/support/global-setup.ts keeps it current). */
export const BUILT_CLI = join(ROOT, 'dist', 'cli', 'bin.js')

/** The node arguments that run the CLI: the built command, as users run it. */
export const CLI_ARGS: readonly string[] = [BUILT_CLI]

/** The node arguments that run the CLI from the sources, through tsx (seconds slower per start). */
export const SOURCE_CLI_ARGS: readonly string[] = ['--import', import.meta.resolve('tsx'), join(ROOT, 'src', 'cli', 'bin.ts')]

export interface ProcessOptions {
  /** Default: ROOT. */
  cwd?: string
  /** Added to this process's environment. */
  env?: Record<string, string>
  /** The node arguments that run the CLI. Default: CLI_ARGS. */
  cli?: readonly string[]
}

export interface Ran {
  /** null when the process ended by a signal (or timeoutMs). */
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs `hookd ...args` to completion. `stdin` is written to a pipe that is then closed (`''`: closed
 * at once); without it stdin is /dev/null. `timeoutMs` kills the process with SIGTERM when it is over.
 */
export function runHookd(args: string[], options: ProcessOptions & { stdin?: string; timeoutMs?: number } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...(options.cli ?? CLI_ARGS), ...args], {
      cwd: options.cwd ?? ROOT,
      env: { ...process.env, ...options.env },
      stdio: [options.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      ...(options.timeoutMs === undefined ? {} : { timeout: options.timeoutMs }),
    })
    let stdout = ''
    let stderr = ''
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin?.end(options.stdin)
  })
}

export interface Serving {
  child: ChildProcess
  /** The address from the ready line `hookd: listening on ADDR`. */
  address: string
  /** All the process has printed so far; it keeps growing while the process runs. */
  output: { stdout: string; stderr: string }
}

/** `hookd: listening on ADDR`: the line `startServe` waits for by default. */
export const LISTENING_LINE = /^hookd: listening on (\S+)\r?\n/m

/**
 * Starts `hookd serve ...args` and resolves once it prints its ready line (`ready`, whose first group is
 * the address; default LISTENING_LINE). Rejects, with what it printed on stderr, if it exits first or is
 * not ready within timeoutMs (default 30 s; then it is killed).
 */
export function startServe(args: string[], options: ProcessOptions & { timeoutMs?: number; ready?: RegExp } = {}): Promise<Serving> {
  const timeoutMs = options.timeoutMs ?? 30_000
  const child = spawn(process.execPath, [...(options.cli ?? CLI_ARGS), 'serve', ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output = { stdout: '', stderr: '' }
  child.stdout.on('data', (d: Buffer) => (output.stdout += d.toString()))
  return new Promise((resolve, reject) => {
    const fail = (why: string): void => {
      clearTimeout(timer)
      reject(new Error(`hookd serve ${why}: ${output.stderr}`))
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(`was not ready within ${timeoutMs} ms`)
    }, timeoutMs)
    let started = false
    child.stderr.on('data', (d: Buffer) => {
      output.stderr += d.toString()
      // Once ready, only collect: a sidecar that logs every decision would make each search longer.
      if (started) return
      const ready = (options.ready ?? LISTENING_LINE).exec(output.stderr)
      if (ready) {
        started = true
        clearTimeout(timer)
        resolve({ child, address: ready[1] as string, output })
      }
    })
    child.once('error', (err) => fail(`could not start (${err.message})`))
    child.once('exit', (code, signal) => fail(`exited (${code ?? signal})`))
  })
}

/** Sends `signal` unless the process has already exited; resolves with its exit code once it has. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode)
    child.once('exit', (code) => resolve(code))
    child.kill(signal)
  })
}

/** This process's environment with `changes` made: a variable set to undefined is left out. */
function environment(changes: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries({ ...process.env, ...changes })) if (value !== undefined) env[name] = value
  return env
}

/**
 * The io of a command run in-process: its output collected (`onStderr` after each write to stderr), its
 * terminal reading `stdin` then its end.
 */
function inProcessIo(
  output: { stdout: string; stderr: string },
  options: { cwd: string; env?: Record<string, string | undefined> | undefined; stdin?: string | undefined; onStderr?: () => void },
): CliIo {
  return {
    stdout: { write: (text: string) => (output.stdout += text) },
    stderr: {
      write: (text: string) => {
        output.stderr += text
        options.onStderr?.()
      },
    },
    env: environment(options.env),
    cwd: options.cwd,
    // The terminal's questions land in stderr among the command's other lines, in the order written.
    terminal: {
      input: Readable.from(options.stdin ? [Buffer.from(options.stdin)] : [], { objectMode: false }),
      output: new Writable({
        write(chunk: Buffer | string, _encoding, done) {
          output.stderr += chunk.toString()
          done()
        },
      }),
    },
  }
}

/**
 * Runs `hookd ...args` in this process (main(argv, io)), for what needs no process of its own: help,
 * usage errors, token and file checks, and whole commands whose test is not about the process (signals,
 * exit of the built bin). Milliseconds instead of a process start. `env` changes the command's own
 * environment (undefined: unset), not this process's. `stdin` is what the command's terminal reads
 * (`hookd invoke --interactive`), then its end; without it the input ends at once, as /dev/null would.
 */
export async function runInProcess(args: string[], options: { cwd?: string; env?: Record<string, string | undefined>; stdin?: string } = {}): Promise<Ran> {
  const { main } = await import('../../src/cli/main.js')
  const output = { stdout: '', stderr: '' }
  const cwd = options.cwd ?? ROOT
  // Paths the command hands to the sidecar (a tenants file, a hooks folder) are read as the process
  // would: from its working folder. Calls running at once in one test share one folder; the last to
  // end goes back to the repository, never to a folder a test may delete (files share processes).
  inProcess++
  process.chdir(cwd)
  try {
    const code = await main(args, inProcessIo(output, { cwd, env: options.env, stdin: options.stdin }))
    return { code, ...output }
  } finally {
    if (--inProcess === 0) process.chdir(ROOT)
  }
}

/** Commands running in this process now: the working folder goes back to the repository after the last. */
let inProcess = 0

export interface ServingInProcess {
  /** The address from the ready line `hookd: listening on ADDR`. */
  address: string
  /** All it has printed so far; it keeps growing while it serves. */
  output: { stdout: string; stderr: string }
  /** Stops it as `signal` would stop the process; resolves with its exit status. */
  stop(signal?: NodeJS.Signals): Promise<number>
}

/**
 * Runs `hookd serve ...args` in this process until `stop()`, for tests of what it serves rather than of
 * the process (ready line, exit on a signal: startServe). Resolves once it prints its ready line;
 * rejects, with what it printed on stderr, if it ends first or is not ready within timeoutMs (default
 * 30 s). This process works in `cwd` until it stops, since serve reads its paths from there, and goes
 * back to the repository when nothing else runs in-process.
 */
export async function serveInProcess(args: string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number; ready?: RegExp } = {}): Promise<ServingInProcess> {
  const { main } = await import('../../src/cli/main.js')
  const output = { stdout: '', stderr: '' }
  const cwd = options.cwd ?? ROOT
  const timeoutMs = options.timeoutMs ?? 30_000
  let stopWith: (signal: NodeJS.Signals) => void = () => {}
  let onStderr = (): void => {}
  const io: CliIo = {
    ...inProcessIo(output, { cwd, env: options.env, onStderr: () => onStderr() }),
    stopped: new Promise((resolve) => (stopWith = resolve)),
  }
  inProcess++
  process.chdir(cwd)
  const ended = main(['serve', ...args], io).finally(() => {
    if (--inProcess === 0) process.chdir(ROOT)
  })
  const stop = (signal: NodeJS.Signals = 'SIGTERM'): Promise<number> => {
    stopWith(signal)
    return ended
  }
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (why: string): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      reject(new Error(`hookd serve ${why}: ${output.stderr}`))
    }
    const timer = setTimeout(() => {
      fail(`was not ready within ${timeoutMs} ms`)
      void stop()
    }, timeoutMs)
    onStderr = () => {
      const ready = settled ? null : (options.ready ?? LISTENING_LINE).exec(output.stderr)
      if (!ready) return
      settled = true
      clearTimeout(timer)
      resolve({ address: ready[1] as string, output, stop })
    }
    ended.then(
      (code) => fail(`exited (${code})`),
      (err: unknown) => fail(`failed (${String(err)})`),
    )
  })
}
