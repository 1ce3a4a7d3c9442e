/**
 * Which file handlers a front-door run's hooks get (`ctx.file.*`, served by the front door in the
 * host's place), decided once when the run opens:
 *
 * - tenants' agents run on their own machines: refused (their files are not on this disk);
 * - a home folder (workdir.ts found it so): refused, saying why;
 * - the agent's user is the sidecar's: the host library's default handlers, in this process;
 * - another user: the same handlers in that user's file helper (user-files.ts), so a hook reads and
 *   writes what the agent's user could, not what the sidecar's user could.
 *
 * In every case the handlers serve the folder as it was when the run opened (its real path, pinned),
 * and refuse, by real path, writes under the protected names (src/protocol/protected-paths.ts), the
 * hooks folder, the HTTP token and hookd's state folders (the sidecar's, and the agent's user's).
 */
import type { CheckedWorkdir } from '../../agents/workdir.js'
import { CapabilityError, type FileHandlers, workdirFiles } from '../../host/capabilities.js'
import { type ProtectedRoot, hookdStateRoots, hooksRoot } from '../../protocol/protected-paths.js'
import { quoted } from '../../protocol/text.js'
import type { UserFiles } from './user-files.js'

export interface RunFilesOptions {
  /** The folder as checked when the run opened; undefined when nothing was checked (tenants). */
  checked: CheckedWorkdir | undefined
  /** The tenant's hooks folder. */
  hooksRoot: string
  /** The HTTP token's file, when the front door has one. */
  tokenFile?: string | undefined
  /** Serves other users' runs; without it their file calls are refused. */
  userFiles?: UserFiles | undefined
}

/** A run's file handlers, and what to call when the run ends. */
export interface RunFiles {
  files: FileHandlers
  release(): void
}

export function runFiles(options: RunFilesOptions): RunFiles {
  const { checked } = options
  const none = (files: FileHandlers): RunFiles => ({ files, release: () => {} })
  if (!checked) {
    return none(refusing("this sidecar serves tenants, whose agents' files are on their own machines, not hookd's; hooks of HTTP sessions get no file access here"))
  }
  if (checked.noFiles) return none(refusing(checked.noFiles))
  const roots = protectedRoots(options, checked)
  if (process.geteuid?.() === checked.uid || process.geteuid === undefined) {
    return none(workdirFiles(checked.real, { pinned: checked.pin, protectedRoots: roots }))
  }
  if (!options.userFiles) return none(refusing(`hookd serves no files as uid ${checked.uid}, the agent's user, here`))
  return options.userFiles.forRun(checked.uid, { workdir: checked.real, pin: checked.pin, roots })
}

/** What is protected wherever it is, for one run. */
function protectedRoots(options: RunFilesOptions, checked: CheckedWorkdir): ProtectedRoot[] {
  const roots: ProtectedRoot[] = [hooksRoot(options.hooksRoot)]
  if (options.tokenFile) {
    roots.push({ path: options.tokenFile, refuses: 'read-write', what: "hookd's HTTP token", why: 'whoever holds it can post events as the agents do', file: true })
  }
  roots.push(...hookdStateRoots())
  if (checked.home) roots.push(...hookdStateRoots({}, checked.home))
  return roots.filter((root, i) => roots.findIndex((r) => r.path === root.path) === i)
}

/** File handlers that refuse every call, saying why. */
function refusing(why: string): FileHandlers {
  const refuse = async (path: string, capability: string): Promise<never> => {
    throw new CapabilityError('denied', `ctx.${capability}(${quoted(path)}) refused: ${why}`)
  }
  return {
    read: (path) => refuse(path, 'file.read'),
    write: (path) => refuse(path, 'file.write'),
    append: (path) => refuse(path, 'file.append'),
    exists: (path) => refuse(path, 'file.exists'),
    list: (path) => refuse(path, 'file.list'),
  }
}
