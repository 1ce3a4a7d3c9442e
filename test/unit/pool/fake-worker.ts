/**
 * A sandbox worker without a process, for tests of the pool's parts in memory: `FakeChild` stands for
 * the child process (it records what it is sent, emits the worker protocol's messages when told, and
 * dies when told), and `fakeWorker` wraps one in the real WorkerProcess (worker-process.ts).
 */
import { EventEmitter } from 'node:events'
import type { ChildProcess } from 'node:child_process'
import { PassThrough } from 'node:stream'
import type { FromWorker, ToWorker } from '../../../src/sidecar/worker/protocol.js'
import { type WorkerExit, type WorkerOwner, type WorkerSettings, WorkerProcess } from '../../../src/sidecar/worker/pool/worker-process.js'

export class FakeChild extends EventEmitter {
  connected = true
  exitCode: number | null = null
  signalCode: NodeJS.Signals | null = null
  readonly stderr = new PassThrough()
  readonly sent: ToWorker[] = []
  readonly kills: string[] = []

  constructor(readonly pid = 4242) {
    super()
  }

  send(message: ToWorker): boolean {
    this.sent.push(message)
    return true
  }

  kill(signal: NodeJS.Signals): boolean {
    this.kills.push(signal)
    return true
  }

  /** The worker sends the sidecar a message (any value: the sidecar must judge it). */
  says(message: FromWorker | Record<string, unknown>): void {
    this.emit('message', message)
  }

  die(code: number | null, signal: NodeJS.Signals | null): void {
    this.connected = false
    this.exitCode = code
    this.signalCode = signal
    this.emit('exit', code, signal)
  }
}

/** An owner that records what it hears. */
export function recordingOwner(onChanged: () => void = () => {}): WorkerOwner & { events: string[]; exits: WorkerExit[] } {
  const events: string[] = []
  const exits: WorkerExit[] = []
  return {
    events,
    exits,
    changed: () => {
      events.push('changed')
      onChanged()
    },
    answered: () => events.push('answered'),
    retiring: () => events.push('retiring'),
    exited: (exit) => {
      events.push('exited')
      exits.push(exit)
    },
  }
}

/** A WorkerProcess over a FakeChild; `ready` makes it say ready at once. */
export function fakeWorker(
  options: { settings?: Partial<WorkerSettings>; owner?: WorkerOwner & { events: string[]; exits: WorkerExit[] }; ready?: boolean; pid?: number } = {},
): { child: FakeChild; told: WorkerOwner & { events: string[]; exits: WorkerExit[] }; w: WorkerProcess } {
  const child = new FakeChild(options.pid)
  const told = options.owner ?? recordingOwner()
  const w = new WorkerProcess(child as unknown as ChildProcess, { keepVersions: 8, maxParkedMb: 512, startTimeoutMs: 60_000, ...options.settings }, told)
  if (options.ready) child.says({ $: 'ready', pid: child.pid })
  return { child, told, w }
}
