/**
 * Runs around every file of `npm run test:unit` (vitest.unit.config.ts): the in-memory tests start no
 * process, so here every way node:child_process starts one throws, naming the test:unit rule. A test
 * that needs a process belongs in the whole suite (vitest.config.ts), outside the unit list.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module'

const childProcess = createRequire(import.meta.url)('node:child_process') as Record<string, unknown>
const STARTERS = ['spawn', 'spawnSync', 'fork', 'exec', 'execSync', 'execFile', 'execFileSync'] as const

for (const name of STARTERS) {
  childProcess[name] = () => {
    throw new Error(`child_process.${name}: npm run test:unit runs the in-memory tests, which start no process; run this file with the whole suite (npx vitest run FILE), and keep it out of vitest.unit.config.ts`)
  }
}
// ESM importers of node:child_process see the same functions.
syncBuiltinESMExports()
