/**
 * Whether a hook's new "permissions" ask for more than its locked ones. Until the least-privilege
 * permissions schema lands (the least-privilege branch's `widenedPermissions`), hookd compares the
 * two values as JSON, and fails toward asking: a new version is let through without approval only when
 * it is plainly narrower (or equal), which is when every array of it holds only items its locked array
 * holds, every object only keys its locked object has (each of them narrower in turn), and every other
 * value is equal. Anything else (a key that is new, a value that changed kind, permissions that appear
 * or disappear) is held for `hookd trust`.
 */
import { canonicalJson } from './canonical-json.js'

/** `locked` and `next`: canonical JSON text of hook.json "permissions", undefined when it has none. */
export function asksForMore(locked: string | undefined, next: string | undefined): boolean {
  if (locked === next) return false
  if (locked === undefined || next === undefined) return true
  let a: unknown
  let b: unknown
  try {
    a = JSON.parse(locked)
    b = JSON.parse(next)
  } catch {
    return true
  }
  return !narrower(b, a, 0)
}

/** True when `next` asks for nothing `locked` does not allow (bounded: past 32 levels, not plainly). */
function narrower(next: unknown, locked: unknown, depth: number): boolean {
  if (depth > 32) return false
  if (Array.isArray(next) && Array.isArray(locked)) {
    const allowed = new Set(locked.map((v) => canonicalJson(v)))
    return next.every((v) => allowed.has(canonicalJson(v)))
  }
  if (isObject(next) && isObject(locked)) {
    return Object.entries(next).every(([k, v]) => Object.hasOwn(locked, k) && narrower(v, locked[k], depth + 1))
  }
  return canonicalJson(next) === canonicalJson(locked)
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v)
}
