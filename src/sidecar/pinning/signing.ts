/**
 * Ed25519 signatures over what hookd pins, with Node's own crypto. What is signed is a statement, in
 * canonical JSON: `{"hookdSignature":1,"signs":"hook"|"lock"|"bundle","name":...,"digest":"sha256:..."}`:
 * a hook's content digest (content-digest.ts) and name, a lock file's sha256, or a bundle's payload. A
 * signature file (`hook.sig` in the hook's folder, `hookd.lock.sig` beside the lock) holds the
 * statement, the signing key's fingerprint and the signature, base64.
 *
 * Key files (docs/operations.md, "Keys"): a private key is PEM PKCS#8 (`-----BEGIN PRIVATE KEY-----`,
 * what `hookd keygen` and `openssl genpkey -algorithm ed25519` write) or a JWK (`{"kty":"OKP","crv":
 * "Ed25519","d":...,"x":...}`); a trusted-keys file is one or more PEM SPKI public keys (`-----BEGIN
 * PUBLIC KEY-----`, `openssl pkey -pubout`) one after another, or `{"keys":[JWK, ...]}`. A key's
 * fingerprint is `ed25519:` and the first 32 hex digits of the sha256 of its SPKI DER form.
 */
import { type KeyObject, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto'
import * as z from 'zod'
import { parseJson } from '../../protocol/bounded-json.js'
import { issueText } from '../../protocol/issue-text.js'
import { HookdError } from '../../protocol/status.js'
import { readRegularFile } from '../hooks/read-regular-file.js'
import { canonicalJson } from './canonical-json.js'
import { sha256Hex } from './content-digest.js'

/** What a signature says it signs. */
export interface Statement {
  signs: 'hook' | 'lock' | 'bundle'
  name: string
  digest: string
}

const signatureFileSchema = z.strictObject({
  hookdSignature: z.literal(1, { error: 'expected 1' }),
  signs: z.enum(['hook', 'lock', 'bundle']),
  name: z.string().min(1).max(256),
  digest: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'expected "sha256:" and 64 hex digits'),
  key: z.string().regex(/^ed25519:[0-9a-f]{32}$/, 'expected "ed25519:" and 32 hex digits'),
  signature: z.string().regex(/^[A-Za-z0-9+/]{86}==$/, 'expected a base64 ed25519 signature (88 characters)'),
})
export type SignatureFile = z.output<typeof signatureFileSchema>

/** Trusted public keys, by fingerprint. */
export type TrustedKeys = ReadonlyMap<string, KeyObject>

/** Why a signature does not make a thing trusted, in the words of the load error. */
export type SignatureCheck = { ok: true; key: string } | { ok: false; why: 'unsigned' | 'untrusted' | 'changed' | 'invalid'; message: string }

const KEY_FILE_MAX_BYTES = 256 * 1024

/** The fingerprint of a public key (or of a private key's public half). */
export function fingerprint(key: KeyObject): string {
  const pub = key.type === 'private' ? createPublicKey(key) : key
  return `ed25519:${sha256Hex(pub.export({ type: 'spki', format: 'der' })).slice(0, 32)}`
}

/** The bytes a statement's signature is over. */
export function statementBytes(s: Statement): Buffer {
  return Buffer.from(canonicalJson({ hookdSignature: 1, signs: s.signs, name: s.name, digest: s.digest }), 'utf8')
}

/** Signs a statement: the signature file's text (JSON, one line, newline). */
export function signStatement(statement: Statement, key: KeyObject): string {
  const signature = sign(null, statementBytes(statement), key).toString('base64')
  const file: SignatureFile = { hookdSignature: 1, ...statement, key: fingerprint(key), signature }
  return `${canonicalJson(file)}\n`
}

/** Parses a signature file; a string says what is wrong with it. */
export function parseSignature(text: string, label: string): SignatureFile | string {
  const parsed = parseJson(text, label, { maxDepth: 4, maxBytes: 16 * 1024 })
  if (!parsed.ok) return `${parsed.message}; sign it again with hookd sign`
  const checked = signatureFileSchema.safeParse(parsed.value)
  return checked.success ? checked.data : `${label} is not a signature hookd writes: ${issueText(checked.error)}; sign it again with hookd sign`
}

/**
 * Checks a signature file's text against what it must sign (`expected`) and the trusted keys: unsigned
 * (no text), signed by a key not trusted (its fingerprint), a signature that does not verify (made over
 * other bytes), or a statement for other content (changed after signing).
 */
