/**
 * The starter rules shipped in the package's `rules/` folder (each a complete hook folder with its
 * tests), as `hookd new NAME --from RULE` finds, lists and copies them.
 */
import { lstat, mkdir, readFile, readdir, writeFile } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { didYouMean } from '../../protocol/did-you-mean.js'
import { quoted } from '../../protocol/text.js'
import { CONFIG_MAX_BYTES, HOOK_NAME } from '../../sidecar/hooks/hook-folder.js'
import { checkHookJson } from '../../sidecar/hooks/hook-files.js'
import { CommandError, UsageError } from '../common/args.js'

/** The package's rules/ folder: beside dist/ and src/, both three levels above this file. */
export const RULES_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'rules')

/** A rule folder holds a handful of files; more than this, or deeper, is no rule of ours. */
const MOST_FILES = 200
const DEEPEST = 4

export interface StarterRule {
  name: string
  description: string
  /** hook.json's onError, when it says one. */
  onError?: 'default' | 'refuse' | 'skip'
}

/** The starter rules in `dir`, by name: every folder with a hook.json that says what it does. */
export async function starterRules(dir: string = RULES_DIR): Promise<StarterRule[]> {
  let names: string[]
  try {
    names = (await readdir(dir, { withFileTypes: true })).filter((d) => d.isDirectory() && HOOK_NAME.test(d.name)).map((d) => d.name)
  } catch (err) {
    throw new CommandError(`cannot read the starter rules in ${dir}: ${(err as Error).message}; reinstall hookd-sandbox`)
  }
  const rules: StarterRule[] = []
  for (const name of names.sort()) {
    const file = join(dir, name, 'hook.json')
    const info = await lstat(file).catch(() => undefined)
    if (!info?.isFile() || info.size > CONFIG_MAX_BYTES) continue
    const checked = checkHookJson(await readFile(file, 'utf8'))
    if (!checked.ok || checked.description === undefined) continue
    rules.push({ name, description: checked.description, ...(checked.onError !== undefined ? { onError: checked.onError } : {}) })
  }
  return rules
}

/** The rules as lines for help and errors: the name, then its description wrapped under it. */
export function ruleLines(rules: readonly StarterRule[], width = 100): string {
  const pad = Math.max(...rules.map((r) => r.name.length), 0) + 4
  return rules
    .map((rule) => {
      const lines: string[] = []
      let line = `  ${rule.name.padEnd(pad - 2)}`
      for (const word of rule.description.split(/\s+/)) {
        if (line.trim() !== rule.name && line.length + 1 + word.length > width) {
          lines.push(line.trimEnd())
          line = ' '.repeat(pad)
        }
        line += line.endsWith(' ') ? word : ` ${word}`
      }
      lines.push(line)
      return lines.join('\n')
    })
    .join('\n')
}

/** The rule named `name`, or a usage error that lists the rules (with a did-you-mean for a misspelling). */
export async function findRule(name: string | undefined, dir: string = RULES_DIR): Promise<StarterRule> {
  const rules = await starterRules(dir)
  const found = name === undefined ? undefined : rules.find((r) => r.name === name)
  if (found) return found
  const listed = `The starter rules:\n${ruleLines(rules)}`
  if (name === undefined || name === '') throw new UsageError(`--from needs a starter rule's name, e.g. hookd new my-guard --from ${rules[0]?.name ?? 'RULE'}\n${listed}`)
  const near = didYouMean(name, rules.map((r) => r.name))
  throw new UsageError(`--from: ${quoted(name, 64)} is not a starter rule${near ? `; did you mean '${near}'?` : ''}\n${listed}`)
}

/**
 * Copies the rule's files into `to`, a folder the caller has just made (`hookd new` makes it so that
 * it fails when the folder exists), never replacing a file. Regular files only; returns their paths
 * relative to `to`.
 */
export async function copyRule(rule: string, to: string, dir: string = RULES_DIR): Promise<string[]> {
  const from = join(dir, rule)
  const files: string[] = []
  const walk = async (rel: string, depth: number): Promise<void> => {
    if (depth > DEEPEST) throw new CommandError(`the starter rule ${rule} nests folders more than ${DEEPEST} deep; reinstall hookd-sandbox`)
    for (const entry of (await readdir(join(from, rel), { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`
      if (entry.isDirectory()) await walk(path, depth + 1)
      else if (entry.isFile()) files.push(path)
      if (files.length > MOST_FILES) throw new CommandError(`the starter rule ${rule} holds more than ${MOST_FILES} files; reinstall hookd-sandbox`)
    }
  }
  await walk('', 0)
  for (const path of files) {
    await mkdir(dirname(join(to, path)), { recursive: true })
    await writeFile(join(to, path), await readFile(join(from, path)), { flag: 'wx' })
  }
  return files
}
