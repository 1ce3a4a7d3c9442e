/**
 * `hookd check` on remote hooks (hook.json "remote", docs/languages.md), run as a user runs it: the
 * command in-process (main(argv, io): its output and exit status; test/reload/check.test.ts runs
 * the built bin), the remote hook a grpc-js server in this process.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Ran, runInProcess } from '../support/processes.js'
import { type RemoteHookServer, serveRemoteHook } from '../support/remote-hook.js'
import { writeTree } from '../support/sidecar.js'

const hookd = (...args: string[]): Promise<Ran> => runInProcess(args)

let root: string
let server: RemoteHookServer
let typoServer: RemoteHookServer

beforeAll(async () => {
  root = await writeTree({
    'scan/hook.json': '{\n  "description": "served",\n  "remote": "unix:scan.sock",\n  "onError": "refuse"\n}\n',
    'down/hook.json': '{\n  "remote": "unix:down.sock"\n}\n',
    'typo/hook.json': '{\n  "remote": "unix:typo.sock"\n}\n',
    'nothing/hook.json': '{ "config": { "a": 1 } }\n',
    'empty/.keep': '',
  })
  server = await serveRemoteHook(`unix:${join(root, 'scan', 'scan.sock')}`, { beforeToolExecute: () => undefined })
  typoServer = await serveRemoteHook(`unix:${join(root, 'typo', 'typo.sock')}`, {}, { points: ['beforeToolExecut'] })
})

afterAll(async () => {
  await server?.stop()
  await typoServer?.stop()
  if (root) await rm(root, { recursive: true, force: true })
})

describe('hookd check on remote hooks', () => {
  it('checks a single remote hook folder by asking its server, and reports its address', async () => {
    const run = await hookd('check', join(root, 'scan'))
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`${join(root, 'scan', 'hook.json')}: note: no "permissions" in its hook.json, so the hook may touch and decide whatever a session allows; add a "permissions" block listing what it needs (docs/writing-hooks.md#permissions)\nchecked 1 hook in ${root}: 1 would load, 0 would not; 0 warnings\n`)
    const json = await hookd('check', '--json', join(root, 'scan'))
    expect((JSON.parse(json.stdout) as { hooks: unknown[] }).hooks).toEqual([
      // A remote hook's code is its server's: it may ask (ctx.confirm), for all hookd can read.
      { name: 'scan', ok: true, version: expect.stringMatching(/^[0-9a-f]{12}$/), points: ['beforeToolExecute'], mayAsk: true, remote: 'unix:scan.sock' },
    ])
  })

  it('says how to fix a remote hook that does not load, without the advice for sandboxed hooks', async () => {
    const run = await hookd('check', root)
    expect(run.code).toBe(1)
    const lines = run.stdout.trim().split('\n')
    const line = (hook: string): string | undefined => lines.find((l) => l.startsWith(join(root, hook)))
    expect(line('down')).toMatch(
      new RegExp(
        `^${escape(join(root, 'down', 'hook.json'))}:2: error: the remote hook at unix:down\\.sock cannot be reached \\(.*ENOENT.*\\); start its server, or fix "remote" in hook\\.json\\. The hook is skipped until it loads$`,
      ),
    )
    expect(line('typo')).toBe(
      `${join(root, 'typo', 'hook.json')}:2: error: the remote hook at unix:typo.sock describes unknown point 'beforeToolExecut' (did you mean 'beforeToolExecute'?); list only hook points in DescribeResponse.points. The hook is skipped until it loads`,
    )
    expect(line('nothing')).toBe(
      `${join(root, 'nothing', 'index.js')}: error: hook 'nothing' has no index.js; create nothing/index.js (or index.ts, index.mjs) exporting its points, or make it a remote hook by naming its server in nothing/hook.json ("remote": "unix:PATH" or "HOST:PORT"). The hook is skipped until it loads; fix nothing/index.js and save it`,
    )
    expect(run.stdout).not.toContain('hookd asks the server again')
    expect(run.stdout).not.toContain('fix down/hook.json and save it')
    expect(lines.at(-1)).toBe(`checked 5 hooks in ${root}: 1 would load, 4 would not; 0 warnings`)
  })

  it('names both kinds of hook when a folder holds none', async () => {
    const run = await hookd('check', join(root, 'empty'))
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(
      `no hook folders in ${join(root, 'empty')}; a hook is a folder holding an index.js (e.g. ${join(root, 'empty', 'guard', 'index.js')}), or a hook.json naming a remote hook's server ("remote")`,
    )
  })
})

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
}
