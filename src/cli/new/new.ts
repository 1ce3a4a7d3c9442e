/**
 * `hookd new NAME`: writes a hook folder to start from, with typed handlers, a hook.json and test
 * cases that pass as written (scaffold.ts), so that the first `hookd test` is green and every edit
 * after it is checked. `hookd new NAME --from RULE` copies a starter rule instead (rules.ts). A hook
 * that guards a gate is written to fail closed: its hook.json says `"onError": "refuse"`.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { POINT_NAMES } from '../../protocol/points/points.js'
import type { StepPointName } from '../../protocol/points/point-spec.js'
import { HOOK_NAME } from '../../sidecar/hooks/hook-folder.js'
import { didYouMean } from '../../protocol/did-you-mean.js'
import { CommandError, UsageError, list, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { copyRule, findRule, ruleLines, starterRules } from './rules.js'
import { SCAFFOLD_POINTS, failsClosed, scaffold } from './scaffold.js'

export const NEW_HELP = `Usage: hookd new NAME [--points a,b] [--ts] [--dir HOOKS]
       hookd new [NAME] --from RULE [--dir HOOKS]

Creates the hook folder HOOKS/NAME (default HOOKS: ./hooks) to start from: handlers for the chosen
points, typed with hookd-sandbox/hook, a hook.json with their config, and test cases in tests/ that pass as
written. Run them with 'hookd test HOOKS/NAME'. Never overwrites: NAME must not exist yet.

A hook that handles beforeToolExecute guards the tool calls, so its hook.json says "onError": "refuse":
when it throws, returns a wrong answer or does not load, the call is refused instead of let through.

  --points a,b   the points to handle (default: beforeToolExecute); any of
                 ${SCAFFOLD_POINTS.join(', ')}
  --ts           write index.ts (TypeScript, bundled by hookd) instead of index.js
  --from RULE    copy a starter rule (below) as the hook NAME (default: the rule's name), its config
                 and test cases included
  --dir HOOKS    the hooks folder to create the hook in (default: ./hooks)
  -h, --help     show this help

Exit status: 0 when the hook was created, 1 when NAME already exists, 2 for a usage error.`

/** What `"onError": "refuse"` means, said once when a hook is written with it. */
const FAILS_CLOSED =
  'fails closed: hook.json says "onError": "refuse", so a tool call is refused when this hook throws, returns a wrong answer or does not load, instead of let through'

