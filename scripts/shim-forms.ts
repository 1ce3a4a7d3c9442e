/**
 * `npm run shim-forms`: writes the agents' table into both forms of the shim (native/hookd-hook.c and
 * bin/hookd-hook, between their `hookd:agents` marker lines) from src/agents/registry.ts, through
 * src/agents/shim-forms.ts. Run it after adding an agent or changing one's `shim`;
 * test/unit/shim-forms.test.ts fails until the shims say what the registry says.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { AGENTS } from '../src/agents/registry.js'
import { cBlock, shBlock, shimFormProblem, withBlock } from '../src/agents/shim-forms.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
for (const agent of AGENTS) {
  const problem = shimFormProblem(agent)
  if (problem) throw new Error(`${agent.id}: ${problem}`)
}
for (const [file, block] of [
  ['native/hookd-hook.c', cBlock(AGENTS)],
  ['bin/hookd-hook', shBlock(AGENTS)],
] as const) {
  const path = join(root, file)
  const before = readFileSync(path, 'utf8')
  const after = withBlock(before, block)
  if (after === undefined) throw new Error(`${file} has no single pair of hookd:agents marker lines`)
  if (after !== before) writeFileSync(path, after)
  console.log(`${file}: ${after === before ? 'as the registry says already' : 'written'}`)
}
