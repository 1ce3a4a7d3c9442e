/**
 * A hook folder's script as the isolate will run it: a plain CommonJS `index.js` as it is, or, when
 * the folder needs it (bundle-plan.ts: TypeScript, an ES module, requires of files, npm packages), the
 * bundle esbuild makes of it (bundle.ts), with its source map and the files that went into it. The
 * registry reads every snapshot through here, so `hookd serve`, `hookd check` and `hookd test` serve
 * exactly the same script, and a hot reload sees a change to any file the bundle was made from.
 *
 * Bundling is bounded: a few at a time per registry (each runs in esbuild's process, with a deadline),
 * and a snapshot whose bundle inputs are unchanged since the last bundle (same size, mtime and inode,
 * folders included, so a new file beside them counts) reuses it: the watcher reads each change twice
 * before it applies it, and `hookd test` reloads a hook whenever a case gives it another config.
 */
import { lstat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { Semaphore } from '../semaphore.js'
import { type BundleResult, bundleHook } from './bundle.js'
import { bundlePlan } from './bundle-plan.js'
import { hookContent } from '../pinning/content-digest.js'
import { type FolderReadOptions, type HookFiles, readHookFolder, withDigest } from './hook-folder.js'

/** Bundles that run at once, per registry. */
const BUNDLES_AT_ONCE = 2

type Bundled = Extract<BundleResult, { ok: true }>

interface CachedBundle {
  entry: string
  signature: string
  bundle: Bundled
}

export class HookSources {
  private readonly bundles = new Semaphore(BUNDLES_AT_ONCE)
  private readonly cache = new Map<string, CachedBundle>()

  constructor(
    private readonly root: string,
    private readonly options: FolderReadOptions = {},
  ) {}

  /** Reads a hook folder and, when it needs it, bundles it. Never throws for what the folder holds. */
  async read(name: string): Promise<HookFiles> {
    const files = await this.readBundled(name)
    if (!files.present) return files
    // What the hook loads: the files this read saw, a bundle's inputs in place of index.js.
    const read = files.read ?? []
    files.content = hookContent(files.bundle ? [...read.filter((f) => f.path !== 'index.js'), ...(files.bundle.digests ?? [])] : read)
    return withDigest(files)
  }

  private async readBundled(name: string): Promise<HookFiles> {
    const files = await readHookFolder(this.root, name, this.options)
    if (!files.present || files.names === undefined || files.sourceError !== undefined) {
      this.cache.delete(name)
      return files
    }
    if (files.packageJsonError !== undefined) {
      files.bundleError = { message: files.packageJsonError.replace(`${name}/`, ''), file: 'package.json' }
      delete files.source
      return withDigest(files)
    }
    const plan = bundlePlan({ names: files.names, indexJs: files.source, packageJson: files.packageJson })
    if (plan.kind === 'none' || plan.kind === 'plain') return files
    delete files.source
    if (plan.kind === 'error') {
      files.bundleError = plan.line === undefined ? { message: plan.message, file: plan.file } : { message: plan.message, file: plan.file, line: plan.line }
      return withDigest(files)
    }
    const result = await this.bundle(name, plan.entry)
    if (result.ok) {
      files.source = result.source
      files.bundle = { entry: result.entry, sourceMap: result.sourceMap, inputs: result.inputs, digests: result.digests }
    } else {
      files.bundleError = result.line === undefined ? { message: result.message, file: result.file } : { message: result.message, file: result.file, line: result.line }
    }
    return withDigest(files)
  }

  /** The files that went into the hook's last bundle (relative to its folder); empty when it has none. */
  inputsOf(name: string): readonly string[] {
    return this.cache.get(name)?.bundle.inputs ?? []
  }

  private async bundle(name: string, entry: string): Promise<BundleResult> {
    const dir = join(this.root, name)
    const cached = this.cache.get(name)
    if (cached?.entry === entry && (await signature(dir, cached.bundle.inputs)) === cached.signature) return cached.bundle
    const result = await this.bundles.run(() => bundleHook(dir, { entry, followSymlinks: this.options.followSymlinks === true }))
    if (!result.ok) {
      this.cache.delete(name)
      return result
    }
    // Taken after the bundle: an edit made while it ran changes the signature, and is bundled next time.
    this.cache.set(name, { entry, signature: await signature(dir, result.inputs), bundle: result })
    return result
  }
}

/** What the inputs and their folders are now: size, mtime and inode of each ('-' when missing). */
async function signature(dir: string, inputs: readonly string[]): Promise<string> {
  const paths = new Set<string>()
  for (const input of inputs) {
    paths.add(input)
    for (let at = dirname(input); at !== '.' && at !== '/' && at !== ''; at = dirname(at)) paths.add(at)
  }
  paths.add('.')
  const parts: string[] = []
  const sorted = [...paths].sort()
  // A few dozen at a time: a bundle may hold a couple of thousand files.
  for (let i = 0; i < sorted.length; i += 32) {
    parts.push(
      ...(await Promise.all(
        sorted.slice(i, i + 32).map(async (path) => {
          try {
            const info = await lstat(join(dir, path))
            return `${path}:${info.ino}:${info.size}:${info.mtimeMs}`
          } catch {
            return `${path}:-`
          }
        }),
      )),
    )
  }
  return parts.join('\n')
}
