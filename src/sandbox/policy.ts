/**
 * Capability policy, enforced in the sidecar before a call leaves the sandbox. A refusal becomes a
 * catchable error inside the hook whose message names the capability, what was asked and why.
 */
import { isAbsolute, normalize, sep } from 'node:path'
import type { FileAccess } from '../protocol/wire.js'
import type { CapabilityArgs, CapabilityName } from '../protocol/capabilities.js'

export interface SessionPolicy {
  file: FileAccess
  /** Normalised origins, e.g. "http://127.0.0.1:8080". */
  httpOrigins: string[]
  env: string[]
  confirm: boolean
}

export const DEFAULT_POLICY: SessionPolicy = { file: 'read-write', httpOrigins: [], env: [], confirm: true }

/** "HTTP://Example.com:80/x" -> "http://example.com"; undefined when not an http(s) URL. */
export function originOf(url: string): string | undefined {
  try {
    const u = new URL(url)
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined
    return u.origin
  } catch {
    return undefined
  }
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

function fileNeed(name: CapabilityName): 'read' | 'write' | undefined {
  if (name === 'file.write') return 'write'
  if (name.startsWith('file.')) return 'read'
  return undefined
}

/** Why the policy refuses this call, or undefined when it may go to the host. */
export function refusal<N extends CapabilityName>(
  policy: SessionPolicy,
  name: N,
  args: CapabilityArgs<N>,
): string | undefined {
  const need = fileNeed(name)
  if (need) {
    const path = (args as [string, ...unknown[]])[0]
    if (policy.file === 'none') return `ctx.${name}('${path}') refused: this session allows no file access`
    if (need === 'write' && policy.file === 'read') {
      return `ctx.${name}('${path}') refused: this session allows reading files only`
    }
    const confined = confinedPath(path)
    if (!confined.ok) return `ctx.${name}('${path}') refused: ${confined.why}`
    return undefined
  }
  if (name === 'http.fetch') {
    const url = (args as [string])[0]
    const origin = originOf(url)
    if (!origin) return `ctx.http.fetch('${url}') refused: only absolute http:// and https:// URLs can be fetched`
    if (!policy.httpOrigins.includes(origin)) {
      const allowed = policy.httpOrigins.length ? policy.httpOrigins.join(', ') : 'none'
      return `ctx.http.fetch('${url}') refused: origin ${origin} is not allowed (allowed origins: ${allowed})`
    }
    return undefined
  }
  if (name === 'confirm' && !policy.confirm) return 'ctx.confirm refused: this session does not allow confirm'
  return undefined
}
