/**
 * `hookd invoke` and `hookd agent` without --hook run every hook of the hooks folder, in name order
 * (the byte order of the folder names), and say which (issue 15, item 15); --hook narrows it. The
 * commands run in-process (main(argv, io)); test/integration/cli/cli.test.ts and test/reference-agent/cli.test.ts run
 * them as processes of the built command.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { runInProcess as hookd } from '../../support/processes.js'

// Byte order puts digits before capitals before lower case: 10-a, 20-b, Zed, alpha (a locale sort
// would put alpha before Zed).
const NAMES = ['alpha', 'Zed', '20-b', '10-a']
const CALL = '{"id":"c1","name":"shell","arguments":{"command":"ls"}}'

let dir: string
let hooks: string
let empty: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hookd-every-'))
  hooks = join(dir, 'hooks')
  empty = join(dir, 'empty')
  await mkdir(empty)
  for (const name of NAMES) {
    await mkdir(join(hooks, name), { recursive: true })
    // Each hook appends its name to arguments.order, so the result shows the order they ran in.
    await writeFile(
      join(hooks, name, 'index.js'),
      `module.exports = { beforeToolExecute: (ctx, call) => ({ arguments: { ...call.arguments, order: (call.arguments.order || '') + '${name} ' } }) }\n`,
    )
  }
  await writeFile(join(dir, 'script.json'), JSON.stringify({ version: 1, turns: [{ text: 'Done.' }] }))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('hookd invoke without --hook', () => {
  it('runs every hook of the folder in name order, and names them on stderr', async () => {
    const ran = await hookd(['invoke', '--hooks', hooks, '--point', 'beforeToolExecute', '--payload', CALL])
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as { result: { arguments: { order: string } }; trace: Array<{ hook: string }> }
    expect(out.result.arguments.order).toBe('10-a 20-b Zed alpha ')
    expect(out.trace.map((t) => t.hook)).toEqual(['10-a', '20-b', 'Zed', 'alpha'])
    expect(ran.stderr).toBe(`hookd invoke: hooks 10-a, 20-b, Zed, alpha (every hook of the hooks folder ${hooks}, in name order)\n`)
  })

  it('--hook narrows it to the hooks named, in the order named', async () => {
    const ran = await hookd(['invoke', '--hooks', hooks, '--hook', 'alpha', '--hook', '10-a', '--point', 'beforeToolExecute', '--payload', CALL])
    expect(ran.code).toBe(0)
    expect((JSON.parse(ran.stdout) as { result: { arguments: { order: string } } }).result.arguments.order).toBe('alpha 10-a ')
    expect(ran.stderr).toBe('')
  })

  it('says so when the folder has no hooks (exit 1)', async () => {
    const ran = await hookd(['invoke', '--hooks', empty, '--point', 'beforeToolExecute', '--payload', CALL])
    expect(ran.code).toBe(1)
    expect(ran.stderr).toBe(`hookd invoke: no hooks to run: the hooks folder ${empty} has none (make one with 'hookd new NAME')\n`)
  })
})

describe('hookd agent without --hook', { timeout: 90_000 }, () => {
  it('runs every hook of the folder, and its first line names them in order', async () => {
    const ran = await hookd(['agent', '--hooks', hooks, '--workdir', dir, '--model', `scripted:${join(dir, 'script.json')}`, 'say done'], { env: { NO_COLOR: '1', ANTHROPIC_API_KEY: undefined } })
    expect(ran.code).toBe(0)
    expect(ran.stdout).toBe('Done.\n')
    expect(ran.stderr.split('\n')[0]).toBe(`hookd agent: scripted, hooks 10-a, 20-b, Zed, alpha (every hook of the hooks folder ${hooks}, in name order), workdir ${dir}`)
  })

  it('--hook, repeated, narrows it to the hooks named, in the order named', async () => {
    const ran = await hookd(['agent', '--hooks', hooks, '--hook', 'alpha', '--hook', '10-a', '--workdir', dir, '--model', `scripted:${join(dir, 'script.json')}`, 'say done'], { env: { NO_COLOR: '1', ANTHROPIC_API_KEY: undefined } })
    expect(ran.code).toBe(0)
    expect(ran.stderr.split('\n')[0]).toBe(`hookd agent: scripted, hooks alpha, 10-a (embedded sidecar on ${hooks}), workdir ${dir}`)
  })

  it('says that no hooks run when there is no ./hooks folder', async () => {
    const ran = await hookd(['agent', '--workdir', dir, '--model', `scripted:${join(dir, 'script.json')}`, 'say done'], { cwd: empty, env: { NO_COLOR: '1', ANTHROPIC_API_KEY: undefined } })
    expect(ran.code).toBe(0)
    expect(ran.stderr.split('\n').slice(0, 2)).toEqual([
      "hookd agent: no hooks will run: there is no ./hooks folder (pass --hooks DIR, or make one with 'hookd new NAME')",
      `hookd agent: scripted, no hooks, workdir ${dir}`,
    ])
  })
})
