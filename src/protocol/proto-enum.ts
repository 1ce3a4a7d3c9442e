/**
 * A proto enum, both ways, from one table: hookd's names for its values (`read-write`), in the proto's
 * order, and from them the proto's names (`FILE_ACCESS_READ_WRITE`: the prefix, then the value
 * upper-cased with '-' as '_'). Every enum field of the wire (wire.ts) is read and written through
 * one: `field` is the zod codec of such a field as proto-loader decodes it (`enums: String`), which
 * reads a name as hookd's value and writes a value as its name; `toWire` and `fromWire` are the same
 * two directions for a single value.
 *
 * What a name outside the table reads as is said once per enum: the zero `PREFIX_UNSPECIFIED` may
 * read as one of the values (`unspecified`), and any other name as `unknown` (a newer peer's value, or
 * the zero of an enum whose zero is no value). Without `unknown` such a name is refused: the field
 * fails validation, naming the names it takes.
 */
import * as z from 'zod'

export interface ProtoEnum<V extends string, U> {
  /** hookd's names, in the proto's order. */
  readonly values: readonly V[]
  /** The proto's names this table reads: the zero's first when it reads as a value, then the values'. */
  readonly names: readonly string[]
  /** The proto's name of a value (of anything else, the zero's). */
  toWire(value: V | U): string
  /** hookd's value of a proto name. */
  fromWire(name: string): V | U
  /** A message field of this enum: decodes a name to a value (or refuses it), encodes a value to its name. */
  readonly field: z.ZodCodec<z.ZodType<string, string>, z.ZodType<V | U, V | U>>
}

export function protoEnum<const V extends string>(prefix: string, values: readonly V[], options?: { unspecified?: V }): ProtoEnum<V, never>
export function protoEnum<const V extends string, const U extends V | undefined>(
  prefix: string,
  values: readonly V[],
  options: { unspecified?: V; unknown: U },
): ProtoEnum<V, U>
export function protoEnum<V extends string, U extends V | undefined>(
  prefix: string,
  values: readonly V[],
  options: { unspecified?: V; unknown?: U } = {},
): ProtoEnum<V, U> {
  const zero = `${prefix}UNSPECIFIED`
  const nameOf = (value: V): string => `${prefix}${value.toUpperCase().replaceAll('-', '_')}`
  const byName = new Map<string, V>(options.unspecified === undefined ? [] : [[zero, options.unspecified]])
  for (const value of values) byName.set(nameOf(value), value)
  const names = [...byName.keys()]
  const tolerant = 'unknown' in options
  const fromWire = (name: string): V | U => byName.get(name) ?? (options.unknown as U)
  const toWire = (value: V | U): string => (value !== undefined && values.includes(value as V) ? nameOf(value as V) : zero)
  const known = (value: unknown): value is V | U => values.includes(value as V) || (tolerant && value === options.unknown)
  const wire: z.ZodType<string, string> = tolerant ? z.string() : z.enum(names as [string, ...string[]])
  const field = z.codec(wire, z.custom<V | U>(known), { decode: fromWire, encode: toWire })
  return { values, names, toWire, fromWire, field }
}
