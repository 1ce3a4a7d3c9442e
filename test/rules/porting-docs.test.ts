/**
 * docs/agents.md "Moving existing command hooks over", held true: every command hook the section
 * shows (a ```sh block opening `# .claude/hooks/NAME.sh`) runs in a real `sh` (with jq) on Claude
 * Code's event JSON, its port (the ```js block opening `// hooks/NAME/index.js`) runs in a real
 * sidecar behind the front door on the same event, and the two decide alike: both refuse with the
 * same reason, both ask, both rewrite to the same command or output, or both let the call through.
 */
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Sidecar } from '../../src/sidecar/sidecar.js'
import { claudePre } from '../agents/support/agent-events.js'
import { ROOT } from '../support/processes.js'
import { writeTree } from '../support/sidecar.js'

const TOKEN = 'hkd_porting-docs-token-0123456789abcdefghijklmnop'

/** What either side decided, in one shape: refused (reason), asked, rewritten (the new command or stdout), or nothing. */
type Decision = { refused: string } | { asked: true } | { rewritten: string } | { output: string } | 'nothing'

interface Pair {
  name: string
  script: string
  port: string
}

/** The section's command hooks and ports, by name. */
function pairs(markdown: string): Map<string, Pair> {
  const start = markdown.indexOf('## Moving existing command hooks over')
  const section = markdown.slice(start, markdown.indexOf('\n## ', start + 1))
  const found = new Map<string, Partial<Pair>>()
  for (const block of section.matchAll(/^```(sh|js)\n([\s\S]*?)^```$/gm)) {
    const text = block[2] as string
    const sh = /^#!\/bin\/sh\n# \.claude\/hooks\/([a-z-]+)\.sh/.exec(text)
    const js = /^\/\/ hooks\/([a-z-]+)\/index\.js\n/.exec(text)
    if (sh) found.set(sh[1] as string, { ...found.get(sh[1] as string), name: sh[1] as string, script: text })
    if (js) found.set(js[1] as string, { ...found.get(js[1] as string), name: js[1] as string, port: text })
  }
  return new Map([...found].map(([name, p]) => [name, p as Pair]))
}

let shown: Map<string, Pair>
let work = ''
let hooks = ''
let project = ''
let sidecar: Sidecar
let url = ''
let sessions = 0

beforeAll(async () => {
  shown = pairs(await readFile(join(ROOT, 'docs', 'agents.md'), 'utf8'))
  work = await mkdtemp(join(tmpdir(), 'hookd-porting-'))
  project = join(work, 'project')
  hooks = await writeTree(Object.fromEntries([...shown.values()].map((p) => [`${p.name}/index.js`, p.port ?? ''])))
  for (const p of shown.values()) await writeFile(join(work, `${p.name}.sh`), p.script ?? '')
  await mkdir(project)
  sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {} })
}, 60_000)

afterAll(async () => {
  await sidecar?.stop()
  await Promise.all([work, hooks].filter(Boolean).map((d) => rm(d, { recursive: true, force: true })))
})

/** Runs the command hook in sh, the event on stdin, and reads its decision as Claude Code would. */
function commandHook(name: string, event: unknown): Promise<Decision> {
  return new Promise((resolve, reject) => {
    const child = execFile('sh', [join(work, `${name}.sh`)], (err, stdout, stderr) => {
      const code = err ? Number((err as { code?: unknown }).code) : 0
      if (code === 2) return resolve({ refused: stderr.trim() })
      if (code !== 0) return reject(new Error(`${name}.sh exited ${code}: ${stderr}`))
      if (stdout.trim() === '') return resolve('nothing')
      const out = JSON.parse(stdout) as { decision?: string; reason?: string; hookSpecificOutput?: Record<string, unknown> }
      if (out.decision === 'block') return resolve({ refused: String(out.reason) })
      resolve(decisionOf(out))
    })
    child.stdin?.end(JSON.stringify(event))
  })
}

