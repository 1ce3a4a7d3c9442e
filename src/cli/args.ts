/** Shared command-line plumbing: usage errors, number flags, output helpers. */

/** A mistake in how the command was called: exit 2 with a message that says what to fix. */
export class UsageError extends Error {}

/** A command that ran but could not do its job: exit 1. */
export class CommandError extends Error {}

/** Runs node's parseArgs, turning its complaints into a UsageError followed by the command's help. */
export function parse<T>(help: string, run: () => T): T {
  try {
    return run()
  } catch (err) {
    throw new UsageError(`${(err as Error).message.replace(/\. To specify.*$/s, '')}\n\n${help}`)
  }
}

export function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${flag} must be a positive whole number; got '${value}'`)
  return n
}

export function list(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
}
