/**
 * What a shadow hook (hook.json "mode": "shadow"; chain/would.ts) may do through ctx. A shadow hook runs
 * on real traffic to show what it would decide before it enforces anything, so it must not change
 * anything outside itself either: by its record's policy class (src/protocol/capabilities.ts), a
 * capability that only reads (file-read: ctx.file.read, exists, list) works as for any hook; one that
 * writes a file, reaches the network, asks the human or notifies them is refused inside the hook with
 * code 'denied', saying why. A confirm it asked is recorded as `would: "ask"` (session.ts). ctx.log
 * and ctx.env are not capabilities and work as always.
 *
 * The table is a mapped type over the classes: a new class without a shadow rule does not compile.
 */
import type { PolicyClass } from '../../protocol/capabilities.js'

/** True for the classes a shadow hook may call: those that change nothing outside it. */
const SHADOW_MAY: { readonly [C in PolicyClass]: boolean } = {
  'file-read': true,
  'file-write': false,
  network: false,
  ask: false,
  notify: false,
}

const WHAT: { readonly [C in PolicyClass]: string } = {
  'file-read': 'reads a file',
  'file-write': 'would change a file',
  network: 'would reach the network (and could send anything)',
  ask: 'would ask the human',
  notify: 'would notify the human',
}

/** Why a shadow hook's call of a capability of class `policy` is refused; undefined when it is not. */
export function shadowRefusal(capability: string, policy: PolicyClass): string | undefined {
  if (SHADOW_MAY[policy]) return undefined
  return `ctx.${capability} refused: this hook runs in shadow mode (hook.json "mode": "shadow"), which records what it would decide and changes nothing outside it, and this call ${WHAT[policy]}; set "mode": "enforce" once it should act`
}
