/**
 * Hostile suite support: one sidecar over test/hostile/fixtures with small limits (so that memory and
 * CPU attacks end fast), a way to run one fixture hook, and the check every hostile test ends with:
 * the sidecar answers an ordinary call right after.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { expect } from 'vitest'
import type { Diagnostic, DiagnosticKind } from '../../src/protocol/diagnostic.js'
import { couldNotDecide, failureRefuses } from '../../src/sidecar/chain/chain.js'
import type { LogLineData, SessionOptions } from '../../src/host/index.js'
import type { Limits } from '../../src/sidecar/limits.js'
import type { PoolOptions } from '../../src/sidecar/worker/pool/worker-pool.js'
import { type Running, sessionOptions, startSidecar } from '../support/sidecar.js'

export const FIXTURES = join(import.meta.dirname, 'fixtures')

/** Small limits: every limit fires in well under a second. */
export const HOSTILE_LIMITS = {
  memoryMb: 16,
  cpuMs: 300,
  wallMs: 800,
  resultBytes: 64 * 1024,
  logBytes: 4096,
  capabilityCalls: 16,
} satisfies Partial<Limits>

/** Longer than wallMs, so a test can tell the host-side ceiling from the wall-time limit. */
export const CONFIRM_CEILING_MS = 1200

export const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }
/** What beforeToolExecute answers when every hook was skipped. */
export const UNCHANGED = { allow: true, arguments: CALL.arguments }

/**
 * What beforeToolExecute answers when its one hook failed with `kind`, under the default failure
 * policy: skipped (the call goes through) when the failure was the hook's own doing, refused by hookd
 * when the hook could not decide (a limit, a crash, a cancel).
 */
export function afterFailure(hook: string, kind: DiagnosticKind): Record<string, unknown> {
  return failureRefuses('default', kind) ? { allow: false, arguments: CALL.arguments, refusedBy: 'hookd', reason: couldNotDecide(hook, kind) } : UNCHANGED
}

export interface HostileOptions {
  workers?: number
  /** Overrides of HOSTILE_LIMITS. */
  limits?: Partial<Limits>
  confirmMs?: number
  /**
   * Serve only these fixtures (copied to a temp folder). Every fixture is loaded when a sidecar starts,
   * and one of them loops at load time until the CPU limit stops it: with a large CPU limit, pick.
   */
  only?: string[]
  /** The operator's floor for gates (SidecarOptions.onError). */
  onError?: 'default' | 'refuse'
  /** The worker pool's settings. */
  pool?: PoolOptions
}

export async function startHostile(options: HostileOptions = {}): Promise<Running> {
  let hooks = FIXTURES
  if (options.only) {
    hooks = await mkdtemp(join(tmpdir(), 'hookd-hostile-'))
    for (const name of [...options.only, 'ordinary']) await cp(join(FIXTURES, name), join(hooks, name), { recursive: true })
  }
  const running = await startSidecar({
    hooks,
    workers: options.workers ?? 1,
    limits: { ...HOSTILE_LIMITS, ...options.limits },
    waits: { confirmMs: options.confirmMs ?? CONFIRM_CEILING_MS, capabilityMs: 5000 },
    ...(options.onError ? { onError: options.onError } : {}),
    ...(options.pool ? { pool: options.pool } : {}),
  })
  if (hooks === FIXTURES) return running
  return {
    ...running,
    async stop() {
      await running.stop()
      await rm(hooks, { recursive: true, force: true })
    },
  }
}

export interface HookRun {
  result: Record<string, unknown>
  diagnostics: Diagnostic[]
  logs: string[]
}

/** Opens a session with the given hooks, runs beforeToolExecute once, and abandons the session. */
export async function runHooks(running: Running, hooks: string[], extra: Partial<SessionOptions> = {}): Promise<HookRun> {
  const logs: string[] = []
  const capabilities = { ...extra.capabilities, log: (line: LogLineData) => logs.push(line.message) }
  const session = await running.client.openSession(sessionOptions(hooks, { ...extra, capabilities }))
  try {
    const out = await session.call('beforeToolExecute', CALL)
    return { result: out.result as Record<string, unknown>, diagnostics: out.diagnostics, logs }
  } finally {
    session.abandon()
  }
}

/** The one diagnostic a failed fixture hook produces for beforeToolExecute. */
export function failed(hook: string, kind: DiagnosticKind, message: string, line?: number): Diagnostic {
  return {
    hook,
    point: 'beforeToolExecute',
    kind,
    message: `hook '${hook}' beforeToolExecute: ${message}`,
    file: `${hook}/index.js`,
    version: expect.any(String) as unknown as string,
    ...(line !== undefined ? { line } : {}),
  }
}

/** The sidecar still serves: a fresh session runs the ordinary hook and gets its answer. */
export async function expectServing(running: Running): Promise<void> {
  const run = await runHooks(running, ['ordinary'])
  expect(run.diagnostics).toEqual([])
  expect(run.result).toEqual({ allow: true, arguments: { ...CALL.arguments, ordinary: true } })
}
