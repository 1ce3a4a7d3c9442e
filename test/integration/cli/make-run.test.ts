/**
 * README.md's Quickstart in a clone: `make run` starts the sidecar serving ./hooks on the default
 * address, prints that address and a command to try, and the printed command, run in another
 * terminal, answers what the README shows. The printed command is the README's own invoke block.
 * test/package/docs-run.test.ts runs the same blocks from the installed package.
 *
 * `make run` here runs its own recipe only: its prerequisites are make's install and build rules
 * (`npm ci`, `npm run build`, the shim), which `make test` runs in CI; from a test they would reinstall
 * the node_modules and rebuild the dist/ that the running tests use. `-o` tells make to take them as
 * made, and a dry run (`make -n`) first proves that nothing but the recipe would run.
 */
import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { blocks, commands, differences, quoted, shownJson } from '../../support/doc-blocks.js'
import { run, userEnv } from '../../support/packed.js'
import { LISTENING_LINE, ROOT } from '../../support/processes.js'

const MADE = ['node_modules/.installed', 'dist/.built', 'build/hookd-hook'].flatMap((file) => ['-o', file])
const HAD_STATE = existsSync(join(ROOT, '.hookd'))

let make: ChildProcess | undefined

afterAll(async () => {
  if (make?.pid !== undefined && make.exitCode === null) {
    const closed = new Promise((resolve) => make?.once('close', resolve))
    process.kill(-make.pid, 'SIGTERM')
    await closed
  }
  if (!HAD_STATE) await rm(join(ROOT, '.hookd'), { recursive: true, force: true })
})

it("make run starts the sidecar, prints its address and a command to try, and that command answers as the README shows", async () => {
  const plan = await run('make', ['-n', '-s', ...MADE, 'run'], { cwd: ROOT })
  expect(plan.code, plan.stderr).toBe(0)
  const planned = plan.stdout.trimEnd().split('\n')
  expect(planned.filter((line) => !/^(echo|printf) /.test(line))).toEqual(['exec node bin/hookd.js serve --hooks hooks --listen unix:.hookd/hookd.sock'])

  // In the clone, in a user's shell (their PATH and HOME; no variable of this test run's own).
  make = spawn('make', ['-s', ...MADE, 'run'], { cwd: ROOT, env: userEnv(), stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let stdout = ''
  let stderr = ''
  make.stdout?.on('data', (d: Buffer) => (stdout += d.toString()))
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`make run was not ready within 60 s:\n${stdout}${stderr}`)), 60_000)
    make?.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString()
      if (LISTENING_LINE.test(stderr)) {
        clearTimeout(timer)
        resolve()
      }
    })
    make?.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`make run exited (${code}):\n${stdout}${stderr}`))
    })
  })
  expect(LISTENING_LINE.exec(stderr)?.[1]).toBe(`unix:${join(ROOT, '.hookd', 'hookd.sock')}`)

  // "`make run` prints the address (`unix:.hookd/hookd.sock`) and a command to try".
  const address = quoted('README.md', 'Quickstart', /^unix:/)
  const lines = stdout.trimEnd().split('\n')
  expect(lines[0]).toBe(`hookd: starting the sidecar for ./hooks on ${address}`)
  expect(lines[1]).toBe('hookd: in another terminal, try:')
  const printed = (lines[2] ?? '').trim()
  // The command printed is the README's invoke block, its continuation lines joined.
  const [, invoke, answer] = blocks('README.md', 'Quickstart')
  expect(invoke && commands(invoke).map((c) => c.head)).toEqual([printed])

  // In another terminal, in the clone: npx finds the clone's own hookd-sandbox.
  const tried = await run('bash', ['-c', printed], { cwd: ROOT })
  expect(tried.code, tried.stderr).toBe(0)
  expect(answer?.lang).toBe('json')
  expect(differences(shownJson(answer?.text ?? ''), JSON.parse(tried.stdout)), tried.stdout).toEqual([])
}, 120_000)
