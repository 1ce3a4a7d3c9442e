/**
 * `npm run agents-matrix`: writes docs/agents.md's "What each agent can express" (a column per agent, a
 * row per hookd capability) from the agents' definitions (each `expresses` in src/agents/<agent>/,
 * the rows in src/agents/agent-definition.ts EXPRESSED). Run it after adding an agent or changing
 * what one expresses; test/unit/agents/agent-registry.test.ts fails until the table says what the
 * definitions say.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { EXPRESSED } from '../src/agents/agent-definition.js'
import { AGENTS } from '../src/agents/registry.js'

const path = join(dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'agents.md')
const row = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`
const table = [
  row(['hookd feature', ...AGENTS.map((a) => a.title)]),
  row(['---', ...AGENTS.map(() => '---')]),
  ...EXPRESSED.map((e) => row([e.row, ...AGENTS.map((a) => a.expresses[e.key])])),
].join('\n')

const before = readFileSync(path, 'utf8')
const start = before.indexOf('\n| hookd feature |')
const end = start < 0 ? -1 : before.indexOf('\n\n', start + 1)
if (start < 0 || end < 0) throw new Error('docs/agents.md has no "| hookd feature |" table')
const after = `${before.slice(0, start + 1)}${table}${before.slice(end)}`
if (after !== before) writeFileSync(path, after)
console.log(`docs/agents.md: ${after === before ? 'as the definitions say already' : 'written'}`)
