/**
 * Capability policy, enforced in the sidecar before a call leaves the sandbox. A refusal becomes a
 * catchable error inside the hook (err.code 'denied') whose message names the capability, what was
 * asked and why: "ctx.file.read('../secrets') refused: the path leads outside the workdir".
 *
 * File confinement here is lexical; only the host can follow symbolic links, and its default handlers
 * (src/host/capabilities.ts) check real paths again. Whatever the policy allows, writes where
 * something outside the sandbox runs what it finds, and reads of hookd's token and state, are refused
 * (src/protocol/protected-paths.ts).
 */
import { isAbsolute, join, normalize, sep } from 'node:path'
import type { FileAccess } from '../../protocol/wire.js'
import { type CapabilityArgs, type CapabilityName, originOf, quoted } from '../../protocol/capabilities.js'
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

function fileNeed(name: CapabilityName): FileNeed | undefined {
  // Appending changes the file as much as writing it does.
  if (name === 'file.write' || name === 'file.append') return 'write'
  if (name.startsWith('file.')) return 'read'
  return undefined
}

/**
 * Why the policy refuses this call, or undefined when it may go to the host. With `place`, protected
 * names match on the whole path and the roots are protected too; without it (a tenant's ceiling),
 * names match on the path the hook gave.
 */
export function refusal<N extends CapabilityName>(
  policy: SessionPolicy,
  name: N,
  args: CapabilityArgs<N>,
  place?: FilePlace,
): string | undefined {
  const need = fileNeed(name)
  if (need) {
    const path = (args as [string, ...unknown[]])[0]
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
  if (name === 'http.fetch') {
    const url = (args as [string])[0]
    const asked = `ctx.http.fetch(${quoted(url)}) refused`
    const origin = originOf(url)
    if (!origin) return `${asked}: only absolute http:// and https:// URLs can be fetched`
    if (!policy.httpOrigins.includes(origin)) {
      const allowed = policy.httpOrigins.length ? policy.httpOrigins.join(', ') : 'none'
      return `${asked}: origin ${origin} is not allowed (allowed origins: ${allowed})`
    }
    return undefined
  }
  if (name === 'confirm' && !policy.confirm) {
    const [message] = args as [{ title: string }]
    return `ctx.confirm({ title: ${quoted(message.title)} }) refused: this session does not allow ctx.confirm`
  }
  return undefined
}
