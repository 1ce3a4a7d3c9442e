/**
 * A hooks bundle (`hookd bundle DIR`, served by `hookd serve --hooks-from URL`): one JSON file, no
 * archive format of anyone else's. Its outside is an envelope,
 *
 *   {"hookdBundle": 1, "payload": "<base64>", "signature": <a signature file, signing.ts>}
 *
 * whose signature signs the statement `{"signs": "bundle", "name": "hookd-bundle", "digest":
 * "sha256:<of the payload's bytes>"}`. The payload is canonical JSON:
 *
 *   {"revision": "...", "lock": <hookd.lock>, "files": {"guard/index.js": "<base64>", ...}}
 *
 * holding exactly the files each hook loads (as its lock entry lists them) and the lock that pins them.
 *
 * `openBundle` trusts nothing before it is verified, in this order: the size (the caller bounds the
 * download), the envelope's shape, the signature (by a trusted key, over these very payload bytes),
 * the payload's shape, every path (a hook name, then segments that cannot climb out: no `..`, no
 * absolute path, no backslash), the count and size of the files, and every hook's content digest
 * against its lock entry (and the lock lists exactly the bundle's hooks). Only then does it return the
 * files, to be written to the state folder (bundle-store.ts).
 */
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { HOOK_NAME } from '../../protocol/hook-name.js'
import { issueText } from '../../protocol/issue-text.js'
import { canonicalJson } from '../pinning/canonical-json.js'
import { hookContent, sha256Hex } from '../pinning/content-digest.js'
import { type LockFile, lockFileSchema } from '../pinning/lock-file.js'
import { type TrustedKeys, checkSignature, signStatement } from '../pinning/signing.js'
import type { KeyObject } from 'node:crypto'

/** The largest bundle hookd takes by default (hookd serve --bundle-max-bytes). */
export const BUNDLE_MAX_BYTES = 64 * 1024 * 1024
/** The most files in one bundle. */
export const BUNDLE_MAX_FILES = 20_000
/** A revision: what the operator sees on /readyz, in metrics and in every decision record. */
export const REVISION = /^[A-Za-z0-9][\w.+-]{0,127}$/

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

const envelopeSchema = z.strictObject({
  hookdBundle: z.literal(1, { error: 'expected 1: this hookd reads bundles of version 1' }),
  payload: z.string().regex(BASE64, 'expected base64'),
  signature: z.record(z.string(), z.unknown()).optional(),
})

const payloadSchema = z.strictObject({
  revision: z.string().regex(REVISION, 'a revision: letters, digits, ".", "_", "+", "-", at most 128'),
  lock: lockFileSchema,
  files: z.record(z.string().max(1024), z.string().regex(BASE64, 'expected base64')),
})

/** A bundle that passed every check. */
export interface OpenedBundle {
  revision: string
  lock: LockFile
  /** Path ('hook/file') → bytes. */
  files: Map<string, Buffer>
  /** Hook name → its content digest. */
  digests: Map<string, string>
  /** The signing key's fingerprint. */
  key: string
}

export type BundleCheck = { ok: true; bundle: OpenedBundle } | { ok: false; message: string }

/** Makes a bundle's text from the files of each hook (path → bytes), its lock and a revision. */
export function makeBundle(revision: string, lock: LockFile, files: ReadonlyMap<string, Buffer>, key: KeyObject): string {
  const out: Record<string, string> = {}
  for (const [path, bytes] of files) out[path] = bytes.toString('base64')
  const payload = Buffer.from(canonicalJson({ revision, lock, files: out }), 'utf8')
  const signature = JSON.parse(signStatement({ signs: 'bundle', name: 'hookd-bundle', digest: `sha256:${sha256Hex(payload)}` }, key)) as Record<string, unknown>
  return `${canonicalJson({ hookdBundle: 1, payload: payload.toString('base64'), signature })}\n`
}

