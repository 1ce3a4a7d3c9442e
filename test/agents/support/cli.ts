/**
 * The pinned agent CLIs for tests: `agentCli('claude')` installs Claude Code into the repo's
 * .cache/agents/ on first use (scripts/agent-cli.sh, from the npm registry) and resolves to the path
 * of its binary. Later calls, in this process or another, find the install and resolve at once.
 */
import { execFile } from 'node:child_process'
import { join } from 'node:path'

export const ROOT = join(import.meta.dirname, '..', '..', '..')
export const AGENT_CLI_SCRIPT = join(ROOT, 'scripts', 'agent-cli.sh')

/** A first install downloads hundreds of MB: allow it ten minutes. */
export const INSTALL_TIMEOUT_MS = 10 * 60_000

const pending = new Map<string, Promise<string>>()

/** The absolute path of the pinned CLI `name` (for an SDK: its package folder), installed if need be. */
export function agentCli(name: string, options: { timeoutMs?: number } = {}): Promise<string> {
  let path = pending.get(name)
  if (!path) {
    path = install(name, options.timeoutMs ?? INSTALL_TIMEOUT_MS)
    pending.set(name, path)
    path.catch(() => pending.delete(name))
  }
  return path
}

function install(name: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      [AGENT_CLI_SCRIPT, name],
      { cwd: ROOT, timeout: timeoutMs, killSignal: 'SIGTERM', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const tail = stderr.trim().split('\n').slice(-20).join('\n')
        if (error) {
          const why = error.killed ? `did not finish within ${timeoutMs} ms` : `failed (exit ${String(error.code)})`
          reject(new Error(`scripts/agent-cli.sh ${name} ${why}; its last output:\n${tail}`))
          return
        }
        const path = stdout.trim().split('\n').pop() ?? ''
        if (!path.startsWith('/')) {
          reject(new Error(`scripts/agent-cli.sh ${name} printed no path (stdout: ${JSON.stringify(stdout)}); stderr:\n${tail}`))
          return
        }
        resolve(path)
      },
    )
  })
}
