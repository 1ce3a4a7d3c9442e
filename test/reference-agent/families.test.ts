/**
 * rienda and zidane hooks in one agent: zidane points reach hookd through the hookable bridge, rienda
 * points are called directly, and no handler runs twice for one step.
 */
import { cp } from 'node:fs/promises'
import { join } from 'node:path'
import { createHooks } from 'hookable'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type AgentHookMap, ScriptedModel, parseScript, planBridge } from '../../src/host/reference-agent/index.js'
import { EXAMPLE_HOOKS, type Running, hook, startSidecar, writeTree } from '../support/sidecar.js'
import { runCaptured } from './support.js'

let sidecar: Running

beforeAll(async () => {
  const root = await writeTree({
    'zgate/index.js': hook({
      'tool:gate': `(ctx, e) => { if (e.name === 'shell' && String(e.input.command).includes('rm ')) { e.block = true; e.reason = 'zidane says no' } }`,
    }),
    'turns/index.js': hook({ 'turn:after': `(ctx, e) => { ctx.log('turn ' + e.turn + ' ' + e.stopReason) }` }),
    'zaudit/index.js': hook({ 'tool:gate': `(ctx, e) => { ctx.log('zaudit saw ' + e.name) }` }),
    'both/index.js': hook({
      beforeToolExecute: `(ctx, call) => { ctx.log('rienda gate ' + call.id) }`,
      'tool:gate': `(ctx, e) => { ctx.log('zidane gate ' + e.callId) }`,
    }),
    'reminder/index.js': hook({ 'system:transform': `(ctx, e) => { e.system += ' Turn ' + e.turn + '.' }` }),
  })
  await cp(join(EXAMPLE_HOOKS, 'audit'), join(root, 'audit'), { recursive: true })
  sidecar = await startSidecar({ hooks: root, watch: false })
})

afterAll(() => sidecar?.stop())

function script(...turns: unknown[]): ScriptedModel {
  return new ScriptedModel(parseScript(JSON.stringify({ version: 1, turns }), 'script.json'))
}

const rm = { name: 'shell', arguments: { command: 'rm -rf build' } }

describe('zidane hooks in the agent', () => {
  it('blocks at tool:gate and observes turn:after through the bridge', async () => {
    const ran = await runCaptured({ model: script({ toolCalls: [rm] }, { text: 'ok' }), hooks: ['zgate', 'turns', 'reminder'], address: sidecar.address })

    expect(ran.result.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1_1', content: 'zidane says no', is_error: true }] })
    expect(ran.stderr).toContain('[zgate] blocked shell: zidane says no')
    expect(ran.stderr).toContain('[turns] turn 1 tool_use\n')
    expect(ran.stderr).toContain('[turns] turn 2 end_turn\n')
    expect(ran.stderr).toContain(`[reminder] set this turn's system prompt: `)
  })

  it('lets host handlers on the same hookable instance see and change the events', async () => {
    const hookable = createHooks<AgentHookMap>()
    const seen: string[] = []
    hookable.hook('tool:gate', (e) => {
      seen.push(`${e.name} ${JSON.stringify(e.input)}`)
      if (e.name === 'list_files') e.result = 'listing is disabled here'
    })
    const ran = await runCaptured({ model: script({ toolCalls: [{ name: 'list_files' }] }, { text: 'ok' }), hookable })
    expect(seen).toEqual(['list_files {}'])
    expect(ran.result.messages[2]).toEqual({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1_1', content: 'listing is disabled here' }] })
  })

  it("runs a rienda hook's handler once per step, and says when a zidane handler cannot run beside it", async () => {
    const ran = await runCaptured({
      model: script({ toolCalls: [{ name: 'list_files' }, { name: 'list_files' }] }, { text: 'ok' }),
      hooks: ['audit', 'zaudit'],
      address: sidecar.address,
    })
    expect(ran.stderr.match(/\[audit\] tool call call_1_1 list_files\n/g)).toHaveLength(1)
    expect(ran.stderr.match(/\[audit\] tool call call_1_2 list_files\n/g)).toHaveLength(1)
    expect(ran.stderr).not.toContain('zaudit saw')
    expect(ran.stderr).toContain(
      "hookd agent: hook 'zaudit' handles tool:gate, which does not run in this agent: 'audit' handles the same step as beforeToolExecute only, " +
        "and forwarding tool:gate would run that beforeToolExecute handler a second time. Give 'zaudit' a beforeToolExecute handler instead, or give 'audit' a tool:gate handler too.",
    )
  })

  it('runs both handlers of a hook that names the step in both families, each once', async () => {
    const ran = await runCaptured({ model: script({ toolCalls: [{ name: 'list_files' }] }, { text: 'ok' }), hooks: ['both'], address: sidecar.address })
    expect(ran.stderr.match(/\[both\] rienda gate call_1_1\n/g)).toHaveLength(1)
    expect(ran.stderr.match(/\[both\] zidane gate call_1_1\n/g)).toHaveLength(1)
    expect(ran.stderr.indexOf('rienda gate')).toBeLessThan(ran.stderr.indexOf('zidane gate'))
  })
})

describe('planBridge', () => {
  it('withholds a covered zidane point only while some hook handles that step under the rienda name alone', () => {
    expect(planBridge([{ name: 'guard', points: ['beforeToolExecute', 'afterRun'] }])).toEqual({
      withheld: new Set(['tool:gate', 'agent:done']),
      warnings: [],
    })
    expect(planBridge([{ name: 'zgate', points: ['tool:gate'] }, { name: 'turns', points: ['turn:after'] }])).toEqual({ withheld: new Set(), warnings: [] })
    expect(planBridge([{ name: 'both', points: ['beforeToolExecute', 'tool:gate'] }]).withheld.size).toBe(0)
    const mixed = planBridge([
      { name: 'shout', points: ['afterToolExecute'] },
      { name: 'z1', points: ['tool:transform'] },
      { name: 'z2', points: ['tool:transform'] },
    ])
    expect(mixed.withheld).toEqual(new Set(['tool:transform']))
    expect(mixed.warnings).toEqual([expect.stringMatching(/^hooks 'z1', 'z2' handle tool:transform, which does not run in this agent: 'shout' handles the same step as afterToolExecute only/)])
  })

  it('withholds every covered point when the exports are unknown (hookd not reached)', () => {
    expect(planBridge(undefined).withheld).toEqual(new Set(['tool:gate', 'tool:transform', 'system:transform', 'agent:start', 'agent:done']))
  })
})
