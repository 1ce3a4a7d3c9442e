/**
 * types/hook.d.ts (the `hookd-sandbox/hook` types hook authors use) against the catalogs it mirrors: the
 * point catalog (src/protocol/points/points.ts) and the capability records (src/protocol/capabilities.ts): a
 * record without its ctx function, or a ctx function without its record, does not compile.
 * The checks are types: `tsc -p tsconfig.json` (run by `make test`) fails when the two drift apart.
 */
import { describe, expect, expectTypeOf, it } from 'vitest'
import type { z } from 'zod'
import type {
  Answer,
  CapabilityErrorCode,
  Ctx,
  FetchResponse,
  Hook,
  ModelRequest,
  ModelResponse,
  PointName as HookPointName,
  Points as HookPoints,
  RunEnd,
  RunStart,
  ToolCall,
  ToolResult,
} from 'hookd-sandbox/hook'
import type { CAPABILITIES, CAPABILITY_ERROR_CODES, CapabilityArgs, CapabilityErrorCode as SidecarErrorCode, CapabilityName, CapabilityValue, FetchResult } from '../../src/protocol/capabilities.js'
import { type PointSpec, type StepPointName as PointName, stepPoints } from '../../src/protocol/points/points.js'

type Points = typeof stepPoints

/** The fields a point lets a hook return, from the catalog. */
type CatalogFields<N extends PointName> = Points[N] extends PointSpec<infer _P, infer _S, infer F, infer _O> ? F : never
/** What the sidecar parses from the host's payload, without zod's loose index signature. */
type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] }
type Payload<N extends PointName> = Known<z.output<Points[N]['payload']>>
/** A declared return type with `null` (keep the current value) taken out of each field. */
type Declared<N extends HookPointName> = { [K in keyof HookPoints[N]['returns']]-?: NonNullable<HookPoints[N]['returns'][K]> }

describe('hookd-sandbox/hook mirrors the point catalog', () => {
  it('declares exactly the catalog points', () => {
    expectTypeOf<HookPointName>().toEqualTypeOf<PointName>()
    expectTypeOf<keyof Hook>().toEqualTypeOf<PointName>()
  })

  it('declares what each handler receives', () => {
    expectTypeOf<Payload<'beforeRun'>>().toExtend<RunStart>()
    expectTypeOf<keyof Payload<'beforeRun'>>().toEqualTypeOf<keyof RunStart>()
    expectTypeOf<Payload<'afterRun'>>().toExtend<RunEnd>()
    expectTypeOf<RunEnd['reason']>().toEqualTypeOf<Payload<'afterRun'>['reason']>()
    expectTypeOf<Payload<'beforeModelRequest'>>().toExtend<ModelRequest>()
    expectTypeOf<keyof Payload<'beforeModelRequest'>>().toEqualTypeOf<keyof ModelRequest>()
    expectTypeOf<Payload<'afterModelResponse'>>().toExtend<ModelResponse>()
    expectTypeOf<keyof Payload<'afterModelResponse'>>().toEqualTypeOf<keyof ModelResponse>()
    // beforeToolExecute's handler gets the call as the host sent it (the catalog's payload input).
    expectTypeOf<Known<z.input<Points['beforeToolExecute']['payload']>>>().toExtend<ToolCall>()
    expectTypeOf<keyof Known<z.input<Points['beforeToolExecute']['payload']>>>().toEqualTypeOf<keyof ToolCall>()
    expectTypeOf<Payload<'afterToolExecute'>['call']>().toExtend<ToolCall>()
    expectTypeOf<Payload<'afterToolExecute'>['result']>().toExtend<ToolResult>()
    expectTypeOf<keyof Payload<'afterToolExecute'>['result']>().toEqualTypeOf<keyof ToolResult>()
    expectTypeOf<HookPoints['afterToolExecute']['args']>().toEqualTypeOf<[call: ToolCall, result: ToolResult]>()
  })

  it('declares exactly the fields each point accepts, with their types', () => {
    expectTypeOf<Declared<'beforeModelRequest'>>().toEqualTypeOf<CatalogFields<'beforeModelRequest'>>()
    expectTypeOf<Declared<'afterModelResponse'>>().toEqualTypeOf<CatalogFields<'afterModelResponse'>>()
    expectTypeOf<Declared<'beforeToolExecute'>>().toEqualTypeOf<CatalogFields<'beforeToolExecute'>>()
    expectTypeOf<Declared<'afterToolExecute'>>().toEqualTypeOf<CatalogFields<'afterToolExecute'>>()
    expectTypeOf<HookPoints['beforeRun']['returns']>().toEqualTypeOf<void>()
    expectTypeOf<HookPoints['afterRun']['returns']>().toEqualTypeOf<void>()
  })

  it('names the same fields as the catalog at run time (points that take no fields included)', () => {
    // The compiler holds this table to the declarations (no key missing, none extra); the assertion
    // holds it to the catalog's own field lists.
    const declared: { [P in PointName]: { [K in keyof HookPoints[P]['returns']]-?: true } } = {
      beforeRun: {},
      afterRun: {},
      beforeModelRequest: { system: true },
      afterModelResponse: { text: true, thinking: true },
      beforeToolExecute: { allow: true, reason: true, arguments: true, defer: true },
      afterToolExecute: { text: true, isError: true },
    }
    for (const name of Object.keys(stepPoints) as PointName[]) {
      expect(Object.keys(declared[name]).sort(), name).toEqual(Object.keys(stepPoints[name].fields).sort())
    }
    expect(Object.keys(declared).sort()).toEqual(Object.keys(stepPoints).sort())
  })
})

