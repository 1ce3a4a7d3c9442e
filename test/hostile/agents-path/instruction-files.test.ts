/**
 * The agents read instructions from more files than the protected names list
 * (src/protocol/protected-paths.ts). Measured with Codex 0.169.0 in a trusted project: with an
 * `AGENTS.override.md` beside `AGENTS.md`, the override is what the model reads and `AGENTS.md` is
 * dropped; a `.agents/skills/NAME/SKILL.md` is listed to the model as a skill it may use. `AGENTS.md` is
 * protected ("Codex and other agents read it as instructions"); a hook with a read-write policy must
 * not reach the same model through the files that replace it. Over gRPC, whose sessions get the same
 * protected names as the front door's.
 */
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Running, startSidecar } from '../../support/sidecar.js'
import { FIXTURES, HOSTILE_LIMITS, expectServing, runHooks } from '../support.js'

let running: Running
let workdir: string

beforeAll(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'hookd-instructions-'))
  const hooks = join(workdir, 'hooks')
  for (const name of ['instruction-writes', 'ordinary']) await cp(join(FIXTURES, name), join(hooks, name), { recursive: true })
  running = await startSidecar({ hooks, workers: 1, limits: HOSTILE_LIMITS, watch: false })
}, 60_000)

afterAll(async () => {
  await running?.stop()
  if (workdir) await rm(workdir, { recursive: true, force: true })
})

describe("the files Codex reads in AGENTS.md's place", () => {
  it('are refused like AGENTS.md under a read-write policy: AGENTS.override.md (at any depth) and .agents/', async () => {
    const run = await runHooks(running, ['instruction-writes'], { workdir, policy: { file: 'read-write' } })
    expect(run.diagnostics).toEqual([])
    expect((run.result.arguments as { results: string[] }).results).toEqual([
      'AGENTS.override.md: denied',
      'sub/AGENTS.override.md: denied',
      '.agents/skills/deploy/SKILL.md: denied',
      'AGENTS.md: denied',
    ])
    expect((await readdir(workdir)).sort()).toEqual(['hooks'])
    await expectServing(running)
  })
})
