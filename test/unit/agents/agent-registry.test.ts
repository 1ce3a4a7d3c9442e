/**
 * What the docs say of each agent, against the agents' definitions (src/agents/registry.ts), as
 * test/unit/protected-paths.test.ts checks its table: docs/agents.md's tables (the events of each
 * agent, the tool vocabulary, what each agent can express, the shim's refusals, the files setup and
 * init write, the routes) and README.md's lists of agents say what the registry says, row for row, so
 * that an agent added, removed or changed in its folder fails here until its docs follow. `hookd
 * setup --help` and `hookd init --help` name every agent and its files, and an unknown agent is
 * refused naming them all. And every
 * agent's committed settings file is one hooks may never write (src/protocol/protected-paths.ts): a
 * hook that could write it would run commands outside the sandbox the next time the agent starts.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { EXPRESSED } from '../../../src/agents/agent-definition.js'
import { AGENTS, AGENT_IDS } from '../../../src/agents/registry.js'
import { CANONICAL_TOOLS, CANONICAL_TOOL_NAMES, type CanonicalToolName } from '../../../src/agents/vocabulary.js'
import { protectionOf } from '../../../src/protocol/protected-paths.js'
import { ROOT, runInProcess } from '../../support/processes.js'

interface Table {
  header: string[]
  rows: string[][]
}

/** A table row's cells, trimmed (`\|` is a `|` inside a cell). */
const cells = (line: string): string[] =>
  line
    .trim()
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim())

/** Every table of a markdown text, in order. */
function tables(text: string): Table[] {
  const found: Table[] = []
  const lines = text.split('\n')
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!lines[i]?.startsWith('|') || !/^\|( *-+ *\|)+$/.test(lines[i + 1]?.trim() ?? '')) continue
    const header = cells(lines[i] as string)
    const rows: string[][] = []
    for (i += 2; i < lines.length && lines[i]?.startsWith('|'); i++) rows.push(cells(lines[i] as string))
    found.push({ header, rows })
  }
  return found
}

/** The one table whose header's first cells are `start`. */
function table(all: readonly Table[], ...start: string[]): Table {
  const hits = all.filter((t) => start.every((c, i) => t.header[i] === c))
  expect(hits.length, `tables headed | ${start.join(' | ')} |`).toBe(1)
  return hits[0] as Table
}

