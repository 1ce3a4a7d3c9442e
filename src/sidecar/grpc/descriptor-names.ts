/**
 * Real file names for the proto descriptors reflection serves. @grpc/proto-loader builds its file
 * descriptors with protobufjs, which names each one after its package (`hookd_v1.proto`), so a client
 * that asks reflection for `hookd/v1/hookd.proto` (grpcurl's `describe` by file, `file_by_filename`)
 * would get NOT_FOUND for the name every document uses. This rewrites the `name` field of each
 * serialized FileDescriptorProto to the file's real path, by package.
 *
 * It edits the protobuf wire format directly (one top-level string field), so that no descriptor
 * library beyond what @grpc/reflection already loads is needed. The files renamed here import nothing,
 * so no `dependency` entry has to follow.
 */
import type * as protoLoader from '@grpc/proto-loader'

/** FileDescriptorProto's field numbers (google/protobuf/descriptor.proto). */
const NAME_FIELD = 1
const PACKAGE_FIELD = 2
const LENGTH_DELIMITED = 2

interface Field {
  number: number
  wireType: number
  /** The whole field, tag included. */
  start: number
  end: number
  /** For a length-delimited field: where its payload starts. */
  payload: number
}

function readVarint(bytes: Uint8Array, at: number): { value: number; next: number } {
  let value = 0
  let shift = 0
  for (let i = at; i < bytes.length; i++) {
    const byte = bytes[i] as number
    value += (byte & 0x7f) * 2 ** shift
    if ((byte & 0x80) === 0) return { value, next: i + 1 }
    shift += 7
  }
  throw new Error('a truncated varint in a file descriptor')
}

function writeVarint(value: number): number[] {
  const out: number[] = []
  let v = value
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80)
    v = Math.floor(v / 0x80)
  }
  out.push(v)
  return out
}

/** The top-level fields of one serialized message. */
function fields(bytes: Uint8Array): Field[] {
  const out: Field[] = []
  let at = 0
  while (at < bytes.length) {
    const start = at
    const tag = readVarint(bytes, at)
    const wireType = tag.value % 8
    const number = Math.floor(tag.value / 8)
    at = tag.next
    let payload = at
    if (wireType === 0) at = readVarint(bytes, at).next
    else if (wireType === 1) at += 8
    else if (wireType === 5) at += 4
    else if (wireType === LENGTH_DELIMITED) {
      const length = readVarint(bytes, at)
      payload = length.next
      at = length.next + length.value
    } else throw new Error(`wire type ${wireType} in a file descriptor`)
    out.push({ number, wireType, start, end: at, payload })
  }
  return out
}

const text = (bytes: Uint8Array, field: Field): string => Buffer.from(bytes.subarray(field.payload, field.end)).toString('utf8')

/** `descriptor` with its name set to `names[its package]`; unchanged when its package is not listed. */
export function renameDescriptor(descriptor: Uint8Array, names: Readonly<Record<string, string>>): Buffer {
  const all = fields(descriptor)
  const pkg = all.find((f) => f.number === PACKAGE_FIELD && f.wireType === LENGTH_DELIMITED)
  const name = pkg ? names[text(descriptor, pkg)] : undefined
  if (name === undefined) return Buffer.from(descriptor)
  const nameBytes = Buffer.from(name, 'utf8')
  const nameField = Buffer.from([...writeVarint(NAME_FIELD * 8 + LENGTH_DELIMITED), ...writeVarint(nameBytes.length), ...nameBytes])
  const rest = all.filter((f) => f.number !== NAME_FIELD).map((f) => descriptor.subarray(f.start, f.end))
  return Buffer.concat([nameField, ...rest])
}

/** The descriptors of a message or enum type's file; none for a service (a map of its methods). */
function typeFiles(value: protoLoader.AnyDefinition): Buffer[] | undefined {
  return typeof value.format === 'string' && Array.isArray(value.fileDescriptorProtos) ? value.fileDescriptorProtos : undefined
}

/** `definition` with every type's file descriptors renamed by package (see renameDescriptor). */
export function withRealFileNames(definition: protoLoader.PackageDefinition, names: Readonly<Record<string, string>>): protoLoader.PackageDefinition {
  const out: protoLoader.PackageDefinition = {}
  for (const [key, value] of Object.entries(definition)) {
    // Message and enum types carry their file's descriptors; a service's definition (its methods) does not.
    const files = typeFiles(value)
    // The same kind of definition as `value`, with other descriptors (the spread loses the union's tag).
    out[key] = files ? ({ ...value, fileDescriptorProtos: files.map((b) => renameDescriptor(b, names)) } as protoLoader.AnyDefinition) : value
  }
  return out
}
