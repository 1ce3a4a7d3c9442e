/** Shared command-line plumbing: parsing with usage errors, number and list flags. */
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { type Address, parseAddress } from '../../protocol/address.js'
import { didYouMean } from '../../protocol/did-you-mean.js'

/** A mistake in how the command was called: exit 2 with a message that says what to fix. */
export class UsageError extends Error {}

/** A command that ran but could not do its job: exit 1. */
export class CommandError extends Error {}

type OptionsConfig = NonNullable<ParseArgsConfig['options']>

/**
 * Runs node's parseArgs on a command's flags table. Its complaints become a UsageError that names the
 * closest known option for an unknown one, followed by the command's usage line. A flag that takes one
 * value and is given twice with different values is a UsageError too: parseArgs would keep the last
 * one silently, and a mistyped command line must never lose anything. Flags declared `multiple`
 * accumulate.
 */
export function parse<T extends ParseArgsConfig & { options: OptionsConfig }>(help: string, config: T): ReturnType<typeof parseArgs<T>> {
  let parsed: ReturnType<typeof parseArgs<T & { tokens: true }>>
  try {
    parsed = parseArgs({ ...config, tokens: true })
  } catch (err) {
    throw new UsageError(`${parseProblem(err, config)}\n\n${usageOf(help)}`)
  }
  const given = new Map<string, string>()
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || token.value === undefined) continue
    const spec = config.options[token.name]
    if (spec === undefined || spec.multiple === true) continue
    const earlier = given.get(token.name)
    if (earlier !== undefined && earlier !== token.value) {
      throw new UsageError(`--${token.name} was given twice ('${earlier}', then '${token.value}'); it takes one value: give it once`)
    }
    given.set(token.name, token.value)
  }
  return parsed as ReturnType<typeof parseArgs<T>>
}

/** parseArgs' message, with a did-you-mean for an unknown option and without its advice about '--'. */
function parseProblem(err: unknown, config: ParseArgsConfig & { options: OptionsConfig }): string {
  const message = (err as Error).message.replace(/\. To specify.*$/s, '')
  if ((err as { code?: unknown }).code !== 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return message
  const unknown = /^Unknown option '(-{1,2})([^']*)'/.exec(message)
  if (!unknown) return message
  const names = Object.keys(config.options)
  let near: string | undefined
  if (unknown[1] === '--') {
    near = didYouMean(unknown[2] as string, names)
  } else {
    // `-listen` is read as the short options -l -i -s ...: the long one it meant is the likelier fix.
    const single = config.args?.find((a) => a.startsWith(`-${unknown[2]}`) && !a.startsWith('--') && a.length > 2)
    const long = single?.slice(1).split('=')[0]
    if (long !== undefined && names.includes(long)) near = long
  }
  return near ? `${message}; did you mean '--${near}'?` : message
}

/**
 * The usage line(s) at the top of a command's help, and where the rest is: a usage error shows what
 * the command looks like, not every option it has.
 */
export function usageOf(help: string): string {
  const usage = help.split('\n\n')[0] ?? help
  const command = /^Usage: (hookd [a-z-]+)/.exec(usage)?.[1]
  return command ? `${usage}\nRun '${command} --help' for every option.` : usage
}

export function positiveInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const n = Number(value)
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${flag} must be a positive whole number; got '${value}'`)
  return n
}

/** A comma-separated list flag, given once or repeated (`--hook a,b --hook c`): every name, in order. */
export function list(value: string | readonly string[] | undefined): string[] {
  return (typeof value === 'string' ? [value] : (value ?? []))
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter(Boolean)
}

/** An address flag's value (`--listen`, `--addr`), checked before anything starts: a mistake is a usage error naming the flag. */
export function addressFlag(flag: string, text: string, cwd?: string): Address {
  try {
    return parseAddress(text, cwd)
  } catch (err) {
    throw new UsageError(`--${flag}: ${(err as Error).message}`)
  }
}
