/**
 * Where a command reads and writes: the process's own streams, environment and folder when hookd runs
 * as a program, others when a test (or an embedding program) calls `main(argv, io)` in-process.
 */
export interface CliIo {
  stdout: { write(text: string): unknown }
  stderr: { write(text: string): unknown }
  env: NodeJS.ProcessEnv
  /** The folder relative paths are resolved against. */
  cwd: string
}

export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() }
}
