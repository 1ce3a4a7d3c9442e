/**
 * The host <-> sidecar wire (src/protocol/wire.ts) in memory: every enum table against the proto's own
 * enum, and each message written the way a side writes it, pushed through the real protobuf encoding
 * of the HookExecutor service (serialize, then deserialize as the peer's grpc-js does) and read back
 * with the same definition, as it would arrive. No socket, no sidecar.
 */
import { describe, expect, it } from 'vitest'
import type { Diagnostic } from '../../src/protocol/diagnostic.js'
import { protoEnum } from '../../src/protocol/proto-enum.js'
import {
  FILE_ACCESS,
  type HookInfoData,
  type HostFrame,
  PROTO_ENUMS,
  type PointResultData,
  type SidecarFrame,
  diagnosticToWire,
  hookExecutorService,
  hookInfoToWire,
  hostMessageWire,
  invokeResponseWire,
  listHooksResponseWire,
  packageDefinition,
  pointResultToWire,
  sidecarMessageWire,
} from '../../src/protocol/wire.js'

const service = hookExecutorService()
/** What the sidecar receives when a host writes `frame` on the Session stream. */
const fromHost = (frame: HostFrame): unknown => service.Session?.requestDeserialize(service.Session.requestSerialize(frame))
/** What a host receives when the sidecar writes `frame`. */
const toHost = (frame: SidecarFrame): unknown => service.Session?.responseDeserialize(service.Session.responseSerialize(frame))

const diagnostic: Diagnostic = { hook: 'guard', point: 'beforeToolExecute', kind: 'invalid-result', message: 'allow must be a boolean', file: 'guard/index.js', line: 4, version: 'v2' }
const bare: Diagnostic = { hook: '', point: '', kind: 'quota', message: 'over the quota' }

describe('the enums', () => {
  it.each(Object.entries(PROTO_ENUMS))('%s names exactly the values of the proto\'s enum, in its order, and writes each back as read', (name, table) => {
    const def = packageDefinition()[`hookd.v1.${name}`] as { type: { value: Array<{ name: string; number: number }> } }
    const proto = [...def.type.value].sort((a, b) => a.number - b.number).map((v) => v.name)
    // An UNSPECIFIED zero is in the table only when it reads as a value (FileAccess: read-write).
    const unspecified = proto[0]?.endsWith('_UNSPECIFIED') ? proto[0] : undefined
    expect(table.names).toEqual(proto.filter((n) => n !== unspecified || table.names.includes(n)))
    const values = proto.filter((n) => n !== unspecified)
    expect(values.map((n) => table.toWire(table.fromWire(n) as never))).toEqual(values)
  })

  it('lists the same file accesses for hookd\'s own files as the proto enum holds', () => {
    expect([...FILE_ACCESS].sort()).toEqual([...PROTO_ENUMS.FileAccess.values].sort())
  })

  it('reads a name it does not know as the value a reader can act on, or refuses it where hookd must not guess', () => {
    const { DiagnosticKind, HookOutcome, HookStatus, AskOutcome, AskOutcomeBy, FileAccess, OnError } = PROTO_ENUMS
    expect(['LOAD', 'DIAGNOSTIC_KIND_UNSPECIFIED', 'A_NEWER_KIND'].map(DiagnosticKind.fromWire)).toEqual(['load', 'internal', 'internal'])
    expect(['HOOK_OUTCOME_NOT_RUN', 'HOOK_OUTCOME_UNSPECIFIED'].map(HookOutcome.fromWire)).toEqual(['not-run', 'failed'])
    expect(['HOOK_STATUS_STALE', 'HOOK_STATUS_UNSPECIFIED'].map(HookStatus.fromWire)).toEqual(['stale', 'broken'])
    expect(['ASK_OUTCOME_DENIED', 'ASK_OUTCOME_UNSPECIFIED'].map(AskOutcome.fromWire)).toEqual(['denied', undefined])
    expect(AskOutcome.toWire(undefined)).toBe('ASK_OUTCOME_UNSPECIFIED')
    expect(['ASK_OUTCOME_BY_HOST', 'ASK_OUTCOME_BY_SOMEONE'].map(AskOutcomeBy.fromWire)).toEqual(['host', 'agent'])
    expect(FileAccess.fromWire('FILE_ACCESS_UNSPECIFIED')).toBe('read-write')
    expect(FileAccess.toWire('read-write')).toBe('FILE_ACCESS_READ_WRITE')
    expect(OnError.toWire('refuse-unless-skip')).toBe('ON_ERROR_REFUSE_UNLESS_SKIP')
    const refused = FileAccess.field.safeParse('FILE_ACCESS_ALL')
    expect(refused.success ? refused.data : refused.error.issues[0]?.message).toBe(
      'Invalid option: expected one of "FILE_ACCESS_UNSPECIFIED"|"FILE_ACCESS_NONE"|"FILE_ACCESS_READ"|"FILE_ACCESS_READ_WRITE"',
    )
    expect(OnError.field.safeParse(3).success).toBe(false)
  })

  it('builds a table from values alone: each name is the prefix and the value upper-cased', () => {
    const table = protoEnum('COLOUR_', ['dark-red', 'blue'], { unknown: 'blue' })
    expect([table.names, table.toWire('dark-red'), table.fromWire('COLOUR_DARK_RED'), table.fromWire('COLOUR_GREEN')]).toEqual([['COLOUR_DARK_RED', 'COLOUR_BLUE'], 'COLOUR_DARK_RED', 'dark-red', 'blue'])
    expect(table.field.encode('dark-red')).toBe('COLOUR_DARK_RED')
  })
})