/** The member of `T` at a dotted path: `At<Ctx, 'file.read'>` is `Ctx['file']['read']`. */
type At<T, P extends string> = P extends `${infer Head}.${infer Rest}` ? (Head extends keyof T ? At<T[Head], Rest> : never) : P extends keyof T ? T[P] : never
/** The dotted paths of every function in `T` (its members', recursively). */
type FunctionPaths<T, Prefix extends string = ''> = {
  [K in keyof T & string]: T[K] extends (...args: never[]) => unknown ? `${Prefix}${K}` : T[K] extends object ? FunctionPaths<T[K], `${Prefix}${K}.`> : never
}[keyof T & string]
/** What a record's ctx function returns to the hook. */
type Returned<N extends CapabilityName> = ReturnType<Extract<At<Ctx, N>, (...args: never[]) => unknown>>
/** For each record: true when hook.d.ts declares ctx's function at its path taking its arguments and returning its value. */
type Declares = {
  [N in CapabilityName]: At<Ctx, N> extends (...args: infer A) => unknown
    ? [A] extends [Partial<z.input<(typeof CAPABILITIES)[N]['args']>>]
      ? [Returned<N>] extends [CapabilityValue<N>]
        ? [CapabilityValue<N>] extends [Returned<N>]
          ? true
          : `ctx.${N} returns less than its record's answer`
        : `ctx.${N} returns more than its record's answer`
      : `ctx.${N} takes arguments its record does not accept`
    : `ctx.${N} is not declared`
}