/** The names in backticks of a cell, leaving out what is in parentheses (remarks: `Bash` (`x` → `y`)). */
const named = (cell: string): string[] => [...cell.replace(/\([^)]*\)/g, '').matchAll(/`([^`]+)`/g)].map((m) => m[1] as string)

const sorted = (list: readonly string[]): string[] => [...list].sort()

const titles = AGENTS.map((a) => a.title)

let agentsDoc = ''
let readme = ''
let docTables: Table[] = []

beforeAll(async () => {
  agentsDoc = await readFile(join(ROOT, 'docs', 'agents.md'), 'utf8')
  readme = await readFile(join(ROOT, 'README.md'), 'utf8')
  docTables = tables(agentsDoc)
})

describe("docs/agents.md says what the agents' definitions say", () => {
  it('"What each agent can express": a column per agent, a row per feature, each cell its definition\'s', () => {
    const t = table(docTables, 'hookd feature')
    expect(t.header).toEqual(['hookd feature', ...titles])
    expect(t.rows).toEqual(EXPRESSED.map((e) => [e.row, ...AGENTS.map((a) => a.expresses[e.key])]))
  })

  it("the shim's refusal for each agent, and why that form", () => {
    const t = table(docTables, 'agent', "the shim's refusal")
    expect(t.rows).toEqual(AGENTS.map((a) => [a.title, a.shim.docs.form, a.shim.docs.why]))
  })

  it.each(AGENTS.map((a) => [a.id, a] as const))("%s's events: the table lists every event its dialect maps, and the points they reach", (_id, agent) => {
    const t = table(docTables, `${agent.title} event`, 'hookd point')
    // Event names are words, or dotted words (OpenCode's `tool.execute.before`).
    const rows = t.rows.map((r) => ({ events: named(r[0] ?? '').filter((n) => /^[A-Za-z]+(\.[A-Za-z]+)*$/.test(n)), point: r[1] ?? '' }))
    const listed = rows.flatMap((r) => r.events)
    expect(sorted(listed)).toEqual(sorted(agent.dialect.events))
    expect(new Set(listed).size, 'an event listed twice').toBe(listed.length)
    // The events setup registers for a point say that point in their row.
    for (const point of ['beforeModelRequest', 'beforeToolExecute', 'afterToolExecute']) {
      for (const event of agent.dialect.eventsForPoints(new Set([point]))) {
        expect(rows.find((r) => r.events.includes(event))?.point, `${event} reaches ${point}`).toContain(`\`${point}\``)
      }
    }
  })

  it('the tool vocabulary: every canonical tool with its arguments, and in each agent\'s column the native tools its table maps onto it', () => {
    const t = table(docTables, 'canonical', 'arguments')
    expect(t.header).toEqual(['canonical', 'arguments', ...titles])
    expect(t.rows.map((r) => r[0])).toEqual(CANONICAL_TOOL_NAMES.map((n) => `\`${n}\``))
    for (const row of t.rows) {
      const name = named(row[0] ?? '')[0] as CanonicalToolName
      const shape = CANONICAL_TOOLS[name].shape as Record<string, { safeParse(v: unknown): { success: boolean } }>
      const args = Object.entries(shape).map(([field, schema]) => `\`${field}${schema.safeParse(undefined).success ? '?' : ''}\``)
      expect(row[1], `${name}'s arguments`).toBe(args.join(', '))
      AGENTS.forEach((agent, i) => {
        const natives = agent.dialect.tools.mappings.filter((m) => ('reads' in m ? m.reads : [m.canonical]).includes(name)).map((m) => m.native)
        expect(sorted(named(row[2 + i] ?? '')), `${agent.title}'s ${name}`).toEqual(sorted(natives))
      })
    }
  })

  it('the committed file hookd init writes for each agent, and the agents init takes', () => {
    const t = table(docTables, 'agent', 'committed file')
    expect(t.rows.map((r) => r.slice(0, 2))).toEqual(AGENTS.map((a) => [a.title, `\`${a.settings.committed}\``]))
    expect(agentsDoc).toContain(`\`hookd init ${AGENT_IDS.join('\\|')} --hooks a,b`)
  })

  it("the files hookd setup writes for each agent, and the entry it writes there", () => {
    // Agents without a project file of one user's own: the user's file by default, the project's with --dir.
    const t = table(docTables, 'agent', "user's file (default)", '`--dir DIR`', 'entry')
    const shared = AGENTS.filter((a) => a.settings.local === undefined)
    expect(t.rows.map((r) => r[0])).toEqual(shared.map((a) => a.title))
    shared.forEach((agent, i) => {
      const [, user, dir, entry] = t.rows[i] as string[]
      const { dir: folder, file, variable } = agent.settings.user
      expect(named(user ?? '')[0], `${agent.title}'s user file`).toBe(variable !== undefined ? `$${variable}/${file}` : `~/${folder}/${file}`)
      expect(named(dir ?? '')[0], `${agent.title}'s --dir file`).toBe(`DIR/${agent.settings.committed}`)
      // The entry for the default --timeout (30 s: the agent's own is 35).
      expect(JSON.parse(named(entry ?? '')[0] ?? ''), `${agent.title}'s entry`).toEqual(agent.settings.format.entry('...', 35))
    })
    // An agent with a file of its own in the project (Claude Code's): its section names both files.
    for (const agent of AGENTS.filter((a) => a.settings.local !== undefined)) {
      expect(agentsDoc).toContain(`\`${agent.settings.local}\``)
      expect(agentsDoc).toContain(`\`~/${agent.settings.user.dir}/${agent.settings.user.file}\``)
    }
  })

  it("where the shim finds each agent's project", () => {
    const bullet = agentsDoc.split('\n- **The shim** on a bare route')[1]?.split('\n- ')[0] ?? ''
    for (const agent of AGENTS) {
      const { projectVariable, projectMarker } = agent.shim
      if (projectVariable !== undefined) expect(bullet, agent.title).toContain(`\`$${projectVariable}\``)
      if (projectMarker !== undefined) expect(bullet, agent.title).toContain(`\`${projectMarker}\``)
    }
  })

  it("the endpoints: every agent's routes", () => {
    const t = table(docTables, 'request', 'answer')
    for (const agent of AGENTS) {
      const post = agent.settings.namedEvents ? `/${agent.id}/HOOKS?event=NAME` : `/${agent.id}/`
      expect(t.rows.some((r) => r[0]?.startsWith('`POST') && r[0].includes(post)), `POST ${post}`).toBe(true)
      expect(t.rows.some((r) => r[0]?.startsWith('`GET') && r[0].includes(`/${agent.id}/`)), `GET /${agent.id}/`).toBe(true)
    }
  })

  it('a section for each agent', () => {
    const headings = agentsDoc.split('\n').filter((l) => /^#{2,3} /.test(l))
    for (const agent of AGENTS) expect(headings.some((h) => h.includes(agent.title)), agent.title).toBe(true)
  })
})

