/**
 * Where a command reads and writes: the process's own streams, environment and folder when hookd runs
 * as a program, others when a test (or an embedding program) calls `main(argv, io)` in-process.
 */
import type { ConfirmTerminal } from '../../host/capabilities.js'

export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: NodeJS.ProcessEnv
  /** The folder relative paths are resolved against. */
  cwd: string
  /** Where `hookd invoke --interactive` asks ctx.confirm questions. Default: the process's stdin and stderr. */
  terminal?: ConfirmTerminal
  /** Stops `hookd serve` as the signal it resolves with would. Default: the process's first SIGINT or SIGTERM. */
  stopped?: Promise<NodeJS.Signals>
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() }
}