/** Claude Code's hook answer as a decision. */
function decisionOf(out: { hookSpecificOutput?: Record<string, unknown> }): Decision {
  const h = out.hookSpecificOutput
  if (!h) return 'nothing'
  if (h.permissionDecision === 'deny') return { refused: String(h.permissionDecisionReason) }
  if (h.permissionDecision === 'ask') return { asked: true }
  const input = h.updatedInput as { command?: string } | undefined
  if (input) return { rewritten: String(input.command) }
  const output = h.updatedToolOutput as { stdout?: string } | undefined
  if (output) return { output: String(output.stdout) }
  return 'nothing'
}

/** Posts the event to the front door for the port, and reads Claude Code's answer. */
async function port(name: string, event: Record<string, unknown>): Promise<Decision> {
  const response = await fetch(`${url}/claude-code/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify({ ...event, session_id: `porting-${process.pid}-${++sessions}` }),
  })
  expect(response.status).toBe(200)
  return decisionOf((await response.json()) as { hookSpecificOutput?: Record<string, unknown> })
}

const pre = (tool: string, input: Record<string, unknown>): Record<string, unknown> => claudePre(project, 'x', tool, input)
const bash = (command: string): Record<string, unknown> => pre('Bash', { command, description: 'run it' })
const postBash = (stdout: string): Record<string, unknown> => ({
  ...bash('ls --color'),
  hook_event_name: 'PostToolUse',
  tool_response: { stdout, stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
})

/** Each shape's events and what both sides must decide. */
const CASES: Record<string, Array<[string, () => Record<string, unknown>, Decision]>> = {
  'no-migration-edits': [
    ['a write under migrations/', () => pre('Write', { file_path: join(project, 'db', 'migrations', '001.sql'), content: 'x' }), { refused: 'migrations are generated: run make migration instead' }],
    ['an edit under migrations/', () => pre('Edit', { file_path: join(project, 'migrations', 'a.sql'), old_string: 'a', new_string: 'b' }), { refused: 'migrations are generated: run make migration instead' }],
    ['a write elsewhere', () => pre('Write', { file_path: join(project, 'src', 'a.js'), content: 'x' }), 'nothing'],
  ],
  'no-sudo': [
    ['sudo', () => bash('sudo apt-get install -y jq'), { refused: 'no sudo: ask the user to run it' }],
    ['sudo after another command', () => bash('cd /tmp && sudo rm x'), { refused: 'no sudo: ask the user to run it' }],
    ['no sudo', () => bash('ls -la'), 'nothing'],
  ],
  'careful-commands': [
    ['npm publish', () => bash('npm publish --access public'), { asked: true }],
    ['docker run without --rm', () => bash('docker run alpine echo hi'), { rewritten: 'docker run --rm alpine echo hi' }],
    ['docker run with --rm', () => bash('docker run --rm alpine'), 'nothing'],
    ['another command', () => bash('npm test'), 'nothing'],
  ],
  'plain-output': [
    ['coloured output', () => postBash('\u001b[31mred\u001b[0m and \u001b[1;32mgreen\u001b[0m\n'), { output: 'red and green\n' }],
    ['plain output', () => postBash('plain\n'), 'nothing'],
  ],
}

describe('the ported shapes in docs/agents.md decide as their command hooks do', () => {
  it('the section shows the four shapes, each as a command hook and its port', () => {
    expect([...shown.keys()].sort()).toEqual(Object.keys(CASES).sort())
    for (const p of shown.values()) {
      expect(p.script, p.name).toBeTruthy()
      expect(p.port, p.name).toBeTruthy()
    }
  })

  for (const [name, cases] of Object.entries(CASES)) {
    it.each(cases)(`${name}: %s`, async (_what, event, expected) => {
      expect(await commandHook(name, event()), 'the command hook').toEqual(expected)
      expect(await port(name, event()), 'the port').toEqual(expected)
    })
  }

  it("the port's ask carries the command for the person who answers", async () => {
    const response = await fetch(`${url}/claude-code/careful-commands`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ ...bash('npm publish'), session_id: `porting-${process.pid}-ask` }),
    })
    expect(await response.json()).toEqual({
      hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask', permissionDecisionReason: "Publish to npm?: npm publish (asked by hookd hook 'careful-commands')" },
    })
  })
})
