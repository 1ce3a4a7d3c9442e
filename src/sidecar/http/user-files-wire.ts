/**
 * The boundary between the front door and a file helper (user-files.ts starts one per agent user,
 * user-files-main.ts is its process): every message that crosses it, and the framing. Frames are a
 * 4-byte big-endian length and that many bytes of UTF-8 JSON, bounded both ways; file texts cross as
 * base64 of their UTF-8, so that no text can grow a frame past its bound by JSON escaping.
 *
 * The helper runs as the agent's user, who may take it over (it is their process): what it sends is
 * validated here and bounded like anything else from outside.
 */
import * as z from 'zod'
import { MAX_LIST_ENTRIES, MAX_SHORT_CHARS } from '../../protocol/capabilities.js'

/** The largest frame either side accepts: a 4 MiB file whose invalid bytes each became U+FFFD, in base64. */
export const MAX_FRAME_BYTES = 24 * 1024 * 1024

export const FILE_OPS = ['read', 'write', 'append', 'exists', 'list'] as const
export type FileOp = (typeof FILE_OPS)[number]

const rootWire = z.strictObject({
  path: z.string().max(MAX_SHORT_CHARS),
  refuses: z.enum(['write', 'read-write']),
  what: z.string().max(256),
  why: z.string().max(1024),
  file: z.boolean().optional(),
})

/** One file capability call, with the run's folder and protections (the helper keeps handlers per run). */
export const callWire = z.strictObject({
  kind: z.literal('call'),
  id: z.number().int().nonnegative(),
  run: z.number().int().nonnegative(),
  op: z.enum(FILE_OPS),
  workdir: z.string().max(MAX_SHORT_CHARS),
  pin: z.strictObject({ dev: z.string().max(32), ino: z.string().max(32) }),
  roots: z.array(rootWire).max(64),
  path: z.string().max(MAX_SHORT_CHARS),
  /** write and append: the text, base64 of its UTF-8. */
  text: z.string().optional(),
  origin: z.strictObject({ hook: z.string().max(MAX_SHORT_CHARS), point: z.string().max(256), seq: z.number().int().nonnegative() }),
})

/** A run has ended: its handlers (and their write budget) can go. */
export const forgetWire = z.strictObject({ kind: z.literal('forget'), run: z.number().int().nonnegative() })

export const toHelperWire = z.discriminatedUnion('kind', [callWire, forgetWire])
export type ToHelper = z.infer<typeof toHelperWire>
export type FileCall = z.infer<typeof callWire>

/** A call's value: read's text as base64, exists's boolean, list's names, null for write and append. */
const valueWire = z.union([z.strictObject({ text: z.string() }), z.boolean(), z.array(z.string().max(MAX_SHORT_CHARS)).max(MAX_LIST_ENTRIES), z.null()])

export const fromHelperWire = z.union([
  z.strictObject({ kind: z.literal('ready') }),
  z.strictObject({ kind: z.literal('reply'), id: z.number().int().nonnegative(), ok: z.literal(true), value: valueWire }),
  z.strictObject({ kind: z.literal('reply'), id: z.number().int().nonnegative(), ok: z.literal(false), code: z.string().max(64), message: z.string().max(4 * MAX_SHORT_CHARS) }),
])
export type FromHelper = z.infer<typeof fromHelperWire>

/** A message as one frame. */
export function frame(message: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8')
  const head = Buffer.alloc(4)
  head.writeUInt32BE(body.length)
  return Buffer.concat([head, body])
}

/** Cuts a byte stream into frames' JSON values; throws on a frame over MAX_FRAME_BYTES or one that is not JSON. */
export class FrameReader {
  private buffered: Buffer[] = []
  private size = 0

  push(chunk: Buffer): unknown[] {
    this.buffered.push(chunk)
    this.size += chunk.length
    const out: unknown[] = []
    for (;;) {
      if (this.size < 4) return out
      const all = this.buffered.length === 1 ? (this.buffered[0] as Buffer) : Buffer.concat(this.buffered)
      this.buffered = [all]
      const length = all.readUInt32BE(0)
      if (length > MAX_FRAME_BYTES) throw new Error(`a frame of ${length} bytes, over the limit of ${MAX_FRAME_BYTES}`)
      if (all.length < 4 + length) return out
      out.push(JSON.parse(all.subarray(4, 4 + length).toString('utf8')) as unknown)
      const rest = all.subarray(4 + length)
      this.buffered = rest.length ? [rest] : []
      this.size = rest.length
    }
  }
}
