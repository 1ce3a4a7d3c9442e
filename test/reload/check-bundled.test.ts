/**
 * `hookd check` on hooks hookd bundles (issue 19 item 4) and on a file that ends too early (issue 15
 * item 10): each problem is printed at the author's file and line, a line that is in the file.
 */
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { runHookd } from '../support/processes.js'
import { writeTree } from '../support/sidecar.js'

let root: string

beforeAll(async () => {
  root = await writeTree({
    'typed/index.ts': "import { verdict } from './lib/verdict'\n\nexport default {\n  beforeToolExecute(_ctx: unknown, call: { name: string }) {\n    return verdict(call.name)\n  },\n}\n",
    'typed/hook.json': JSON.stringify({ onError: 'refuse' }),
    'typed/lib/verdict.ts': "export function verdict(name: string) {\n  return name === 'shell' ? { allow: false, reason: 'no shells' } : undefined\n}\n",
    'broken/index.ts': "import { rule } from './lib/rule'\n\nexport default { beforeRun() { return rule } }\n",
    'broken/lib/rule.ts': 'export const rule = {\n  name: "x",\n  value: 1 +\n}\n',
    'unclosed/index.js': 'module.exports = {\n  beforeRun(ctx, run) {\n    ctx.log(run)\n  },\n\n',
    'unclosed-ts/index.ts': 'export default {\n  beforeRun() {\n    return undefined\n  },\n\n\n',
    'fs/index.mjs': "import { readFileSync } from 'node:fs'\n\nexport const beforeRun = () => { readFileSync('/etc/passwd') }\n",
    'misspelt/index.ts': 'export function beforeToolExecut() {}\n\nexport function beforeRun() {}\n',
  })
})

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true })
})

it('reports each bundled hook problem at its file and line, and a file that ends too early on its last line', async () => {
  const run = await runHookd(['check', root], { timeoutMs: 120_000 })
  expect(run.code).toBe(1)
  const at = (file: string): string => join(root, file)
  const skipped = 'The hook is skipped until it loads'
  expect(run.stdout.split('\n')).toEqual([
    `${at('broken/lib/rule.ts')}:4: error: Unexpected "}". ${skipped}; fix broken/lib/rule.ts and save it`,
    `${at('fs/index.mjs')}:1: error: 'node:fs' is a Node built-in module, and hooks run in a sandbox without Node: read and write files in the workdir with ctx.file.read/write/append/exists/list. ${skipped}; fix fs/index.mjs and save it`,
    `${at('misspelt/index.ts')}:1: warning: 'beforeToolExecut' is exported but is not a hook point, so it never runs; did you mean 'beforeToolExecute'?`,
    `${at('unclosed/index.js')}:4: error: SyntaxError: the file ends before its code is complete: a {, ( or [ is never closed, or the last statement is cut off. ${skipped}; fix unclosed/index.js and save it`,
    `${at('unclosed-ts/index.ts')}:4: error: Expected identifier but found end of file. ${skipped}; fix unclosed-ts/index.ts and save it`,
    ...['misspelt', 'typed'].map(
      (hook) => `${at(`${hook}/hook.json`)}: note: no "permissions" in its hook.json, so the hook may touch and decide whatever a session allows; add a "permissions" block listing what it needs (docs/writing-hooks.md#permissions)`,
    ),
    `checked 6 hooks in ${root}: 2 would load, 4 would not; 1 warning`,
    '',
  ])
})
