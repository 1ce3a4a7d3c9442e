/**
 * Runs around every test file. The suite shares its test processes between files (vitest.config.ts:
 * isolate false, which saves a process start and a module graph per file), so each file starts where
 * a fresh process would: in the repository, with the environment the run began with.
 */
import { afterAll, beforeAll } from 'vitest'
import { ROOT } from './processes.js'

const original = { ...process.env }

function restore(): void {
  process.chdir(ROOT)
  for (const key of Object.keys(process.env)) if (!(key in original)) delete process.env[key]
  Object.assign(process.env, original)
}

beforeAll(restore)
afterAll(restore)
