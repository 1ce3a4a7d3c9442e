/**
 * The command line loses nothing (issue 15, item 14): repeated list flags accumulate, a flag that takes
 * one value refuses a second, an address without a scheme is a usage error that shows the fix, and an
 * unknown option or point gets a did-you-mean. The commands run in-process (main(argv, io)): the tests are
 * about how they read their arguments.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runInProcess as inProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'

const RM = '{"id":"c1","name":"shell","arguments":{"command":"rm -rf /tmp/x"}}'

describe('repeated flags', () => {
  it('hookd invoke runs every --hook given, in the order given', async () => {
    const ran = await inProcess([
      'invoke', '--hooks', EXAMPLE_HOOKS, '--hook', 'audit', '--hook', 'https-only,guard', '--point', 'beforeToolExecute', '--payload', RM,
    ])
    expect(ran.code).toBe(0)
    const out = JSON.parse(ran.stdout) as { trace: Array<{ hook: string; outcome: string }> }
    expect(out.trace.map((t) => [t.hook, t.outcome])).toEqual([['audit', 'no-opinion'], ['https-only', 'no-opinion'], ['guard', 'refused']])
  })

  it('hookd invoke shows every --allow-env given to ctx.env', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-flags-'))
    try {
      await mkdir(join(dir, 'env-echo'))
      await writeFile(join(dir, 'env-echo', 'index.js'), 'module.exports = { afterRun: (ctx) => { ctx.log(JSON.stringify(ctx.env)) } }\n')
      const ran = await inProcess(['invoke', '--hooks', dir, '--allow-env', 'ONE', '--allow-env', 'TWO,THREE', '--point', 'afterRun', '--payload', '{"reason":"end_turn"}'], {
        env: { ONE: '1', TWO: '2', THREE: '3', FOUR: '4' },
      })
      expect(ran.code).toBe(0)
      const out = JSON.parse(ran.stdout) as { logs: Array<{ hook: string; message: string }> }
      expect(out.logs.map((l) => [l.hook, JSON.parse(l.message) as unknown])).toEqual([['env-echo', { ONE: '1', TWO: '2', THREE: '3' }]])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('a flag that takes one value, given twice with two values, is a usage error', async () => {
    const ran = await inProcess(['serve', '--listen', 'unix:a.sock', '--listen', 'unix:b.sock'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toBe("hookd serve: --listen was given twice ('unix:a.sock', then 'unix:b.sock'); it takes one value: give it once\n")

    const point = await inProcess(['invoke', '--hook', 'guard', '--point', 'afterRun', '--point', 'beforeRun', '--payload', '{}'])
    expect(point.code).toBe(2)
    expect(point.stderr).toBe("hookd invoke: --point was given twice ('afterRun', then 'beforeRun'); it takes one value: give it once\n")
  })
})

describe('addresses without a scheme', () => {
  it('hookd serve --listen /tmp/x.sock suggests unix:/tmp/x.sock, exit 2', async () => {
    const ran = await inProcess(['serve', '--listen', '/tmp/x.sock'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toBe("hookd serve: --listen: address '/tmp/x.sock' has no scheme; for a Unix socket write unix:/tmp/x.sock\n")
  })

  it('hookd list --addr and hookd invoke --addr say the same', async () => {
    const list = await inProcess(['list', '--addr', '.hookd/hookd.sock'])
    expect(list.code).toBe(2)
    expect(list.stderr).toBe("hookd list: --addr: address '.hookd/hookd.sock' has no scheme; for a Unix socket write unix:.hookd/hookd.sock\n")

    const invoke = await inProcess(['invoke', '--addr', '/run/hookd.sock', '--hook', 'guard', '--point', 'afterRun', '--payload', '{"reason":"end_turn"}'])
    expect(invoke.code).toBe(2)
    expect(invoke.stderr).toBe("hookd invoke: --addr: address '/run/hookd.sock' has no scheme; for a Unix socket write unix:/run/hookd.sock\n")
  })
})

describe('did you mean', () => {
  it('names the closest option to an unknown one, then the usage line', async () => {
    const ran = await inProcess(['serve', '--listn', 'unix:x.sock'])
    expect(ran.code).toBe(2)
    expect(ran.stderr.split('\n')[0]).toBe("hookd serve: Unknown option '--listn'; did you mean '--listen'?")
    expect(ran.stderr).toContain("Usage: hookd serve [--hooks DIR] [--listen ADDR] [options]\n       hookd serve --projects [--http [HOST:]PORT] [options]\nRun 'hookd serve --help' for every option.\n")

    const single = await inProcess(['invoke', '-payload', '{}'])
    expect(single.stderr.split('\n')[0]).toBe("hookd invoke: Unknown option '-p'; did you mean '--payload'?")

    const far = await inProcess(['list', '--frobnicate'])
    expect(far.stderr.split('\n')[0]).toBe("hookd list: Unknown option '--frobnicate'")
  })

  it('names the closest point to an unknown one, step or event', async () => {
    const step = await inProcess(['invoke', '--hook', 'guard', '--point', 'beforeToolExecut', '--payload', RM])
    expect(step.code).toBe(2)
    expect(step.stderr).toBe("hookd invoke: --point 'beforeToolExecut' is not a hook point; did you mean 'beforeToolExecute'?\n")

    const event = await inProcess(['invoke', '--hook', 'guard', '--point', 'tool:gat', '--payload', '{}'])
    expect(event.stderr).toBe("hookd invoke: --point 'tool:gat' is not a hook point; did you mean 'tool:gate'?\n")
  })
})
