/**
 * Author hints (src/sidecar/hooks/author-hints.ts) against what the real sandbox reports, on a running
 * sidecar and through `hookd check`: the messages test/unit/hooks/author-hints.test.ts feeds in are the ones
 * authors see, and each reaches them with its hint.
 */
import { rm } from 'node:fs/promises'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Diagnostic } from '../../../src/protocol/diagnostic.js'
import { runInProcess } from '../../support/processes.js'
import { type Running, sessionOptions, startSidecar, writeTree } from '../../support/sidecar.js'

describe('the hints match what the sandbox reports', () => {
  let running: Running
  let root: string
  beforeAll(async () => {
    root = await writeTree({
      // No longer a mistake: hookd bundles an index.js that uses export.
      'esm/index.js': 'export default {\n  beforeRun() {},\n}\n',
      // A require hookd cannot bundle (its name is computed), run while the hook loads.
      'req-load/index.js': "const name = ['pa', 'th'].join('')\nconst path = require(name)\nmodule.exports = { beforeRun() {} }\n",
      'req/index.js': "module.exports = {\n  beforeRun() {\n    const name = 'path'\n    require(name)\n  },\n}\n",
      'proc/index.js': 'module.exports = {\n  beforeRun() {\n    return process.env.HOME\n  },\n}\n',
      'typo/index.js': 'module.exports = {\n  beforToolExecute(ctx, call) {},\n}\n',
      'claude/index.js': "module.exports = {\n  beforeToolExecute() {\n    return { decision: 'block', reason: 'no' }\n  },\n}\n",
    })
    running = await startSidecar({ hooks: root, watch: false })
  })
  afterAll(async () => {
    await running?.stop()
    await rm(root, { recursive: true, force: true })
  })

  async function diagnosticOf(hook: string, point: 'beforeRun' | 'beforeToolExecute'): Promise<Diagnostic> {
    const session = await running.client.openSession(sessionOptions([hook]))
    const payload = point === 'beforeRun' ? { sessionId: 's', agentId: 'a', modelId: 'm' } : { id: 'c', name: 'shell', arguments: {} }
    const out = await session.call(point, payload as never)
    session.abandon()
    expect(out.diagnostics).toHaveLength(1)
    return out.diagnostics[0] as Diagnostic
  }

  it('export in an index.js is bundled as a module, and served', () => {
    expect(running.sidecar.loadDiagnostics.find((d) => d.hook === 'esm')).toBeUndefined()
    expect(running.sidecar.registry.get('esm')?.points).toEqual(new Set(['beforeRun']))
  })

  it('require and process at run time: the diagnostic says what to write instead', async () => {
    expect((await diagnosticOf('req', 'beforeRun')).message).toBe(
      "hook 'req' beforeRun: ReferenceError: require is not defined; hooks have no require() when they run: write import (or require('./file') with a literal path) and hookd bundles the hook's own files and its npm packages (a package.json beside index.js); Node's own modules (fs, path, child_process, ...) do not exist in the sandbox: use ctx.file for files, ctx.http.fetch for HTTP and ctx.env for environment variables",
    )
    expect((await diagnosticOf('proc', 'beforeRun')).message).toBe(
      "hook 'proc' beforeRun: ReferenceError: process is not defined; hooks have no process: read allowed environment variables from ctx.env, the platform from ctx.system and the working directory from ctx.workdir; to stop, return (or throw)",
    )
  })

  it('hookd check prints the hint under the error', async () => {
    const ran = await runInProcess(['check', root])
    expect(ran.code).toBe(1)
    expect(ran.stdout).toContain(
      `${root}/req-load/index.js:2: error: ReferenceError: require is not defined. The hook is skipped until it loads; fix req-load/index.js and save it\n  hint: hooks have no require() when they run: write import (or require('./file') with a literal path) and hookd bundles the hook's own files and its npm packages (a package.json beside index.js); Node's own modules (fs, path, child_process, ...) do not exist in the sandbox: use ctx.file for files, ctx.http.fetch for HTTP and ctx.env for environment variables\n`,
    )
  })

  it('hookd serve reports the hint with the load error', () => {
    const load = running.sidecar.loadDiagnostics.find((d) => d.hook === 'req-load')
    expect(load?.message).toContain('ReferenceError: require is not defined; hooks have no require() when they run: write import')
  })

  it('a Claude Code answer: the diagnostic says what hookd takes instead', async () => {
    const d = await diagnosticOf('claude', 'beforeToolExecute')
    expect(d.kind).toBe('ignored-field')
    expect(d.message).toBe(
      "hook 'claude' returned 'decision', which beforeToolExecute does not let a hook change; ignored (it accepts: allow, reason, arguments, defer); 'decision' is Claude Code's hook answer, not hookd's: to refuse the tool call, return { allow: false, reason: \"no\" } from beforeToolExecute (to let it run, return nothing)",
    )
  })

  it('a misspelt point name: hookd serve says which point it meant', () => {
    const load = running.sidecar.loadDiagnostics.find((d) => d.hook === 'typo')
    expect(load).toMatchObject({ kind: 'load', file: 'typo/index.js', line: 2 })
    expect(load?.message).toBe(
      "the hook exports no hook point; it exports 'beforToolExecute' (did you mean 'beforeToolExecute'?); export at least one, e.g. module.exports = { beforeToolExecute(ctx, call) {} }. The hook is skipped until it loads; fix typo/index.js and save it",
    )
  })
})
