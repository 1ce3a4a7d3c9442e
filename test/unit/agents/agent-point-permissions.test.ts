/**
 * Declared permissions at the agents' own points (src/protocol/points/agent-points.ts), judged by the
 * chain's permission check (src/sidecar/chain/permitted-changes.ts): a permission dialog's `allow`
 * approves what the agent would ask its person, which a hook may do only when it declares
 * `"approve"`; a `deny` there is a refusal. Hostile: a hook that may only refuse must not be able to
 * approve a dialog, and a hook that may only add context must not be able to block a compaction.
 */
import { describe, expect, it } from 'vitest'
import { type HookPermissions, parsePermissions } from '../../../src/protocol/hook-permissions.js'
import { type AnyPoint, getPoint } from '../../../src/protocol/points/points.js'
import { permittedChanges } from '../../../src/sidecar/chain/permitted-changes.js'

function granted(block: unknown): HookPermissions {
  const parsed = parsePermissions(block)
  if (!parsed.ok) throw new Error(parsed.error.message)
  return parsed.permissions
}

const dialog = getPoint('permission:request') as AnyPoint
const dialogState = dialog.payload.parse({ id: 'toolu_1', name: 'shell', arguments: { command: 'rm -rf victim' }, tool: 'Bash' })

describe('permission:request', () => {
  it('a hook that may only refuse cannot approve the dialog: the allow is dropped, saying what to declare', () => {
    const judged = permittedChanges(dialog, dialogState, { decision: 'allow' }, 'guard', granted({ decide: { refuse: true } }), true)
    expect(judged.kept).toEqual({})
    expect(judged.notes).toEqual(['approved the call for the person, which its hook.json "permissions" do not allow; dropped (to allow it, set "decide": {"approve": true})'])
  })

  it('the same hook may deny, with its reason', () => {
    const judged = permittedChanges(dialog, dialogState, { decision: 'deny', reason: 'no rm -rf' }, 'guard', granted({ decide: { refuse: true } }), true)
    expect(judged).toEqual({ kept: { decision: 'deny', reason: 'no rm -rf' }, notes: [] })
  })

  it('a hook that may approve, and not refuse, cannot deny', () => {
    const judged = permittedChanges(dialog, dialogState, { decision: 'deny' }, 'approver', granted({ decide: { approve: true } }), true)
    expect(judged.kept).toEqual({})
    expect(judged.notes).toEqual(['refused the call, which its hook.json "permissions" do not allow; dropped (to allow it, set "decide": {"refuse": true})'])
  })

  it('"approve" lets the allow through', () => {
    const judged = permittedChanges(dialog, dialogState, { decision: 'allow' }, 'approver', granted({ decide: { approve: true } }), true)
    expect(judged).toEqual({ kept: { decision: 'allow' }, notes: [] })
  })
})

describe('the other agent points', () => {
  it('a hook that may only add context cannot block a compaction', () => {
    const point = getPoint('compact:before') as AnyPoint
    const state = point.payload.parse({ trigger: 'auto' })
    const judged = permittedChanges(point, state, { block: true, reason: 'keep it all' }, 'notes', granted({ decide: { addContext: true } }), false)
    expect(judged.kept).toEqual({})
    expect(judged.notes).toEqual(['refused the call, which its hook.json "permissions" do not allow; dropped (to allow it, set "decide": {"refuse": true})'])
  })

  it("a subagent's context is adding context", () => {
    const point = getPoint('subagent:start') as AnyPoint
    const state = point.payload.parse({ subagent: { id: 'a1', type: 'Explore' } })
    const judged = permittedChanges(point, state, { context: 'read CONTRIBUTING.md first' }, 'notes', granted({ decide: { addContext: true } }), false)
    expect(judged).toEqual({ kept: { context: 'read CONTRIBUTING.md first' }, notes: [] })
  })
})
