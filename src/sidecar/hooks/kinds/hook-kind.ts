/**
 * What a hook kind is to the registry (registry.ts): a sandboxed hook (sandboxed-kind.ts: index.js run
 * in the sandbox) or a remote one (remote-kind.ts: a server hook.json names). A kind says which folders
 * are its own, loads one snapshot of such a folder into a version it can serve (or says why not, where
 * and what to do), forgets what it keeps for a hook when the folder changes, and closes. Everything
 * else (hook.json, versions served and stale, removals, events, watching) is the registry's, the same
 * for every kind, so a third kind is one more file here and one line in the registry's list of kinds.
 */
import type { HookPermissions } from '../../../protocol/hook-permissions.js'
import type { PointName } from '../../../protocol/points/points.js'
import type { OnError } from '../../../protocol/wire.js'
import type { HookMode } from '../../chain/layer.js'
import type { HookRunner, RunnableHook } from '../../runners/hook-runner.js'
import type { HookFiles } from '../hook-folder.js'
import type { SourceMap } from '../source-map.js'

/** A hook version that loaded and can be served. */
export interface LoadedHook extends RunnableHook {
  config: unknown
  /** The points it handles, in catalog order of its exports. */
  points: ReadonlySet<PointName>
  /** Exported functions whose names are not points. */
  unknownExports: readonly string[]
  loadedAtMs: number
  /** What runs it: the sandbox's runner, or its remote server's client. */
  runner: HookRunner
  /** A remote hook's address as hook.json writes it (for `hookd check` and `hookd list`). */
  remote?: string
  /** hook.json "onError": what this hook's failure does at a gate (chain.ts). */
  onError: OnError
  /** hook.json "mode": `shadow` records what it would decide and enforces nothing (chain.ts); absent: enforce. */
  mode?: HookMode
  /** One line about the hook: hook.json "description", else a remote hook's own (its Describe). */
  description?: string
  /** hook.json "tools": the tool calls it is called for (canonical names); absent: every call. */
  tools?: ReadonlySet<string>
  /** A bundled hook's source map (version 3, JSON text): `source` is then esbuild's bundle. */
  sourceMap?: string
  /** The content digest of every file it loads (src/sidecar/pinning/content-digest.ts); set by the registry. */
  digest?: string
  /** hook.json "permissions"; undefined: the hook may do what the session allows (no block). */
  permissions?: HookPermissions | undefined
  /** The same block as written, in canonical JSON (pinning/canonical-json.ts): what hookd.lock records. */
  writtenPermissions?: string
}

/** What hook.json says, checked before a kind is chosen (hook-files.ts checkHookJson). */
export interface HookSettings {
  /** "config", `{}` when absent. */
  config: unknown
  /** "onError", 'default' when absent. */
  onError: OnError
  /** "mode", 'enforce' when absent. */
  mode: HookMode
  /** "description". */
  description?: string | undefined
  /** "tools", when given. */
  tools?: readonly string[] | undefined
  /** "remote" as written: the remote kind's claim. */
  remote?: string | undefined
  /** "permissions", parsed; undefined when hook.json has none. */
  permissions?: HookPermissions | undefined
}

/** What a load failure's message tells the reader to do; `stale` when an older version still serves. */
export interface Remedy {
  skipped: string
  stale: string
}

/** A version loaded, or why not. */
export type LoadResult =
  | {
      ok: true
      hook: LoadedHook
      /** `hook.sourceMap`, parsed: kept with the version while it (or the next one) serves. */
      map?: SourceMap | undefined
    }
  | {
      ok: false
      message: string
      file: string
      line?: number | undefined
      /** Absent: the message itself says what to do. */
      remedy: Remedy | undefined
      /** The same failure as last time (a remote hook's retry): not announced again. */
      repeat?: boolean
      /** hook.json "onError", when hook.json could be read. */
      onError?: OnError
    }

export interface HookKind {
  /** Whether a folder is this kind's, by its files and hook.json. The registry asks its kinds in order. */
  claims(files: HookFiles, settings: HookSettings): boolean
  /**
   * Loads one snapshot of a folder it claims (present, readable, hook.json valid) into a version to
   * serve; hook.json's "onError" and "description" are added by the registry. Never rejects.
   */
  load(files: HookFiles, settings: HookSettings): Promise<LoadResult>
  /** The hook's folder changed or went away (or is now another kind's): drop what is kept for it. */
  forget(name: string): void
  /** The registry retires. */
  close(): void
}

/** A failure the author fixes by editing `file`. */
export function editFailure(message: string, file: string, line?: number): LoadResult {
  return { ok: false, message, file, line, remedy: { skipped: `fix ${file} and save it`, stale: `fix ${file} and save it again` } }
}
