/**
 * One hook command for several scenarios in one agent run. Starting a real agent CLI costs seconds,
 * so a contract test lets the stand-in model ask for several shell commands, one per turn, each on a
 * victim folder of its own (`rm -r victim-json`, `rm -r victim-exit2`, ...), and installs one hook
 * command that answers each call the way its folder's scenario needs. Each scenario then asserts on
 * its own call: its folder, its tool result, the hook input logged for it.
 */
import { readFile } from 'node:fs/promises'

/** A scenario's folder name: plain enough to sit in a shell pattern unquoted. */
const NAME = /^[a-z0-9][a-z0-9-]*$/

function checkNames(names: readonly string[]): void {
  for (const name of names) {
    if (!NAME.test(name)) throw new Error(`scenario folder '${name}' must match ${String(NAME)}`)
  }
  // A name inside another would answer the longer one's call too.
  for (const a of names) {
    for (const b of names) {
      if (a !== b && b.includes(a)) throw new Error(`scenario folder '${a}' is part of '${b}': give them distinct names`)
    }
  }
}

/** `text` as one POSIX shell word. */
export function shQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`
}

/**
 * The script: reads the hook's stdin, appends it to `logFile` as one line, then runs `answers[name]`
 * (shell text that should end in `exit`) for the first folder name the input contains; an input that
 * names none is allowed (exit 0, no output).
 */
export function scenarioScript(options: { logFile: string; answers: Record<string, string> }): string {
  const names = Object.keys(options.answers)
  checkNames(names)
  const cases = names.map((name) => `  *${name}*)\n    ${options.answers[name] ?? 'exit 0'} ;;`).join('\n')
  return `#!/bin/sh
# Test hook for several scenarios in one run: each tool call names a folder of its own.
input=$(cat)
printf '%s\\n' "$input" >> ${shQuote(options.logFile)}
case $input in
${cases}
esac
exit 0
`
}

/**
 * The hook command line for a run whose `missing.folder` scenario measures a hook command that cannot
 * run: for that call the line runs `missing.command`, a path that does not exist, in the shell the
 * agent started for the hook, so the agent meets what a missing hook command gives it (that shell's
 * "No such file or directory" or "not found" on stderr, exit 127); every other call goes to `script`.
 * The line reads stdin before it chooses, which a missing command does not; the input fits in the
 * pipe's buffer, so the agent's write of it succeeds either way.
 */
export function routedCommand(script: string, missing: { folder: string; command: string }): string {
  checkNames([missing.folder])
  return `input=$(cat); case $input in *${missing.folder}*) ${missing.command} ;; *) printf '%s' "$input" | ${shQuote(script)} ;; esac`
}

/** Every hook input `scenarioScript` logged, parsed, in order; none if the hook never ran. */
export async function loggedInputs(logFile: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(logFile, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return ''
    throw err
  })
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}
