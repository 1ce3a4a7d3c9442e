/**
 * Every failure an invocation can end with, worded once, for sandboxed and remote hooks alike (compare
 * piscina's errors.ts). The prelude's own texts live inside the isolate (worker/isolate/prelude.js).
 */
import type { Limits } from '../limits.js'

export const FAILURE_TEXT = {
  // Limits, both kinds of hook
  cpu: (l: Limits) => `used more than its CPU time limit of ${l.cpuMs} ms and was stopped`,
  wall: (l: Limits) => `ran longer than its wall-time limit of ${l.wallMs} ms (time waiting on the host is not counted) and was stopped`,
  memory: (l: Limits) => `ran out of its memory limit of ${l.memoryMb} MB and was stopped`,
  tooLarge: (l: Limits, bytes: number) => `the returned value is ${bytes} bytes of JSON, over the limit of ${l.resultBytes} bytes`,
  capabilityCalls: (l: Limits, capability: string) => `ctx.${capability}: over the limit of ${l.capabilityCalls} capability calls per invocation`,
  capabilityArgs: (l: Limits, capability: string, bytes: number) =>
    `ctx.${capability}: its arguments are ${bytes} bytes of JSON, over the limit of ${l.resultBytes} bytes`,
  capabilityBytesTotal: (l: Limits, capability: string) =>
    `ctx.${capability}: this invocation's capability calls would carry more than ${l.capabilityBytes} bytes of arguments in all (the limit); this call and the rest are refused`,
  logTruncated: (l: Limits) => `[hookd: this invocation's ctx.log output passed the limit of ${l.logBytes} bytes; the rest was dropped]`,
  logLinesTruncated: (l: Limits) => `[hookd: this invocation's ctx.log output passed the limit of ${l.logLines} lines; the rest was dropped]`,
  parked: (capability: string, maxMb: number, parkedMb: number, holdsMb?: number) =>
    holdsMb === undefined
      ? `ctx.${capability}: invocations that wait on their host already hold ${parkedMb} MB in this sandbox worker, and at most ${maxMb} MB may wait at once; try again when the host has answered`
      : `ctx.${capability}: this invocation holds ${holdsMb} MB (more than its memory limit), invocations that wait on their host already hold ${parkedMb} MB in this sandbox worker, and at most ${maxMb} MB may wait at once; hold less when you call, or try again when the host has answered`,
  cancelled: () => 'the host cancelled the point call; the hook was stopped',
  cancelledBeforeStart: () => 'the host cancelled the point call before the hook started',
  answered: (capability: string) => `ctx.${capability}: the hook has already answered; nothing more reaches the host`,

  // Sandboxed hooks
  catastrophe: (l: Limits, what: string) =>
    `ran out of memory beyond what V8 can recover from (limit ${l.memoryMb} MB; isolated-vm: ${what}); its sandbox worker is retired and replaced`,
  unhandled: (text: string) => `an unhandled promise rejection: ${text}`,
  topLevel: (text: string) => `the hook's top-level code failed: ${text}`,
  badReply: () => "hookd could not read the sandbox prelude's answer",

  // Remote hooks
  unreachable: (address: string, details: string) =>
    `the remote hook at ${address} could not be reached (${details}); skipped. Start it, or fix "remote" in hook.json`,
  unimplemented: (address: string) =>
    `the server at ${address} does not implement hookd.v1.Hook/Run; serve the Hook service of proto/hookd/v1/hook.proto there`,
  remoteFailed: (details: string) => `the remote hook failed: ${details}`,
  noAnswer: () => 'the remote hook ended its Run stream without an answer; send exactly one HookAnswer',
  tooBig: (details: string) => `the remote hook sent a message over hookd's size limit (${details})`,
  protocol: (problem: string) => `the remote hook broke the Run protocol: ${problem}; it was cancelled`,
} as const