describe('the sidecar\'s messages, through protobuf to the host', () => {
  it('a point result: its value as JSON, diagnostics with their unset fields left out, traces with their auto-confirms', () => {
    const result: PointResultData = {
      seq: 7,
      point: 'beforeToolExecute',
      result: { allow: false, reason: 'no' },
      diagnostics: [diagnostic, bare],
      trace: [
        { hook: 'guard', version: 'v2', outcome: 'refused', durationUs: 1200, cpuUs: 300, autoConfirms: [{ title: 'Sure?', body: '', approved: true }] },
        { hook: 'audit', version: 'v1', outcome: 'not-run', durationUs: 0, cpuUs: 0 },
      ],
      durationUs: 1500,
      decisionId: 'd-1',
    }
    const read = sidecarMessageWire.parse(toHost({ result: pointResultToWire(result) }))
    expect(read).toEqual({
      kind: 'result',
      result: {
        ...result,
        result: Buffer.from('{"allow":false,"reason":"no"}'),
        // Read as [] when none: a host sees the field whatever the sidecar's version.
        trace: [result.trace[0], { ...result.trace[1], autoConfirms: [] }],
      },
    })
    // A result without a decision id yet, and without a value, is sent as null with an empty id.
    const early = sidecarMessageWire.parse(toHost({ closed: { result: pointResultToWire({ ...result, result: undefined, decisionId: undefined } as unknown as PointResultData) } }))
    expect(early.kind === 'closed' && early.closed.result ? [early.closed.result.result.toString(), early.closed.result.decisionId] : early).toEqual(['null', ''])
  })

  it('a diagnostic, a log line, a capability call, hook infos, an outcome answer', () => {
    expect(sidecarMessageWire.parse(toHost({ diagnostic: diagnosticToWire(bare) }))).toEqual({ kind: 'diagnostic', diagnostic: bare })
    const log = { seq: 2, hook: 'guard', point: 'afterRun', message: 'hello', timeMs: 1_700_000_000_000 }
    expect(sidecarMessageWire.parse(toHost({ log }))).toEqual({ kind: 'log', log })
    const call = { id: 3, seq: 2, hook: 'guard', point: 'afterRun', capability: 'file.read', args: Buffer.from('["a.txt"]') }
    expect(sidecarMessageWire.parse(toHost({ capabilityCall: call }))).toEqual({ kind: 'capabilityCall', capabilityCall: call })
    const hooks: HookInfoData[] = [
      { name: 'guard', version: 'v2', points: ['beforeToolExecute'], status: 'ready', loadedAtMs: 5, description: 'Refuses rm -rf' },
      { name: 'broken', version: '', points: [], status: 'broken', loadedAtMs: 0, lastError: diagnostic },
    ]
    const opened = { sessionId: 's', hooks: hooks.map(hookInfoToWire), sidecarVersion: '1.0.0', protocolVersion: 1, askOutcomes: true }
    expect(sidecarMessageWire.parse(toHost({ opened }))).toEqual({ kind: 'opened', opened: { ...opened, hooks } })
    const listed = service.ListHooks?.responseDeserialize(service.ListHooks.responseSerialize({ hooks: hooks.map(hookInfoToWire) }))
    expect(listHooksResponseWire.parse(listed)).toEqual({ hooks })
    const answer = { decisionId: 'd-1', recorded: false, message: 'already settled' }
    expect(sidecarMessageWire.parse(toHost({ outcomeAnswer: answer }))).toEqual({ kind: 'outcomeAnswer', outcomeAnswer: answer })
  })

  it('an Invoke response', () => {
    const result: PointResultData = { seq: 1, point: 'afterRun', result: null, diagnostics: [], trace: [], durationUs: 10, decisionId: 'd-2' }
    const response = { result: pointResultToWire(result), logs: [], notifications: [Buffer.from('{"title":"hi"}')] }
    const read = invokeResponseWire.parse(service.Invoke?.responseDeserialize(service.Invoke.responseSerialize(response)))
    expect(read).toEqual({ ...response, result: { ...result, result: Buffer.from('null') } })
  })
})