export function checkSignature(text: string | undefined, label: string, expected: Statement, trusted: TrustedKeys): SignatureCheck {
  if (text === undefined) return { ok: false, why: 'unsigned', message: `it is unsigned (no ${label})` }
  const sig = parseSignature(text, label)
  if (typeof sig === 'string') return { ok: false, why: 'invalid', message: sig }
  const key = trusted.get(sig.key)
  if (!key) return { ok: false, why: 'untrusted', message: `it is signed by a key that is not trusted (${sig.key}); add that public key to the trusted keys, or sign it with a trusted key` }
  const claimed: Statement = { signs: sig.signs, name: sig.name, digest: sig.digest }
  let good = false
  try {
    good = verify(null, statementBytes(claimed), key, Buffer.from(sig.signature, 'base64'))
  } catch {
    good = false
  }
  if (!good) return { ok: false, why: 'invalid', message: `${label}'s signature does not verify with key ${sig.key}: it was made over other bytes or edited; sign it again with hookd sign` }
  if (sig.signs !== expected.signs || sig.name !== expected.name) {
    return { ok: false, why: 'changed', message: `${label} signs ${sig.signs} '${sig.name}', not ${expected.signs} '${expected.name}'; sign this one with hookd sign` }
  }
  if (sig.digest !== expected.digest) {
    return { ok: false, why: 'changed', message: `it changed after signing: key ${sig.key} signed ${sig.digest}, the files are now ${expected.digest}; review the change and sign it again with hookd sign` }
  }
  return { ok: true, key: sig.key }
}

/** Reads a private ed25519 key (PEM PKCS#8 or JWK); a HookdError says what is wrong and what to do. */
export async function readPrivateKey(path: string): Promise<KeyObject> {
  const text = await readKeyText(path)
  let key: KeyObject
  try {
    key = text.trimStart().startsWith('{') ? createPrivateKey({ key: JSON.parse(text) as import('node:crypto').JsonWebKey, format: 'jwk' }) : createPrivateKey(text)
  } catch (err) {
    throw new HookdError('invalid-argument', `${path} is not a private key hookd reads (${(err as Error).message}); make one with hookd keygen, or openssl genpkey -algorithm ed25519 -out ${path}`)
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new HookdError('invalid-argument', `${path} is a ${key.asymmetricKeyType ?? 'unknown'} key; hookd signs with ed25519 keys: make one with hookd keygen`)
  return key
}

/** Reads a trusted-keys file (PEM SPKI blocks, or {"keys": [JWK, ...]}); a HookdError when it holds none. */
export async function readTrustedKeys(path: string): Promise<TrustedKeys> {
  const text = await readKeyText(path)
  const keys = new Map<string, KeyObject>()
  const add = (make: () => KeyObject, which: string): void => {
    let key: KeyObject
    try {
      key = make()
    } catch (err) {
      throw new HookdError('invalid-argument', `${path}: ${which} is not a public key (${(err as Error).message}); list PEM public keys (hookd keygen writes KEY.pub) or {"keys": [JWK, ...]}`)
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new HookdError('invalid-argument', `${path}: ${which} is a ${key.asymmetricKeyType ?? 'unknown'} key; hookd trusts ed25519 keys only`)
    keys.set(fingerprint(key), key.type === 'private' ? createPublicKey(key) : key)
  }
  if (text.trimStart().startsWith('{')) {
    const parsed = parseJson(text, path, { maxDepth: 6, maxBytes: KEY_FILE_MAX_BYTES })
    const list = parsed.ok ? (parsed.value as { keys?: unknown }).keys : undefined
    if (!Array.isArray(list)) throw new HookdError('invalid-argument', `${path} must be PEM public keys or {"keys": [JWK, ...]}`)
    list.forEach((jwk, i) => add(() => createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }), `key ${i + 1}`))
  } else {
    const blocks = text.match(/-----BEGIN PUBLIC KEY-----[\s\S]*?-----END PUBLIC KEY-----/g) ?? []
    blocks.forEach((pem, i) => add(() => createPublicKey(pem), `key ${i + 1}`))
  }
  if (keys.size === 0) throw new HookdError('invalid-argument', `${path} holds no public key; list one or more PEM public keys (-----BEGIN PUBLIC KEY-----), as hookd keygen writes to KEY.pub`)
  return keys
}

async function readKeyText(path: string): Promise<string> {
  const file = await readRegularFile(path, KEY_FILE_MAX_BYTES)
  if (!file.ok) throw new HookdError(file.reason === 'missing' ? 'not-found' : 'failed-precondition', `${path} ${file.why}${file.reason === 'missing' ? '; make a key with hookd keygen --out FILE' : ''}`)
  return file.text
}