describe("hookd setup's and hookd init's help, from the registry", () => {
  it('setup --help names every agent and the files it writes for it, and each agent\'s own options', async () => {
    const ran = await runInProcess(['setup', '--help'])
    expect(ran.code).toBe(0)
    expect(ran.stdout).toContain(`AGENT: ${AGENT_IDS.join(', ')}`)
    const flat = ran.stdout.replace(/\s+/g, ' ')
    for (const agent of AGENTS) {
      const s = agent.settings
      expect(flat, agent.id).toContain(s.local !== undefined ? `${agent.id} DIR/${s.local}` : `${agent.id} the user's ~/${s.user.dir}/${s.user.file}`)
      if (s.local !== undefined) expect(flat).toMatch(new RegExp(`--user [^-]*${agent.id}`))
      if (s.http !== undefined) expect(flat).toMatch(new RegExp(`--transport http ([a-z-]+, )*${agent.id}[,:]`))
    }
  })

  it('init --help names every agent and its committed file, and --trust for the agents that trust', async () => {
    const ran = await runInProcess(['init', '--help'])
    expect(ran.code).toBe(0)
    const flat = ran.stdout.replace(/\s+/g, ' ')
    expect(flat).toContain(`AGENT ${AGENT_IDS.join(', ')}`)
    for (const agent of AGENTS) {
      const says = agent.settings.noInit === undefined ? `writes ${agent.settings.committed}` : `writes no ${agent.settings.committed}: use hookd setup ${agent.id} on each machine`
      expect(flat, agent.id).toContain(`${agent.id} ${says}`)
    }
    for (const agent of AGENTS.filter((a) => a.settings.trust !== undefined)) expect(flat).toContain(`--trust ${agent.id}:`)
  })

  it.each([['setup'], ['init']])('%s refuses an agent it does not know, naming the ones it knows', async (command) => {
    const ran = await runInProcess([command, 'aider', '--hooks', 'guard'])
    expect(ran.code).toBe(2)
    expect(ran.stderr).toContain(`hookd ${command}: 'hookd ${command}' knows the agents ${AGENT_IDS.join(', ')}; 'aider' is not one of them`)
  })
})

describe("README.md's lists of agents", () => {
  it('hookd init takes every agent; hookd setup, those with a project file of their own and the rest', () => {
    expect(readme).toContain(`\`hookd init ${AGENT_IDS.join('\\|')} --hooks a,b`)
    for (const agent of AGENTS.filter((a) => a.settings.local !== undefined)) expect(readme).toContain(`\`hookd setup ${agent.id} --hooks a,b`)
    const shared = AGENTS.filter((a) => a.settings.local === undefined).map((a) => a.id)
    expect(readme).toContain(`\`hookd setup ${shared.join('\\|')} --hooks a,b`)
  })
})

describe("every agent's settings are out of hooks' reach", () => {
  it.each(AGENTS.map((a) => [a.id, a] as const))("%s: hooks never write its committed file, nor read its file of one user's own", (_id, agent) => {
    expect(protectionOf(join('/p', agent.settings.committed), 'write'), agent.settings.committed).toBeDefined()
    if (agent.settings.local !== undefined) expect(protectionOf(join('/p', agent.settings.local), 'read'), agent.settings.local).toBeDefined()
    // An agent whose hooks are scripts in a folder: no script of any of its events either.
    for (const event of agent.settings.scripts ? agent.dialect.events : []) {
      const file = join('/p', agent.settings.committed, agent.settings.scripts?.fileOf(event) ?? event)
      expect(protectionOf(file, 'write'), file).toBeDefined()
    }
  })

  it('OpenCode reads opencode.jsonc as it reads opencode.json, and Cline its .clinerules/hooks/ as .cline/hooks/: hooks write neither', () => {
    for (const file of ['opencode.jsonc', 'sub/opencode.jsonc', '.clinerules/hooks/PreToolUse', '.cline/hooks/PreToolUse.sh']) {
      expect(protectionOf(join('/p', file), 'write'), file).toBeDefined()
    }
  })
})
