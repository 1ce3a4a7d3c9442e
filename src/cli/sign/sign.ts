/**
 * `hookd keygen` and `hookd sign`: ed25519 keys and signatures (src/sidecar/pinning/signing.ts).
 * `hookd keygen --out FILE` writes a private key (PEM PKCS#8, mode 0600) and FILE.pub (PEM SPKI, the
 * line for a trusted-keys file). `hookd sign --key FILE HOOK` writes HOOK/hook.sig over the hook's
 * content digest as the sidecar reads it; `hookd sign --key FILE --lock` writes hookd.lock.sig beside
 * the lock, which vouches for every hook whose digest the lock holds.
 */
import { generateKeyPairSync } from 'node:crypto'
import { constants } from 'node:fs'
import { open } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { HookSources } from '../../sidecar/hooks/hook-source.js'
import { lockDigest, lockPathFor, readLock, refuseLink } from '../../sidecar/pinning/lock-file.js'
import { fingerprint, readPrivateKey, signStatement } from '../../sidecar/pinning/signing.js'
import { writeReplacing } from '../../sidecar/state/state-folder.js'
import { CommandError, UsageError, parse } from '../common/args.js'
import { isDirectory } from '../common/hook-paths.js'
import type { CliIo } from '../common/io.js'

export const KEYGEN_HELP = `Usage: hookd keygen --out FILE

Makes an ed25519 key pair for hookd sign: FILE, the private key (PEM PKCS#8, mode 0600: keep it out
of the repository), and FILE.pub, the public key (PEM SPKI) to list in the trusted-keys file of
'hookd serve --trusted-keys'. openssl makes the same files:
  openssl genpkey -algorithm ed25519 -out FILE && openssl pkey -in FILE -pubout -out FILE.pub
Refuses to replace a FILE that exists.

  --out FILE    where to write the private key (the public key goes to FILE.pub)
  -h, --help    show this help`

export const SIGN_HELP = `Usage: hookd sign --key FILE HOOK_FOLDER...
       hookd sign --key FILE --lock [--hooks DIR] [--lock-file FILE]

Signs hooks with an ed25519 key (hookd keygen, or a PEM PKCS#8 / JWK file): writes HOOK/hook.sig, over
the hook's content digest (every file it loads, as 'hookd serve' reads them), or with --lock,
hookd.lock.sig beside the lock file, which vouches for every hook whose digest the lock holds.
'hookd serve --trusted-keys KEYS --require-signed' serves only hooks signed by a key in KEYS; a hook
changed after signing is refused until it is signed again. Prints each digest signed and the key's
fingerprint.

  --key FILE          the private key
  --lock              sign the lock file instead of hook folders
  --hooks DIR         with --lock: the hooks folder whose lock it is (default: ./hooks)
  --lock-file FILE    with --lock: the lock file (default: hookd.lock beside DIR)
  --allow-symlinks    follow symbolic links in hook folders
  -h, --help          show this help`

export async function keygen(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(KEYGEN_HELP, { args: argv, strict: true, allowPositionals: true, options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
  if (values.help) {
    io.stdout.write(`${KEYGEN_HELP}\n`)
    return 0
  }
  if (positionals.length || values.out === undefined) throw new UsageError(`say where to write the key: hookd keygen --out FILE\n\n${KEYGEN_HELP}`)
  const file = resolve(io.cwd, values.out)
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  await writeNew(file, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 0o600)
  await writeNew(`${file}.pub`, publicKey.export({ type: 'spki', format: 'pem' }) as string, 0o644)
  io.stdout.write(`wrote ${file} (private: keep it secret) and ${file}.pub; key ${fingerprint(publicKey)}\n`)
  return 0
}

export async function signHooks(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(SIGN_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      key: { type: 'string' },
      lock: { type: 'boolean', default: false },
      hooks: { type: 'string' },
      'lock-file': { type: 'string' },
      'allow-symlinks': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${SIGN_HELP}\n`)
    return 0
  }
  if (values.key === undefined) throw new UsageError(`pass the private key: hookd sign --key FILE HOOK (make one with hookd keygen --out FILE)\n\n${SIGN_HELP}`)
  if (values.lock === (positionals.length > 0)) throw new UsageError(`sign either hook folders or the lock (--lock), one of the two\n\n${SIGN_HELP}`)
  const key = await readPrivateKey(resolve(io.cwd, values.key))
  if (values.lock) {
    const path = lockPathFor(resolve(io.cwd, values.hooks ?? 'hooks'), values['lock-file'] !== undefined ? resolve(io.cwd, values['lock-file']) : undefined)
    const read = await readLock(path)
    if (!read) throw new CommandError(`there is no lock file at ${path}; write it with hookd lock, then sign it`)
    const digest = lockDigest(read.text)
    await writeSig(`${path}.sig`, signStatement({ signs: 'lock', name: 'hookd.lock', digest }, key))
    io.stdout.write(`signed ${path} (${digest}, ${Object.keys(read.lock.hooks).length} hooks) with ${fingerprint(key)}: wrote ${path}.sig\n`)
    return 0
  }
  for (const given of positionals) {
    const dir = resolve(io.cwd, given)
    if (!(await isDirectory(dir))) throw new UsageError(`no such hook folder '${given}'`)
    const name = basename(dir)
    const files = await new HookSources(dirname(dir), { followSymlinks: values['allow-symlinks'] === true }).read(name)
    const problem = files.sourceError ?? files.configError ?? files.bundleError?.message
    if (problem !== undefined || !files.content) throw new CommandError(`${given} cannot be signed: ${problem ?? 'it cannot be read'}; fix it (hookd check says more) and sign it again`)
    await writeSig(join(dir, 'hook.sig'), signStatement({ signs: 'hook', name, digest: files.content.digest }, key))
    io.stdout.write(`signed ${name} (${files.content.digest}, ${files.content.files.map((f) => f.path).join(', ')}) with ${fingerprint(key)}: wrote ${join(given, 'hook.sig')}\n`)
  }
  return 0
}

async function writeSig(path: string, text: string): Promise<void> {
  await refuseLink(path)
  await writeReplacing(path, text, 0o644)
}

/** Creates a file that must not exist yet (never through a link). */
async function writeNew(path: string, text: string, mode: number): Promise<void> {
  let handle
  try {
    handle = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    throw new HookdError('failed-precondition', code === 'EEXIST' ? `${path} exists; hookd keygen does not replace a key: choose another --out, or remove it first` : `cannot write ${path}: ${(err as Error).message}`)
  }
  try {
    await handle.writeFile(text)
  } finally {
    await handle.close()
  }
}
