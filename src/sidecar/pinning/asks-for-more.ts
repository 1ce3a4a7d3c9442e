/**
 * What a hook's new "permissions" may do that its locked (or serving) ones may not: the words of
 * widenedPermissions (src/protocol/hook-permissions.ts), empty when nothing more. Both sides are
 * hook.json "permissions" as written, in canonical JSON text (what hookd.lock records), undefined when
 * the hook has none (it may do whatever the session allows, so nothing is wider). Text that does not
 * read as a permissions block (a lock file edited by hand) is held for approval: failing toward asking.
 */
import { type HookPermissions, parsePermissions, widenedPermissions } from '../../protocol/hook-permissions.js'

type Read = { ok: true; permissions: HookPermissions | undefined } | { ok: false }

function read(text: string | undefined): Read {
  if (text === undefined) return { ok: true, permissions: undefined }
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    return { ok: false }
  }
  const parsed = parsePermissions(raw)
  return parsed.ok ? { ok: true, permissions: parsed.permissions } : { ok: false }
}

export function asksForMore(locked: string | undefined, next: string | undefined): string[] {
  if (locked === next) return []
  const before = read(locked)
  const after = read(next)
  if (!before.ok) return ['its locked permissions do not read as a permissions block']
  if (!after.ok) return ['its permissions do not read as a permissions block']
  return widenedPermissions(before.permissions, after.permissions)
}
