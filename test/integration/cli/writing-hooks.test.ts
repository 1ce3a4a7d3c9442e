/**
 * docs/writing-hooks.md, followed as a reader follows it (issue 19 item 7): in an empty folder, every
 * `$` command of the tutorial runs in order (`npx hookd-sandbox ARGS` is the hookd command run in-process,
 * main(ARGS, io), with the arguments as bash splits them; the others run in bash, and npm installs from
 * its cache when it can), every file the tutorial shows (a block whose first line is `// PATH`) is
 * written when the reader would write it, each command must succeed, and what the tutorial shows a
 * command printing must be what it prints (timings aside).
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterAll, expect, it } from 'vitest'
import { ROOT, type Ran, runInProcess } from '../../support/processes.js'

type Step = { kind: 'file'; path: string; text: string } | { kind: 'command'; command: string; shown: string[] }

/** The tutorial's steps, in order: the files to write and the commands to run, up to the reference. */
function steps(markdown: string): Step[] {
  const tutorial = markdown.split('\n## The test-case format')[0] as string
  const out: Step[] = []
  for (const block of tutorial.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)) {
    const lines = (block[1] as string).replace(/\n$/, '').split('\n')
    const file = /^\/\/ (\S+)$/.exec(lines[0] as string)
    if (file) {
      out.push({ kind: 'file', path: file[1] as string, text: `${lines.slice(1).join('\n')}\n` })
      continue
    }
    // A block without a command shows what something prints, for reading only.
    let current: Extract<Step, { kind: 'command' }> | undefined
    for (const line of lines) {
      if (line.startsWith('$ ')) out.push((current = { kind: 'command', command: line.slice(2), shown: [] }))
      else current?.shown.push(line)
    }
  }
  return out
}

const HOOKD = 'npx hookd-sandbox '

async function run(command: string, cwd: string): Promise<Ran> {
  if (!command.startsWith(HOOKD)) return bash(command, cwd)
  // The words bash would pass, quotes removed: printed NUL-separated by bash itself.
  const words = await bash(`printf '%s\\0' ${command.slice(HOOKD.length)}`, cwd)
  expect(words.code, words.stderr).toBe(0)
  return runInProcess(words.stdout.split('\0').slice(0, -1), { cwd, env: { ANTHROPIC_API_KEY: undefined } })
}

function bash(line: string, cwd: string): Promise<Ran> {
  return new Promise((done, fail) => {
    const { ANTHROPIC_API_KEY: _key, ...env } = process.env
    const child = spawn('bash', ['-c', line], { cwd, env: { ...env, npm_config_prefer_offline: 'true', npm_config_fund: 'false', npm_config_audit: 'false' }, timeout: 240_000 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', fail)
    child.on('close', (code) => done({ code, stdout, stderr }))
  })
}

const timing = (line: string): string => line.replace(/\(\d+ ms\)/g, '(N ms)').trimEnd()

let dir: string | undefined

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

it('every command of the tutorial works, and prints what the tutorial shows', async () => {
  const all = steps(await readFile(join(ROOT, 'docs', 'writing-hooks.md'), 'utf8'))
  expect(all.filter((s) => s.kind === 'command').length).toBeGreaterThan(10)
  dir = await mkdtemp(join(tmpdir(), 'hookd-tutorial-'))
  let cwd = dir
  for (const step of all) {
    if (step.kind === 'file') {
      const path = join(dir, step.path)
      await mkdir(dirname(path), { recursive: true })
      await writeFile(path, step.text)
      continue
    }
    const cd = /^cd (\S+)$/.exec(step.command)
    if (cd) {
      cwd = resolve(cwd, cd[1] as string)
      continue
    }
    const ran = await run(step.command, cwd)
    expect({ command: step.command, code: ran.code, stderr: ran.code === 0 ? '' : ran.stderr }).toEqual({ command: step.command, code: 0, stderr: '' })
    // Each line shown is printed: in the order shown when it is on stdout, or else on stderr.
    // The tutorial's folder is /home/you/project.
    const shownAs = (text: string): string[] => text.split(dir as string).join('/home/you/project').split('\n').map(timing)
    const stdout = shownAs(ran.stdout)
    const stderr = shownAs(ran.stderr)
    let at = 0
    for (const shown of step.shown.map(timing)) {
      const found = stdout.indexOf(shown, at)
      if (found >= 0) at = found + 1
      else expect({ command: step.command, line: shown, printed: ran.stdout + ran.stderr }).toEqual({ command: step.command, line: shown, printed: expect.stringContaining(shown) })
      if (found < 0) expect(stderr).toContain(shown)
    }
  }
}, 900_000)
