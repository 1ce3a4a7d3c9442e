/**
 * The checks of a session's open request, before anything of the session exists: the protocol
 * version, the run's id and absolute workdir, each hook declared once and known to the tenant's
 * registry (or the operator's floor, whose hooks run first whether declared or not). Each refusal is
 * a HookdError saying what was wrong and what to send instead.
 */
import { isAbsolute } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { quoted } from '../../protocol/text.js'
import { HOOKD_VERSION, PROTOCOL_VERSION } from '../../protocol/version.js'
import type { HookInfoData, OpenSessionWire } from '../../protocol/wire.js'
import type { Tenant } from '../tenant.js'

/** Checks `open` for `tenant`; returns the declared hooks' registry entries, in declared order. */
export function checkOpen(tenant: Tenant, open: OpenSessionWire): HookInfoData[] {
  if (open.protocolVersion !== PROTOCOL_VERSION) {
    throw new HookdError(
      'failed-precondition',
      `protocol_version ${open.protocolVersion} is not supported; this sidecar (hookd ${HOOKD_VERSION}) speaks version ${PROTOCOL_VERSION}`,
    )
  }
  if (!open.sessionId) throw new HookdError('invalid-argument', 'open.session_id is empty; give the run an id')
  // ctx.workdir means one folder whatever the sidecar's own working directory; file capabilities are
  // confined to it.
  const absolute = "give the run's working directory as an absolute path (ctx.workdir, and the folder file capabilities are confined to)"
  if (!open.workdir) throw new HookdError('invalid-argument', `open.workdir is empty; ${absolute}`)
  if (!isAbsolute(open.workdir)) throw new HookdError('invalid-argument', `open.workdir ${quoted(open.workdir)} is not an absolute path; ${absolute}`)
  const seen = new Set<string>()
  for (const name of open.hooks) {
    if (seen.has(name)) throw new HookdError('invalid-argument', `hook '${name}' is declared twice; declare each hook once`)
    seen.add(name)
  }
  const registry = tenant.registry
  const floor = tenant.floor
  // A floor hook's name is the floor's: declaring it is allowed (it runs first anyway) and changes nothing.
  const missing = open.hooks.filter((name) => !registry.has(name) && !floor?.has(name))
  if (missing.length) {
    const known = registry.list().map((h) => h.name)
    const where = tenant.id === undefined ? registry.root : `tenant '${tenant.id}''s hooks`
    throw new HookdError(
      'not-found',
      `unknown hook${missing.length > 1 ? 's' : ''} ${missing.map((n) => `'${n}'`).join(', ')} in ${where} (available: ${known.length ? known.join(', ') : 'none'})`,
    )
  }
  const infos = registry.list()
  const floorInfos = floor?.hooks() ?? []
  return open.hooks.map((name) => (floorInfos.find((h) => h.name === name) ?? infos.find((h) => h.name === name)) as HookInfoData)
}
