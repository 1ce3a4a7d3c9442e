/**
 * `hookd bundle DIR`: builds the signed bundle `hookd serve --hooks-from URL` takes
 * (src/sidecar/bundles/bundle-format.ts): every hook of DIR, exactly the files each one loads (read as
 * the sidecar reads them, and read again here only to be checked against those digests), and the lock
 * beside DIR, which every hook must match: a bundle holds what was locked and reviewed, nothing else.
 */
import { writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { hookFolderNames } from '../../sidecar/hooks/hook-folder.js'
import { HookSources } from '../../sidecar/hooks/hook-source.js'
import { readRegularFile } from '../../sidecar/hooks/read-regular-file.js'
import { BUNDLE_MAX_BYTES, REVISION, makeBundle } from '../../sidecar/bundles/bundle-format.js'
import { type LockFile, lockPathFor, readLock, refuseLink } from '../../sidecar/pinning/lock-file.js'
import { fingerprint, readPrivateKey } from '../../sidecar/pinning/signing.js'
import { CommandError, UsageError, parse } from '../common/args.js'
import { isDirectory } from '../common/hook-paths.js'
import type { CliIo } from '../common/io.js'

export const BUNDLE_HELP = `Usage: hookd bundle DIR --key FILE --revision REV [--out FILE] [--lock-file FILE]

Builds a signed bundle of the hooks folder DIR for 'hookd serve --hooks-from URL': every hook's files
(exactly those it loads) and the lock beside DIR (hookd lock writes it), signed with an ed25519 key
(hookd keygen). Every hook must match the lock: lock and review first, then bundle. Serve the file
over HTTPS; sidecars poll it (by ETag), verify the signature and every digest, and swap it in whole.

  --key FILE         the private key that signs the bundle
  --revision REV     the revision it serves as (a commit id, a release: letters, digits, . _ + -);
                     sidecars report it on /readyz, in metrics and in every decision record
  --out FILE         where to write it (default: bundle.json)
  --lock-file FILE   the lock (default: hookd.lock beside DIR)
  -h, --help         show this help`

export async function bundle(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(BUNDLE_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      revision: { type: 'string' },
      out: { type: 'string' },
      'lock-file': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${BUNDLE_HELP}\n`)
    return 0
  }
  if (positionals.length !== 1) throw new UsageError(`give one hooks folder: hookd bundle DIR --key FILE --revision REV\n\n${BUNDLE_HELP}`)
  if (values.key === undefined) throw new UsageError(`pass the signing key: --key FILE (make one with hookd keygen --out FILE)\n\n${BUNDLE_HELP}`)
  if (values.revision === undefined || !REVISION.test(values.revision)) throw new UsageError(`pass --revision REV: letters, digits, '.', '_', '+' and '-', at most 128 (a commit id, say)\n\n${BUNDLE_HELP}`)
  const dir = resolve(io.cwd, positionals[0] as string)
  if (!(await isDirectory(dir))) throw new UsageError(`no such folder '${positionals[0]}'; pass the folder that holds your hooks`)
  const key = await readPrivateKey(resolve(io.cwd, values.key))
  const lockPath = lockPathFor(dir, values['lock-file'] !== undefined ? resolve(io.cwd, values['lock-file']) : undefined)
  const read = await readLock(lockPath)
  if (!read) throw new CommandError(`there is no lock at ${lockPath}; review the hooks and run hookd lock --hooks ${positionals[0]}, then bundle`)
  const names = await hookFolderNames(dir)
  const sources = new HookSources(dir)
  const files = new Map<string, Buffer>()
  const lock: LockFile = { hookdLock: read.lock.hookdLock, hooks: {} }
  let total = 0
  for (const name of names) {
    const entry = read.lock.hooks[name]
    const hook = await sources.read(name)
    if (!hook.content) throw new CommandError(`hook '${name}' cannot be read: ${hook.sourceError ?? 'unknown'}`)
    if (!entry) throw new CommandError(`hook '${name}' is not in ${lockPath}; review it and run hookd trust ${name} (or leave it out of DIR)`)
    if (entry.digest !== hook.content.digest) throw new CommandError(`hook '${name}' changed since ${lockPath} (now ${hook.content.digest}, locked ${entry.digest}); review it and run hookd trust ${name}, then bundle`)
    for (const f of hook.content.files) {
      const file = await readRegularFile(join(dir, name, ...f.path.split('/')), BUNDLE_MAX_BYTES, false, join(dir, name))
      if (!file.ok || file.sha256 !== f.sha256) throw new CommandError(`${name}/${f.path} ${file.ok ? 'changed while it was bundled' : file.why}; run hookd bundle again`)
      files.set(`${name}/${f.path}`, file.data)
      total += file.bytes
    }
    lock.hooks[name] = entry
  }
  const out = resolve(io.cwd, values.out ?? 'bundle.json')
  const text = makeBundle(values.revision, lock, files, key)
  await refuseLink(out)
  await writeFile(out, text, { mode: 0o644 })
  io.stdout.write(`wrote ${out}: revision ${values.revision}, ${names.length} hook(s), ${files.size} file(s), ${total} bytes, signed by ${fingerprint(key)}\n`)
  return 0
}

