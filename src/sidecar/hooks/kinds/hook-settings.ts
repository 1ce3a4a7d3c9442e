/**
 * What a hook folder's hook.json says, read once before any kind loads it (src/sidecar/hooks/registry.ts): "config",
 * "onError", "mode", "description", "remote", "tools" and "permissions", with the permissions block also as
 * written (canonical JSON: what hookd.lock records, src/sidecar/pinning/lock-file.ts). A folder that cannot be read,
 * an invalid hook.json, and a hook without permissions where they are required are load failures that
 * say which file and what to do.
 */
import { canonicalJson } from '../../pinning/canonical-json.js'
import type { HookFiles } from '../hook-folder.js'
import { checkHookJson } from '../hook-files.js'
import { type HookSettings, type LoadResult, editFailure } from './hook-kind.js'

export type SettingsRead = { ok: true; settings: HookSettings; written: string | undefined } | { ok: false; failure: LoadResult }

export function readSettings(files: HookFiles, requirePermissions: boolean): SettingsRead {
  const { name } = files
  const jsonFile = `${name}/hook.json`
  if (files.sourceError !== undefined) return { ok: false, failure: editFailure(files.sourceError, `${name}/index.js`) }
  if (files.configError !== undefined) return { ok: false, failure: editFailure(files.configError, jsonFile) }
  const settings: HookSettings = { config: {}, onError: 'default', mode: 'enforce' }
  let written: string | undefined
  if (files.configText !== undefined) {
    const checked = checkHookJson(files.configText)
    if (!checked.ok) return { ok: false, failure: editFailure(checked.message, jsonFile, checked.line) }
    settings.config = checked.config ?? {}
    settings.onError = checked.onError ?? 'default'
    settings.mode = checked.mode ?? 'enforce'
    settings.description = checked.description
    settings.remote = checked.remote
    settings.permissions = checked.permissions
    settings.tools = checked.tools
    if (checked.writtenPermissions !== undefined) written = canonicalJson(checked.writtenPermissions)
  }
  if (requirePermissions && settings.permissions === undefined) {
    const file = files.configText !== undefined ? jsonFile : `${name}/index.js`
    const remedy = { skipped: `add "permissions" to ${jsonFile} and save it`, stale: `add "permissions" to ${jsonFile} and save it again` }
    return { ok: false, failure: { ok: false, message: permissionsRequired(files.configText !== undefined), file, remedy, onError: settings.onError } }
  }
  return { ok: true, settings, written }
}

/** Why a hook without a permissions block does not load where they are required, and what to add. */
function permissionsRequired(hasJson: boolean): string {
  const where = hasJson ? 'its hook.json has no "permissions" block' : 'it has no hook.json'
  return (
    `this sidecar requires every hook to declare its permissions (hookd serve --require-permissions, or the tenant's requirePermissions), and ${where}; ` +
    `add one listing what the hook may touch and decide, e.g. "permissions": {"decide": {"refuse": true}} (docs/writing-hooks.md#permissions)`
  )
}
