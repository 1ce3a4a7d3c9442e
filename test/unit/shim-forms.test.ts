/**
 * The shim's table of agents (src/agents/shim-forms.ts) against the registry: both forms of the shim
 * (native/hookd-hook.c, bin/hookd-hook) hold exactly the block the registry writes (`npm run
 * shim-forms` writes it), and each shim, run for each agent of the registry, refuses as the agent's
 * definition says when hookd cannot be reached, and names the project the way its definition says
 * (the agent's own variable, the folder up that holds its marker, or the working folder) to the
 * user's hookd.
 */
import { spawn } from 'node:child_process'
import { chmod, mkdir, mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises'
import { type Server, createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { REASON } from '../../src/agents/agent-definition.js'
import { AGENTS } from '../../src/agents/registry.js'
import { cBlock, shBlock, shimFormProblem, withBlock } from '../../src/agents/shim-forms.js'
import { ROOT } from '../support/processes.js'

const SHIMS = [
  { form: 'compiled (build/hookd-hook)', path: join(ROOT, 'build', 'hookd-hook') },
  { form: 'script (bin/hookd-hook)', path: join(ROOT, 'bin', 'hookd-hook') },
]

interface Ran {
  code: number | null
  stdout: string
  stderr: string
}

function run(shim: string, args: string[], options: { env?: Record<string, string>; cwd?: string } = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(shim, args, { cwd: options.cwd ?? ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent-home', ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    child.stdin.end('{"hook_event_name":"PreToolUse"}')
  })
}

describe('the shims hold the registry\'s table', () => {
  it('every agent has a shim form the shims can carry', () => {
    for (const agent of AGENTS) expect(shimFormProblem(agent), agent.id).toBeUndefined()
  })

  it.each([
    ['native/hookd-hook.c', cBlock(AGENTS)],
    ['bin/hookd-hook', shBlock(AGENTS)],
  ])("%s says what the registry says (else run 'npm run shim-forms')", async (file, block) => {
    const text = await readFile(join(ROOT, file), 'utf8')
    expect(withBlock(text, block)).toBe(text)
  })
})

describe.each(SHIMS)('the $form shim, for each agent of the registry', ({ path }) => {
  let state = ''
  let work = ''
  let server: Server | undefined
  const projects: string[] = []

  beforeAll(async () => {
    state = await mkdtemp(join(tmpdir(), 'hookd-shim-forms-state-'))
    await chmod(state, 0o700)
    await writeFile(join(state, 'http-token'), 'hkd_shim-forms-token-0123456789abcdefghijklmnop\n', { mode: 0o600 })
    work = await realpath(await mkdtemp(join(tmpdir(), 'hookd-shim-forms-work-')))
    // The user's hookd stand-in: it records the project each request names, and answers without hookd's proof.
    server = createServer((req, res) => {
      projects.push(decodeURIComponent(String(req.headers['x-hookd-project'] ?? '')))
      req.resume()
      req.on('end', () => res.end('{}'))
    })
    await new Promise<void>((resolve) => server?.listen(join(state, 'front.sock'), resolve))
  })

  afterAll(async () => {
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    await rm(state, { recursive: true, force: true })
    await rm(work, { recursive: true, force: true })
  })

  it.each(AGENTS.map((a) => [a.id, a] as const))('%s: refuses as its definition says when hookd cannot be reached', async (_id, agent) => {
    const ran = await run(path, ['--timeout', '5', `http://127.0.0.1:1/${agent.id}/guard`], { env: { HOOKD_TOKEN: 'hkd_x-0123456789abcdefghijklmnopqrstuvwxyz' } })
    const { exit, stdout } = agent.shim.refusal
    expect(ran.code).toBe(exit)
    const reason = /hookd-hook: cannot reach hookd at http:\/\/127\.0\.0\.1:1\/\S+ \(.*\); the call is refused \(hookd-hook fails closed\)/
    if (stdout === undefined) {
      expect(ran.stdout).toBe('')
      expect(ran.stderr).toMatch(reason)
    } else {
      const answer = JSON.parse(ran.stdout) as Record<string, unknown>
      const said = Object.entries(answer).find(([, v]) => typeof v === 'string' && reason.test(v))?.[1]
      expect(said, ran.stdout).toBeDefined()
      expect(answer).toEqual(JSON.parse(stdout.split(REASON).join(String(said).replace(/["\\]/g, '\\$&'))))
    }
  })

  it.each(AGENTS.map((a) => [a.id, a] as const))("%s: names its project to the user's hookd as its definition says", async (_id, agent) => {
    const { projectVariable, projectMarker } = agent.shim
    const top = join(work, agent.id)
    const below = join(top, 'sub', 'deeper')
    await mkdir(below, { recursive: true })
    if (projectMarker !== undefined) {
      await mkdir(join(top, projectMarker, '..'), { recursive: true })
      await writeFile(join(top, projectMarker), '{}')
    }
    const env: Record<string, string> = { HOOKD_STATE_DIR: state }
    if (projectVariable !== undefined) env[projectVariable] = '/from/the/agent'
    const ran = await run(path, ['--timeout', '5', '--hooks-dir', 'hooks', `/${agent.id}/guard`], { env, cwd: below })
    expect(ran.code === 0 || ran.code === 2, ran.stderr).toBe(true)
    expect(`${ran.stdout}${ran.stderr}`).toContain('does not prove it came from hookd')
    expect(projects.at(-1)).toBe(projectVariable !== undefined ? '/from/the/agent' : projectMarker !== undefined ? top : below)
  })
})
