/**
 * Words a user reads (issue 15, items 18, 19): --help and errors name the two kinds of points and show
 * the event points by group, not ~140 names; the docs never use the project's internal names for them;
 * docs/points.md lists every point; the afterToolExecute payload documented in docs/protocol.md is the
 * one `hookd invoke` takes.
 */
import { readFile, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { POINT_NAMES } from '../../../src/protocol/points/points.js'
import { ROOT, runHookd as hookd, runInProcess as inProcess } from '../../support/processes.js'
import { EXAMPLE_HOOKS } from '../../support/sidecar.js'

const COMMANDS = ['serve', 'invoke', 'list', 'health', 'check', 'new', 'test', 'setup', 'tenant', 'agent']
const INTERNAL_WORDS = /rienda|zidane|the seed|seed's/i

describe('--help', () => {
  it('hookd invoke --help shows the step points and the event points by group, in under 100 lines', async () => {
    const ran = await inProcess(['invoke', '--help'])
    expect(ran.code).toBe(0)
    const points = ran.stdout.slice(ran.stdout.indexOf('\nPoints:\n'), ran.stdout.indexOf('\nPayloads:\n'))
    expect(points).toContain('  step points (the handler returns what it changes):\n    beforeRun, afterRun, beforeModelRequest, afterModelResponse, beforeToolExecute, afterToolExecute\n')
    expect(points).toMatch(/ {2}event points of hookable hosts and of the agents' own events \(the handler changes the event it is given; \d+\):\n/)
    expect(points).toMatch(/\n {4}tools +change: tool:gate, tool:unknown, tool:transform, tool:error\n/)
    expect(points).toMatch(/\n {4}MCP servers +change: mcp:tool:gate, mcp:tool:transform, mcp:tools:filter\n/)
    expect(points).toContain('docs/points.md explains both kinds and lists every point.')
    // Observing points are shown as patterns: stream:* stands for its nine names.
    expect(points).toContain('stream:*')
    expect(points).not.toContain('stream:server_tool_use')
    expect(points.split('\n').length).toBeLessThan(40)
    expect(ran.stdout.split("\n").length).toBeLessThan(100)
  })

  it('no command help uses the internal names of the point kinds', async () => {
    for (const command of [[], ...COMMANDS.map((c) => [c, '--help'])]) {
      const ran = await inProcess(command)
      expect(ran.stdout.length, command.join(' ')).toBeGreaterThan(100)
      expect(ran.stdout, command.join(' ')).not.toMatch(INTERNAL_WORDS)
    }
  })

  it('an unknown command gets a did-you-mean', async () => {
    const ran = await inProcess(['serv'])
    expect(ran.code).toBe(2)
    expect(ran.stderr.split('\n')[0]).toBe("hookd: unknown command 'serv'; did you mean 'serve'?")
  })

  it('a point far from any lists the points by group, not every name', async () => {
    const ran = await inProcess(['invoke', '--point', 'whenever', '--payload', '{}'])
    expect(ran.code).toBe(2)
    expect(ran.stderr.split('\n')[0]).toBe("hookd invoke: --point 'whenever' is not a hook point. Points:")
    expect(ran.stderr).toContain('  step points (the handler returns what it changes):\n')
    expect(ran.stderr).not.toContain('stream:server_tool_use')
    expect(ran.stderr.split('\n').length).toBeLessThan(40)
  })
})

describe('the docs', () => {
  const userDocs = async (): Promise<Array<[string, string]>> => {
    const names = (await readdir(join(ROOT, 'docs'))).filter((n) => n.endsWith('.md')).map((n) => join('docs', n))
    return Promise.all(['README.md', ...names].map(async (n) => [n, await readFile(join(ROOT, n), 'utf8')] as [string, string]))
  }

  it('use "step points" and "event points", never the older names (src/ no longer has them either: test/package/citations.test.ts)', async () => {
    for (const [name, text] of await userDocs()) expect(text.match(new RegExp(INTERNAL_WORDS, 'gi')) ?? [], name).toEqual([])
  })

  it('docs/points.md lists every point of the catalog', async () => {
    const text = await readFile(join(ROOT, 'docs', 'points.md'), 'utf8')
    const missing = POINT_NAMES.filter((p) => !text.includes(`\`${p}\``))
    expect(missing).toEqual([])
  })

  it("docs/protocol.md's afterToolExecute example runs as documented through hookd invoke", async () => {
    const text = await readFile(join(ROOT, 'docs', 'protocol.md'), 'utf8')
    const example = /hookd invoke --point afterToolExecute \\\n {2}--payload '([^']+)'/.exec(text)?.[1]
    expect(example).toBeDefined()
    const payload = JSON.parse(example as string) as { call: unknown; result: { text: string } }
    expect(Object.keys(payload)).toEqual(['call', 'result'])
    const ran = await hookd(['invoke', '--hooks', EXAMPLE_HOOKS, '--hook', 'shout', '--point', 'afterToolExecute', '--payload', example as string])
    expect(ran.code).toBe(0)
    expect((JSON.parse(ran.stdout) as { result: unknown }).result).toEqual({ text: payload.result.text.toUpperCase(), isError: false })
  }, 60_000)
})