describe('the host\'s messages, through protobuf to the sidecar', () => {
  it('an open: enums as hookd\'s values, an older host\'s missing onError as the default', () => {
    const open = {
      protocolVersion: 1,
      sessionId: 'run-1',
      agentId: 'careful',
      modelId: 'claude',
      hooks: ['guard'],
      workdir: '/home/me/proj',
      interactive: true,
      autoApprove: false,
      policy: { file: PROTO_ENUMS.FileAccess.toWire('read'), httpOrigins: ['https://example.com'], env: ['TEAM'], denyConfirm: true },
      env: { TEAM: 'infra' },
      onError: PROTO_ENUMS.OnError.toWire('refuse-unless-skip'),
    }
    expect(hostMessageWire.parse(fromHost({ open }))).toEqual({ kind: 'open', open: { ...open, policy: { ...open.policy, file: 'read' }, onError: 'refuse-unless-skip' } })
    const { onError: _, ...older } = open
    expect(hostMessageWire.parse({ kind: 'open', open: older })).toMatchObject({ open: { onError: 'default' } })
  })

  it('capability answers, an outcome report, call, cancel and close', () => {
    expect(hostMessageWire.parse(fromHost({ capabilityResult: { id: 4, value: Buffer.from('true'), deferred: true } }))).toEqual({
      kind: 'capabilityResult',
      capabilityResult: { id: 4, outcome: 'value', value: Buffer.from('true'), deferred: true },
    })
    expect(hostMessageWire.parse(fromHost({ capabilityResult: { id: 5, error: { code: 'denied', message: 'no' } } }))).toMatchObject({
      capabilityResult: { id: 5, outcome: 'error', error: { code: 'denied', message: 'no' }, deferred: false },
    })
    const outcome = { decisionId: 'd-1', outcome: PROTO_ENUMS.AskOutcome.toWire('denied'), via: 'PostToolUse', by: PROTO_ENUMS.AskOutcomeBy.toWire('host') }
    expect(hostMessageWire.parse(fromHost({ outcome }))).toEqual({ kind: 'outcome', outcome: { decisionId: 'd-1', outcome: 'denied', via: 'PostToolUse', by: 'host' } })
    const unspecified = hostMessageWire.parse(fromHost({ outcome: { ...outcome, outcome: 'ASK_OUTCOME_UNSPECIFIED' } }))
    expect(unspecified.kind === 'outcome' && unspecified.outcome.outcome).toBeUndefined()
    const payload = Buffer.from('{"reason":"end_turn"}')
    expect(hostMessageWire.parse(fromHost({ call: { seq: 9, point: 'afterRun', payload } }))).toEqual({ kind: 'call', call: { seq: 9, point: 'afterRun', payload } })
    expect(hostMessageWire.parse(fromHost({ cancel: { seq: 9 } }))).toEqual({ kind: 'cancel', cancel: { seq: 9 } })
    expect(hostMessageWire.parse(fromHost({ close: { reason: 'interrupted' } }))).toEqual({ kind: 'close', close: { reason: 'interrupted' } })
  })
})
