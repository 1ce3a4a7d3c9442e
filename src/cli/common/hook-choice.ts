/**
 * Which hooks `hookd invoke` and `hookd agent` run: those named with --hook, in the order given, or by
 * default every hook of the hooks folder in name order. Name order is the byte order of the folder
 * names (as `LC_ALL=C ls` sorts them), so `10-guard` runs before `20-audit`, and `Zed` before `audit`:
 * number the folders to choose the order.
 */
import type { HookdClient } from '../../host/client.js'
import type { Sidecar } from '../../sidecar/sidecar.js'
import { UsageError, list } from './args.js'

/** The --hook flag's names, every repetition and comma-separated name in order. */
export function hookFlag(given: readonly string[]): string[] {
  const names = list(given)
  if (given.length && !names.length) throw new UsageError('--hook names no hook; write --hook guard or --hook guard,audit (or leave it out to run every hook)')
  return names
}

/** Every hook a sidecar has, loaded or not (one that failed to load is then reported), in name order. */
export async function everyHook(from: { sidecar: Sidecar } | { client: HookdClient }): Promise<string[]> {
  const infos = 'sidecar' in from ? from.sidecar.registry.list() : await from.client.listHooks()
  return infos.map((h) => h.name).sort(byteOrder)
}

/** Code-unit order: for hook names (ASCII letters, digits, '.', '_', '-') the byte order of `LC_ALL=C ls`. */
function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}

/** What a header says about hooks chosen by default. */
export function everyHookLabel(where: string): string {
  return `every hook of ${where}, in name order`
}