describe('hookd-sandbox/hook mirrors the capability records', () => {
  it('declares a ctx function at every record\'s path, and no other function but ctx.log', () => {
    expectTypeOf<Declares>().toEqualTypeOf<{ [N in CapabilityName]: true }>()
    expectTypeOf<FunctionPaths<Ctx>>().toEqualTypeOf<CapabilityName | 'log'>()
  })

  it('takes the arguments the sidecar accepts', () => {
    expectTypeOf<Parameters<Ctx['file']['read']>>().toExtend<CapabilityArgs<'file.read'>>()
    expectTypeOf<Parameters<Ctx['file']['write']>>().toExtend<CapabilityArgs<'file.write'>>()
    expectTypeOf<Parameters<Ctx['file']['append']>>().toExtend<CapabilityArgs<'file.append'>>()
    expectTypeOf<Parameters<Ctx['file']['exists']>>().toExtend<CapabilityArgs<'file.exists'>>()
    expectTypeOf<Parameters<Ctx['confirm']>>().toExtend<CapabilityArgs<'confirm'>>()
    expectTypeOf<Parameters<Ctx['notify']>>().toExtend<CapabilityArgs<'notify'>>()
    expectTypeOf<Required<Parameters<Ctx['http']['fetch']>>[1]>().toExtend<NonNullable<CapabilityArgs<'http.fetch'>[1]>>()
    expectTypeOf<Parameters<Ctx['http']['fetch']>[0]>().toEqualTypeOf<string>()
  })

  it('returns what the host answers', () => {
    expectTypeOf<ReturnType<Ctx['confirm']>>().toEqualTypeOf<boolean>()
    expectTypeOf<ReturnType<Ctx['notify']>>().toEqualTypeOf<void>()
    expectTypeOf<ReturnType<Ctx['file']['read']>>().toEqualTypeOf<string>()
    expectTypeOf<ReturnType<Ctx['file']['write']>>().toEqualTypeOf<void>()
    expectTypeOf<ReturnType<Ctx['file']['append']>>().toEqualTypeOf<void>()
    expectTypeOf<ReturnType<Ctx['file']['exists']>>().toEqualTypeOf<boolean>()
    expectTypeOf<ReturnType<Ctx['file']['list']>>().toEqualTypeOf<string[]>()
    expectTypeOf<FetchResponse>().toEqualTypeOf<FetchResult>()
  })

  it('declares every error code the sidecar uses', () => {
    type Codes = (typeof CAPABILITY_ERROR_CODES)[keyof typeof CAPABILITY_ERROR_CODES]
    expectTypeOf<CapabilityErrorCode>().toEqualTypeOf<Codes>()
    expectTypeOf<CapabilityErrorCode>().toEqualTypeOf<SidecarErrorCode>()
  })
})

describe('hookd-sandbox/hook refuses other agents\' answers', () => {
  it("does not compile a handler that answers like a Claude Code hook", () => {
    const hook: Hook = {
      // @ts-expect-error Claude Code's decision: hookd's refusal is { allow: false, reason }
      beforeToolExecute: () => ({ decision: 'block', reason: 'no' }),
      // @ts-expect-error Claude Code's continue: a hookd hook refuses the tool call instead
      afterToolExecute: () => ({ continue: false }),
      beforeModelRequest: (ctx, request) => ({ system: `${request.system}!` }),
    }
    expect(Object.keys(hook)).toEqual(['beforeToolExecute', 'afterToolExecute', 'beforeModelRequest'])
  })
})

describe('a hook author writes', () => {
  it('the seed guard, sync and async handlers, with a typed config', () => {
    const guard: Hook = {
      beforeToolExecute(ctx, call) {
        if (call.name === 'shell' && /\brm\s+-rf\b/.test(String(call.arguments.command ?? ''))) {
          if (!ctx.confirm({ title: 'Dangerous command', body: String(call.arguments.command) })) {
            return { allow: false, reason: 'refused by the user' }
          }
        }
      },
      afterRun(ctx, event) {
        ctx.notify({ title: 'rienda', body: 'run finished: ' + event.reason })
      },
      async afterToolExecute(ctx, call, result) {
        const seen = ctx.file.exists('seen.txt') ? ctx.file.read('seen.txt') : ''
        ctx.file.write('seen.txt', seen + call.id + '\n')
        return { text: result.text, isError: null }
      },
    }
    const configured: Hook<{ suffix: string }> = {
      beforeModelRequest: (ctx, request) => ({ system: request.system + ctx.config.suffix }),
    }
    expectTypeOf(guard.beforeToolExecute).toEqualTypeOf<Hook['beforeToolExecute']>()
    expectTypeOf(configured.beforeModelRequest).parameter(0).toEqualTypeOf<Ctx<{ suffix: string }>>()
    expectTypeOf<Answer<{ system?: string | null }>>().toExtend<unknown>()

    // Wrong names and wrong fields do not compile.
    // @ts-expect-error: not a point
    const typo: Hook = { beforeToolExecution: () => undefined }
    // @ts-expect-error: beforeToolExecute cannot return `system`
    const wrong: Hook = { beforeToolExecute: () => ({ system: 'x' }) }
    // @ts-expect-error: allow is a boolean
    const mistyped: Hook = { beforeToolExecute: () => ({ allow: 'no' }) }
    // @ts-expect-error: ctx.file has no delete
    const missing: Hook = { beforeRun: (ctx) => void ctx.file.delete('x') }
    void [typo, wrong, mistyped, missing]
  })
})
