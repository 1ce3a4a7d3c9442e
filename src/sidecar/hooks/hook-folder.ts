/**
 * Reading hook folders as one reads an untrusted archive: the folder names under a root, and one
 * folder's files (`index.js`, `hook.json`) as they are at one moment, with a digest that says whether
 * two reads saw the same bytes.
 *
 * A hook folder belongs to whoever can write it (a tenant, a repository's author), so nothing in it is
 * followed or trusted: a hook folder or file that is a symbolic link is refused (tenant A's hook.json
 * linked to tenant B's would read B's secrets; linked anywhere, a parse error would quote it), only
 * regular files are read (a FIFO would block forever, a device would never end), each file's size is
 * checked before a byte is read and the read is capped (a sparse 500 MB index.js costs a stat, not the
 * sidecar's heap). Files are opened through the folder's own descriptor (`/proc/self/fd/N/file` on
 * Linux), so a folder swapped for a link between the check and the read is not followed either.
 *
 * A development setup that links hook folders in may opt in (`followSymlinks`, `hookd serve
 * --allow-symlinks`, refused with tenants).
 */
import { createHash } from 'node:crypto'
import { constants, existsSync } from 'node:fs'
import { lstat, open, opendir, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { HOOK_NAME } from '../../protocol/hook-name.js'
import { HookdError } from '../../protocol/status.js'
import type { FileDigest, HookContent } from '../pinning/content-digest.js'
import { readRegularFile } from './read-regular-file.js'

export { HOOK_NAME }

/** The digest of a folder that is not there. */
export const ABSENT = 'absent'

/**
 * The largest index.js hookd reads. Every invocation compiles the hook anew in its fresh isolate, from
 * the code cache on the worker's own thread (worker/process/run-in-isolate.ts): the cap bounds what
 * that can cost.
 */
export const SOURCE_MAX_BYTES = 1024 * 1024
/** The largest hook.json hookd reads. */
export const CONFIG_MAX_BYTES = 256 * 1024
/** The largest package.json hookd reads (it decides whether and how a hook is bundled). */
export const PACKAGE_JSON_MAX_BYTES = 256 * 1024
/** The largest hook.sig hookd reads (a signature file: a few hundred bytes). */
export const SIGNATURE_MAX_BYTES = 16 * 1024
/** The signature file of a hook, beside the files it signs (hookd sign, pinning/signature-file.ts). */
export const SIGNATURE_FILE = 'hook.sig'
/** The most entries of one hook folder listed: a folder is a handful of files, its node_modules aside. */
const MAX_FOLDER_ENTRIES = 10_000

export interface FolderReadOptions {
  /** Follow symbolic links (hook folders, index.js, hook.json). Default false. */
  followSymlinks?: boolean
}

/** A hook folder's files as read at one moment. Equal digests mean the same files, byte for byte. */
export interface HookFiles {
  name: string
  /** False when `<root>/<name>` is not there (any more). */
  present: boolean
  source?: string
  /** Why the folder or its index.js cannot be used, when they exist but are refused or unreadable. */
  sourceError?: string
  configText?: string
  /** Why hook.json cannot be used, when it exists but is refused or unreadable. */
  configError?: string
  /** The names of the files (and links) directly in the folder: bundle-plan.ts picks the entry by them. */
  names?: string[]
  /** package.json, when there is one (it asks for bundling, with its dependencies). */
  packageJson?: string
  /** Why package.json cannot be used, when it exists but is refused or unreadable. */
  packageJsonError?: string
  /**
   * Set when the folder is bundled (hook-source.ts): `source` is then the bundle, and this says from
   * which entry file, how its lines map back (a source map), and which files went into it.
   */
  bundle?: { entry: string; sourceMap: string; inputs: string[]; digests?: FileDigest[] }
  /** Why the folder could not be bundled, at its place in the author's files (relative to the folder). */
  bundleError?: { message: string; file: string; line?: number }
  /** hook.sig, when there is one (hookd sign); never part of the content it signs. */
  signatureText?: string
  /** Why hook.sig cannot be used, when it exists but is refused or unreadable. */
  signatureError?: string
  /** The digests of index.js, hook.json and package.json as this read saw them. */
  read?: FileDigest[]
  /** Every file the hook loads and the content digest over them (hook-source.ts; pinning/content-digest.ts). */
  content?: HookContent
  digest: string
}

const LINKS = '; hookd does not follow symbolic links in hook folders (a development setup may pass hookd serve --allow-symlinks)'

/** The hook folder names under `root`, sorted: folders, and links (refused when read, with a reason). */
export async function hookFolderNames(root: string): Promise<string[]> {
  try {
    const dirents = await readdir(root, { withFileTypes: true })
    return dirents
      .filter((d) => (d.isDirectory() || d.isSymbolicLink()) && HOOK_NAME.test(d.name))
      .map((d) => d.name)
      .sort()
  } catch (err) {
    throw new HookdError('not-found', `cannot read the hooks folder ${root}: ${(err as Error).message}; pass --hooks DIR with a folder of hooks`)
  }
}

/** Reads a hook folder's files, without loading them. Never throws for what the folder holds. */
export async function readHookFolder(root: string, name: string, options: FolderReadOptions = {}): Promise<HookFiles> {
  const follow = options.followSymlinks === true
  const dir = join(root, name)
  if (!HOOK_NAME.test(name)) return { name, present: false, digest: ABSENT }
  let kind: 'folder' | 'link' | 'other'
  try {
    const info = await lstat(dir)
    kind = info.isDirectory() ? 'folder' : info.isSymbolicLink() ? 'link' : 'other'
  } catch {
    return { name, present: false, digest: ABSENT }
  }
  if (kind === 'other') return { name, present: false, digest: ABSENT }
  const files: HookFiles = { name, present: true, digest: '' }
  if (kind === 'link' && !follow) {
    files.sourceError = `the hook folder ${name} is a symbolic link${LINKS}`
    return withDigest(files)
  }
  let folder: Awaited<ReturnType<typeof open>> | undefined
  try {
    folder = await open(dir, constants.O_RDONLY | constants.O_DIRECTORY | (follow ? 0 : constants.O_NOFOLLOW))
  } catch (err) {
    files.sourceError = `cannot open the hook folder ${name}: ${(err as Error).message}`
    return withDigest(files)
  }
  try {
    const base = inFolder(folder, dir)
    const listed = await listFolder(base('.'))
    if (typeof listed === 'string') {
      files.sourceError = `cannot read the hook folder ${name}: ${listed}`
      return withDigest(files)
    }
    files.names = listed
    const read: FileDigest[] = []
    if (listed.includes('package.json')) {
      const pkg = await readCapped(base('package.json'), `${name}/package.json`, PACKAGE_JSON_MAX_BYTES, follow, '; keep it to what npm writes')
      if (pkg.text !== undefined) files.packageJson = pkg.text
      if (pkg.error !== undefined) files.packageJsonError = pkg.error
      if (pkg.sha256 !== undefined) read.push({ path: 'package.json', sha256: pkg.sha256 })
    }
    const source = await readCapped(base('index.js'), `${name}/index.js`, SOURCE_MAX_BYTES, follow, '; bundle or minify it, or move data it reads to ctx.file')
    if (source.text !== undefined) files.source = source.text
    if (source.error !== undefined) files.sourceError = source.error
    if (source.sha256 !== undefined) read.push({ path: 'index.js', sha256: source.sha256 })
    const config = await readCapped(base('hook.json'), `${name}/hook.json`, CONFIG_MAX_BYTES, follow, '; keep configuration small, and move data the hook reads to ctx.file')
    if (config.text !== undefined) files.configText = config.text
    if (config.error !== undefined) files.configError = config.error
    if (config.sha256 !== undefined) read.push({ path: 'hook.json', sha256: config.sha256 })
    files.read = read
    if (listed.includes(SIGNATURE_FILE)) {
      const sig = await readCapped(base(SIGNATURE_FILE), `${name}/${SIGNATURE_FILE}`, SIGNATURE_MAX_BYTES, follow, '; write it again with hookd sign')
      if (sig.text !== undefined) files.signatureText = sig.text
      if (sig.error !== undefined) files.signatureError = sig.error
    }
  } finally {
    await folder.close()
  }
  return withDigest(files)
}

/** The names of the files and links directly in a folder, sorted; a string says why it cannot be listed. */
async function listFolder(path: string): Promise<string[] | string> {
  try {
    const names: string[] = []
    let seen = 0
    const dir = await opendir(path)
    for await (const entry of dir) {
      seen += 1
      if (entry.isFile() || entry.isSymbolicLink() || entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()) names.push(entry.name)
      if (seen > MAX_FOLDER_ENTRIES) return `it holds more than ${MAX_FOLDER_ENTRIES} files; keep a hook's folder to its own few files (its packages go in node_modules)`
    }
    return names.sort()
  } catch (err) {
    return (err as Error).message
  }
}

/** The digest of what a snapshot would serve: its script (or why there is none), source map and hook.json. */
export function withDigest(files: HookFiles): HookFiles {
  files.digest = createHash('sha256')
    .update(files.source === undefined ? `-${files.sourceError ?? ''}` : `+${files.source}`)
    .update('\0')
    .update(files.configText === undefined ? `-${files.configError ?? ''}` : `+${files.configText}`)
    .update('\0')
    .update(files.bundle ? `+${files.bundle.entry}\0${files.bundle.sourceMap}` : files.bundleError ? `-${JSON.stringify(files.bundleError)}` : '')
    .update('\0')
    // A new or changed signature changes whether the hook may serve (pinning/admission.ts).
    .update(files.signatureText === undefined ? `-${files.signatureError ?? ''}` : `+${files.signatureText}`)
    .update('\0')
    .update(files.content?.digest ?? '')
    .digest('hex')
  return files
}

/** Paths of files in an opened folder: through its descriptor where the system offers one. */
function inFolder(folder: { fd: number }, dir: string): (file: string) => string {
  const byFd = `/proc/self/fd/${folder.fd}`
  return existsSync(byFd) ? (file) => join(byFd, file) : (file) => join(dir, file)
}

/** A hook folder's file, read with readRegularFile; a missing file is neither text nor an error. */
async function readCapped(path: string, label: string, max: number, follow: boolean, advice: string): Promise<{ text?: string; sha256?: string; error?: string }> {
  const file = await readRegularFile(path, max, follow)
  if (file.ok) return { text: file.text, sha256: file.sha256 }
  switch (file.reason) {
    case 'missing':
      return {}
    case 'link':
      return { error: `${label} is a symbolic link${LINKS}` }
    case 'special':
      return { error: `${label} ${file.why}; hookd reads only regular files in a hook folder` }
    case 'size':
      return { error: `${label} ${file.why}${advice}` }
    case 'error':
    case 'outside':
      return { error: `${label} ${file.why}` }
  }
}
