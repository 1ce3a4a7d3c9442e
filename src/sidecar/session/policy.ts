/**
 * Capability policy, enforced in the sidecar before a call leaves the sandbox. Every capability record
 * (src/protocol/capabilities.ts) names a policy class, and each class has one rule here; a call whose
 * class has no rule, or that names no record, is refused. A refusal becomes a catchable error inside
 * the hook (err.code 'denied') whose message names the capability, what was asked and why:
 * "ctx.file.read('../secrets') refused: the path leads outside the workdir".
 *
 * File confinement here is lexical; only the host can follow symbolic links, and its default handlers
 * (src/host/workdir-files.ts) check real paths again. Whatever the policy allows, writes where
 * something outside the sandbox runs what it finds, and reads of hookd's token and state, are refused
 * (src/protocol/protected-paths.ts).
 */
import { isAbsolute, join, normalize, sep } from 'node:path'
import * as z from 'zod'
import type { FileAccess, OpenSessionWire } from '../../protocol/wire.js'
import {
  type CapabilityArgs,
  type CapabilityName,
  type PolicyClass,
  type PolicyClasses,
  capabilityRecord,
  isCapabilityName,
  originOf,
  quoted,
} from '../../protocol/capabilities.js'
import { type FileNeed, type ProtectedRoot, protectedReason, protectionOf } from '../../protocol/protected-paths.js'

export { originOf }

export interface SessionPolicy {
  file: FileAccess
  /** Normalised origins, e.g. "http://127.0.0.1:8080". */
  httpOrigins: string[]
  env: string[]
  confirm: boolean
}

export const DEFAULT_POLICY: SessionPolicy = { file: 'read-write', httpOrigins: [], env: [], confirm: true }

/** The policy a session's open asks for (its origins normalised); DEFAULT_POLICY when it sends none. */
export function sessionPolicy(policy: OpenSessionWire['policy']): SessionPolicy {
  if (!policy) return DEFAULT_POLICY
  return { file: policy.file, httpOrigins: policy.httpOrigins.map((o) => originOf(o) ?? o), env: policy.env, confirm: !policy.denyConfirm }
}

/** Lexical confinement: the host's handler also checks real paths (symlinks). */
export function confinedPath(path: string): { ok: true; path: string } | { ok: false; why: string } {
  if (path.includes('\0')) return { ok: false, why: 'the path contains a NUL byte' }
  if (isAbsolute(path)) return { ok: false, why: 'absolute paths are refused; use a path relative to the workdir' }
  const normal = normalize(path)
  if (normal === '..' || normal.startsWith(`..${sep}`)) {
    return { ok: false, why: 'the path leads outside the workdir' }
  }
  return { ok: true, path: normal }
}

/** Where a session's files are: what the protected paths are matched against. */
export interface FilePlace {
  /** The session's workdir (absolute): names match on the whole path, the workdir's own folders included. */
  workdir: string
  /** Folders and files protected wherever they are: the session's hooks folder, hookd's state folders. */
  roots: readonly ProtectedRoot[]
}

/** One class's rule: what it reads of the arguments (checked again here), and why it refuses, if it does. */
interface Rule<C extends PolicyClass> {
  reads: z.ZodType<PolicyClasses[C]>
  judge(policy: SessionPolicy, name: string, args: PolicyClasses[C], place: FilePlace | undefined): string | undefined
}

const first = <T extends z.ZodType>(schema: T) => z.tuple([schema]).rest(z.unknown())

/** The rules, one per class: a class missing here is a compile error. */
const RULES: { readonly [C in PolicyClass]: Rule<C> } = {
  'file-read': { reads: first(z.string()), judge: (policy, name, [path], place) => fileRefusal(policy, name, path, 'read', place) },
  'file-write': { reads: first(z.string()), judge: (policy, name, [path], place) => fileRefusal(policy, name, path, 'write', place) },
  network: {
    reads: first(z.string()),
    judge: (policy, name, [url]) => {
      const asked = `ctx.${name}(${quoted(url)}) refused`
      const origin = originOf(url)
      if (!origin) return `${asked}: only absolute http:// and https:// URLs can be fetched`
      if (!policy.httpOrigins.includes(origin)) {
        const allowed = policy.httpOrigins.length ? policy.httpOrigins.join(', ') : 'none'
        return `${asked}: origin ${origin} is not allowed (allowed origins: ${allowed})`
      }
      return undefined
    },
  },
  ask: {
    reads: first(z.object({ title: z.string() })),
    judge: (policy, name, [message]) =>
      policy.confirm ? undefined : `ctx.${name}({ title: ${quoted(message.title)} }) refused: this session does not allow ctx.${name}`,
  },
  notify: { reads: z.array(z.unknown()).readonly(), judge: () => undefined },
}

function fileRefusal(policy: SessionPolicy, name: string, path: string, need: FileNeed, place: FilePlace | undefined): string | undefined {
  const asked = `ctx.${name}(${quoted(path)}) refused`
  if (policy.file === 'none') return `${asked}: this session allows no file access`
  if (need === 'write' && policy.file === 'read') return `${asked}: this session allows reading files only`
  const confined = confinedPath(path)
  if (!confined.ok) return `${asked}: ${confined.why}`
  const target = place ? join(place.workdir, confined.path) : confined.path
  const guarded = protectionOf(target, need, place?.roots)
  if (guarded) return `${asked}: ${protectedReason(guarded, need)}`
  return undefined
}

/**
 * Why the policy refuses this call, or undefined when it may go on. With `place`, protected names
 * match on the whole path and the roots are protected too; without it (a tenant's ceiling), names
 * match on the path the hook gave. A name with no record, or a record whose class has no rule, is
 * refused: nothing is allowed by being left out.
 */
export function refusal<N extends CapabilityName>(policy: SessionPolicy, name: N, args: CapabilityArgs<N>, place?: FilePlace): string | undefined {
  if (!isCapabilityName(name)) return `ctx.${quoted(name)} refused: hookd has no capability of that name`
  return judged(capabilityRecord(name).policy, policy, name, args, place)
}

function judged<C extends PolicyClass>(cls: C, policy: SessionPolicy, name: string, args: unknown, place: FilePlace | undefined): string | undefined {
  const rule: Rule<C> | undefined = Object.hasOwn(RULES, cls) ? RULES[cls] : undefined
  if (!rule) return `ctx.${name} refused: hookd has no policy rule for its class '${cls}', and allows nothing it does not judge`
  const read = rule.reads.safeParse(args)
  if (!read.success) return `ctx.${name} refused: its arguments are not what the '${cls}' rule judges`
  return rule.judge(policy, name, read.data, place)
}
