/**
 * `hookd new NAME`: writes a hook folder to start from, with typed handlers, a hook.json and test
 * cases that pass as written (scaffold.ts), so that the first `hookd test` is green and every edit
 * after it is checked.
 */
import { mkdir, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { POINT_NAMES } from '../protocol/points.js'
import type { StepPointName } from '../protocol/point-spec.js'
import { HOOK_NAME } from '../sidecar/hooks/hook-folder.js'
import { didYouMean } from '../protocol/did-you-mean.js'
import { CommandError, UsageError, list, parse } from './args.js'
import type { CliIo } from './io.js'
import { SCAFFOLD_POINTS, scaffold } from './scaffold.js'

export const NEW_HELP = `Usage: hookd new NAME [--points a,b] [--ts] [--dir HOOKS]

Creates the hook folder HOOKS/NAME (default HOOKS: ./hooks) to start from: handlers for the chosen
points, typed with hookd-sandbox/hook, a hook.json with their config, and test cases in tests/ that pass as
written. Run them with 'hookd test HOOKS/NAME'. Never overwrites: NAME must not exist yet.

  --points a,b   the points to handle (default: beforeToolExecute); any of
                 ${SCAFFOLD_POINTS.join(', ')}
  --ts           write index.ts (TypeScript, bundled by hookd) instead of index.js
  --dir HOOKS    the hooks folder to create the hook in (default: ./hooks)
  -h, --help     show this help

Exit status: 0 when the hook was created, 1 when NAME already exists, 2 for a usage error.`

export async function newHook(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(NEW_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      points: { type: 'string', multiple: true },
      ts: { type: 'boolean', default: false },
      dir: { type: 'string', default: 'hooks' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${NEW_HELP}\n`)
    return 0
  }
  if (positionals.length !== 1) {
    throw new UsageError(`give the new hook's name, e.g. hookd new no-force-push${positionals.length > 1 ? `; got ${positionals.length} names` : ''}`)
  }
  const name = positionals[0] as string
  if (!HOOK_NAME.test(name)) {
    throw new UsageError(`'${name}' cannot be a hook name: it names a folder, so it starts with a letter or digit and holds only letters, digits, '.', '_' and '-'`)
  }
  const points = choosePoints(values.points)
  const folder = resolve(io.cwd, values.dir, name)
  const files = scaffold({ name, points, typescript: values.ts })

  try {
    await mkdir(dirname(folder), { recursive: true })
    // Not recursive: fails when the folder exists, so nothing of the author's is ever overwritten.
    await mkdir(folder)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EEXIST') throw new CommandError(`${shown(io.cwd, folder)} already exists; pick another name, or remove it first`)
    throw new CommandError(`cannot create ${shown(io.cwd, folder)}: ${(err as Error).message}`)
  }
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(folder, path)), { recursive: true })
    await writeFile(join(folder, path), text, { flag: 'wx' })
  }

  const where = shown(io.cwd, folder)
  const tests = Object.keys(files).filter((f) => f.startsWith('tests/'))
  io.stdout.write(
    [
      `created ${where}/`,
      `  ${values.ts ? 'index.ts' : 'index.js'}    ${points.join(', ')}`,
      '  hook.json   its config (ctx.config)',
      ...(values.ts ? ['  tsconfig.json   for your editor and tsc (hookd reads none)'] : []),
      `  ${tests.join(', ')}`,
      'next:',
      `  hookd test ${where}     run its test cases in the sandbox`,
      `  hookd check ${where}    load it as the sidecar would`,
      '',
    ].join('\n'),
  )
  return 0
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