export async function newHook(argv: string[], io: CliIo): Promise<number> {
  // `--from` with no rule after it lists the rules, instead of parseArgs' "argument missing".
  const at = argv.findIndex((a) => a === '--from' || a === '--from=')
  if (at >= 0 && (argv[at] === '--from=' || at === argv.length - 1 || (argv[at + 1] ?? '').startsWith('-'))) await findRule(undefined)
  const { values, positionals } = parse(NEW_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      points: { type: 'string', multiple: true },
      ts: { type: 'boolean', default: false },
      from: { type: 'string' },
      dir: { type: 'string', default: 'hooks' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${NEW_HELP}\n\nStarter rules (--from RULE; each is in the package's rules/ folder):\n${ruleLines(await starterRules())}\n`)
    return 0
  }
  if (values.from !== undefined) {
    if (values.points !== undefined || values.ts) throw new UsageError('--from copies a starter rule as it is; --points and --ts are for a new hook written from scratch: give one or the other')
    const rule = await findRule(values.from)
    if (positionals.length > 1) throw new UsageError(`give one name for the new hook; got ${positionals.length} names`)
    return fromRule(rule.name, rule.onError === 'refuse', positionals[0] ?? rule.name, values.dir, io)
  }
  if (positionals.length !== 1) {
    throw new UsageError(`give the new hook's name, e.g. hookd new no-force-push${positionals.length > 1 ? `; got ${positionals.length} names` : ''}`)
  }
  const name = checkedName(positionals[0] as string)
  const points = choosePoints(values.points)
  const folder = resolve(io.cwd, values.dir, name)
  const files = scaffold({ name, points, typescript: values.ts })

  await makeFolder(io.cwd, folder, async () => {
    for (const [path, text] of Object.entries(files)) {
      await mkdir(dirname(join(folder, path)), { recursive: true })
      await writeFile(join(folder, path), text, { flag: 'wx' })
    }
  })

  const where = shown(io.cwd, folder)
  const tests = Object.keys(files).filter((f) => f.startsWith('tests/'))
  io.stdout.write(
    [
      `created ${where}/`,
      `  ${values.ts ? 'index.ts' : 'index.js'}    ${points.join(', ')}`,
      '  hook.json   its config (ctx.config) and permissions (what it may touch and decide)',
      ...(values.ts ? ['  tsconfig.json   for your editor and tsc (hookd reads none)'] : []),
      `  ${tests.join(', ')}`,
      ...(failsClosed(points) ? [FAILS_CLOSED] : []),
      'next:',
      `  hookd test ${where}     run its test cases in the sandbox`,
      `  hookd check ${where}    load it as the sidecar would`,
      '',
    ].join('\n'),
  )
  return 0
}

/** `hookd new NAME --from RULE`: the rule's folder copied as HOOKS/NAME. */
async function fromRule(rule: string, refuses: boolean, given: string, dir: string, io: CliIo): Promise<number> {
  const name = checkedName(given)
  const folder = resolve(io.cwd, dir, name)
  let files: string[] = []
  await makeFolder(io.cwd, folder, async () => {
    files = await copyRule(rule, folder)
  })
  const where = shown(io.cwd, folder)
  const cases = files.filter((f) => f.startsWith('tests/') && f.endsWith('.json')).length
  io.stdout.write(
    [
      `created ${where}/ from the starter rule ${rule}`,
      `  ${files.filter((f) => !f.startsWith('tests/') && f !== 'hook.json').join(', ')}    the rule (read its opening comment: what it sees and what it cannot)`,
      '  hook.json   its description, "onError", permissions and config (ctx.config)',
      `  tests/      ${cases} ${cases === 1 ? 'case' : 'cases'}`,
      ...(refuses ? [FAILS_CLOSED] : []),
      'next:',
      `  hookd test ${where}     run its test cases in the sandbox`,
      `  hookd check ${where}    load it as the sidecar would`,
      '',
    ].join('\n'),
  )
  return 0
}

function checkedName(name: string): string {
  if (!HOOK_NAME.test(name)) {
    throw new UsageError(`'${name}' cannot be a hook name: it names a folder, so it starts with a letter or digit and holds only letters, digits, '.', '_' and '-'`)
  }
  return name
}

/**
 * Creates `folder` (not recursively: it fails when the folder exists, so nothing of the author's is
 * ever overwritten) and fills it with `fill`, which creates it itself when `fill` is a copy.
 */
async function makeFolder(cwd: string, folder: string, fill: () => Promise<void>): Promise<void> {
  try {
    await mkdir(dirname(folder), { recursive: true })
    await mkdir(folder)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new CommandError(`${shown(cwd, folder)} already exists; pick another name, or remove it first`)
    throw new CommandError(`cannot create ${shown(cwd, folder)}: ${(err as Error).message}`)
  }
  await fill()
}

function choosePoints(given: readonly string[] | undefined): StepPointName[] {
  const names = list(given)
  if (given !== undefined && names.length === 0) throw new UsageError(`--points needs point names, e.g. --points beforeToolExecute,afterRun`)
  if (names.length === 0) return ['beforeToolExecute']
  const chosen: StepPointName[] = []
  for (const point of names) {
    if ((SCAFFOLD_POINTS as readonly string[]).includes(point)) {
      if (!chosen.includes(point as StepPointName)) chosen.push(point as StepPointName)
      continue
    }
    const near = didYouMean(point, SCAFFOLD_POINTS)
    if (near) throw new UsageError(`--points: '${point}' is not a hook point; did you mean '${near}'?`)
    if ((POINT_NAMES as readonly string[]).includes(point)) {
      throw new UsageError(`--points: '${point}' is an event point of hookable hosts; hookd new writes the step points (${SCAFFOLD_POINTS.join(', ')}), which serve their event aliases too`)
    }
    throw new UsageError(`--points: '${point}' is not a hook point; use any of ${SCAFFOLD_POINTS.join(', ')}`)
  }
  return chosen
}

function shown(cwd: string, path: string): string {
  const rel = relative(cwd, path)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path
}