/** Verifies a bundle's bytes; nothing of it is to be used unless this says ok. */
export function openBundle(bytes: Buffer, trusted: TrustedKeys, maxBytes = BUNDLE_MAX_BYTES): BundleCheck {
  const fail = (message: string): BundleCheck => ({ ok: false, message })
  if (bytes.length > maxBytes) return fail(`the bundle is ${bytes.length} bytes, over the ${maxBytes} bytes hookd takes`)
  const outer = parseJson(bytes.toString('utf8'), 'the bundle', { maxDepth: 8, maxBytes })
  if (!outer.ok) return fail(`${outer.message} (a truncated download reads so too)`)
  const envelope = envelopeSchema.safeParse(outer.value)
  if (!envelope.success) return fail(`the bundle is not one hookd bundle writes: ${issueText(envelope.error)}`)
  const payload = Buffer.from(envelope.data.payload, 'base64')
  const signature = envelope.data.signature === undefined ? undefined : JSON.stringify(envelope.data.signature)
  const signed = checkSignature(signature, "the bundle's signature", { signs: 'bundle', name: 'hookd-bundle', digest: `sha256:${sha256Hex(payload)}` }, trusted)
  if (!signed.ok) return fail(`the bundle is refused: ${signed.message}`)
  const inner = parseJson(payload.toString('utf8'), "the bundle's payload", { maxDepth: 12, maxBytes })
  if (!inner.ok) return fail(inner.message)
  const checked = payloadSchema.safeParse(inner.value)
  if (!checked.success) return fail(`the bundle's payload is not one hookd bundle writes: ${issueText(checked.error)}`)
  const { revision, lock } = checked.data
  const entries = Object.entries(checked.data.files)
  if (entries.length > BUNDLE_MAX_FILES) return fail(`the bundle holds ${entries.length} files, over the ${BUNDLE_MAX_FILES} hookd takes`)
  const files = new Map<string, Buffer>()
  const byHook = new Map<string, Array<{ path: string; sha256: string }>>()
  for (const [path, b64] of entries) {
    const problem = pathProblem(path)
    if (problem) return fail(`the bundle's file '${path.slice(0, 200)}' ${problem}; nothing of it is used`)
    const data = Buffer.from(b64, 'base64')
    files.set(path, data)
    const [hook, ...rest] = path.split('/')
    const list = byHook.get(hook as string) ?? []
    list.push({ path: rest.join('/'), sha256: sha256Hex(data) })
    byHook.set(hook as string, list)
  }
  const digests = new Map<string, string>()
  for (const [hook, list] of byHook) {
    const entry = lock.hooks[hook]
    if (!entry) return fail(`the bundle's hook '${hook}' is not in its lock`)
    const content = hookContent(list)
    if (content.digest !== entry.digest) return fail(`the bundle's hook '${hook}' has digest ${content.digest}, its lock says ${entry.digest}`)
    digests.set(hook, content.digest)
  }
  for (const hook of Object.keys(lock.hooks)) if (!byHook.has(hook)) return fail(`the bundle's lock pins hook '${hook}', which the bundle does not hold`)
  return { ok: true, bundle: { revision, lock, files, digests, key: signed.key } }
}

/** Why a bundle path cannot be written under a folder, or undefined when it can. */
export function pathProblem(path: string): string | undefined {
  if (path.includes('\\') || path.includes('\0')) return 'holds a backslash or NUL'
  if (path.startsWith('/')) return 'is an absolute path'
  const parts = path.split('/')
  if (parts.length < 2) return 'is not inside a hook folder (HOOK/FILE)'
  if (!HOOK_NAME.test(parts[0] as string)) return 'is not in a folder named like a hook'
  if (parts.some((p) => p === '' || p === '.' || p === '..')) return "climbs out of its folder or has an empty segment ('..', '.', '//')"
  if (parts.some((p) => p.length > 255)) return 'has a segment longer than 255 characters'
  return undefined
}
