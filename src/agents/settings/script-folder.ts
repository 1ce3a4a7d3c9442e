/**
 * Hooks kept as one script per event in a folder (Cline's hooks folder: `.cline/hooks/PreToolUse`),
 * where other agents keep entries in one settings file. `hookd setup` reads the folder as the flat
 * hooks.json shape (hooks-json.ts) of the files it may write, `{"hooks": {"PreToolUse": [entry]}}`, so
 * the same code merges, replaces and removes hookd's entries, and writes each event's script back
 * (src/cli/setup/script-folder.ts). A script is hookd's only when it is, byte for byte, one this file
 * writes around a command hookd-command.ts reads as hookd's; any other file of that name is another's,
 * never changed.
 */

/** How an agent's hooks folder holds hookd's scripts. */
export interface ScriptFolder {
  /** The file of `event` in the folder. */
  fileOf(event: string): string
  /** The script hookd writes to run `command` for `event`. */
  script(command: string, event: string): string
  /** The command a script hookd wrote runs, or undefined for any other text. */
  commandOf(text: string, event: string): string | undefined
}

/**
 * A POSIX sh script that runs one command, saying who wrote it (`agent` runs the file for its `event`).
 * The agent runs it by its first line, so it needs no execute bit.
 */
export function shScripts(agent: string, remove: string): ScriptFolder {
  const head = (event: string): string => `#!/bin/sh\n# ${agent} runs this for its ${event} event; hookd setup wrote it, and '${remove}' takes it out.\nexec `
  return {
    fileOf: (event) => event,
    script: (command, event) => `${head(event)}${command}\n`,
    commandOf(text, event) {
      const start = head(event)
      if (!text.startsWith(start) || !text.endsWith('\n')) return undefined
      const command = text.slice(start.length, -1)
      return command.includes('\n') ? undefined : command
    },
  }
}
