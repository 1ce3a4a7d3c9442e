/**
 * Who is on the other end of a loopback TCP connection: the uid that owns the client's socket, read
 * from the kernel's socket tables (/proc/net/tcp and /proc/net/tcp6, Linux). A connection from
 * 127.0.0.1:54321 to the front door appears there twice: once as the front door's accepted socket,
 * and once as the client's own, with local and remote swapped and the client's uid.
 *
 * The front door uses it to tell the agents' users apart: who may post events for which folder, and
 * how many connections one user may hold. Undefined when the tables do not say (not Linux, another
 * network namespace, the client already gone): callers treat that as "an unknown user", never as the
 * sidecar's own.
 */
import { readFile } from 'node:fs/promises'
import { isIPv4, isIPv6 } from 'node:net'

export interface Endpoint {
  address: string
  port: number
}

/** The two ends of a connection as the server sees them. */
export interface Connection {
  /** The server's end (the front door's address). */
  local: Endpoint
  /** The client's end. */
  remote: Endpoint
}

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6']
/** The most of a socket table read: far more than a busy machine holds, bounded all the same. */
const MAX_TABLE_BYTES = 64 * 1024 * 1024

/**
 * The uid owning the client's socket of `connection`, or undefined when the kernel's tables do not
 * list it. `tables` is where they are read (tests pass their own).
 */
export async function peerUid(connection: Connection, tables: readonly string[] = TABLES): Promise<number | undefined> {
  return (await peerUids([connection], tables))[0]
}

/**
 * Each connection's client uid, in order (undefined where the tables do not say), from one read of
 * the tables. The connection guard asks for whole batches: a table holds every socket of the machine
 * (TIME_WAIT ones too, thousands under a flood of connections), so reading it once per connection
 * would cost the main thread a full parse per connection; once per batch costs one.
 */
export async function peerUids(connections: readonly Connection[], tables: readonly string[] = TABLES): Promise<Array<number | undefined>> {
  const wanted = connections.map((c) => ({ client: encode(c.remote) ?? [], server: encode(c.local) ?? [] }))
  const clientEnds = new Set(wanted.flatMap((w) => w.client))
  const uids: Array<number | undefined> = connections.map(() => undefined)
  if (clientEnds.size === 0) return uids
  const owners = new Map<string, number>()
  for (const table of tables) {
    let text: string
    try {
      const data = await readFile(table)
      if (data.length > MAX_TABLE_BYTES) continue
      text = data.toString('latin1')
    } catch {
      continue
    }
    for (const [ends, uid] of tableOwners(text, clientEnds)) if (!owners.has(ends)) owners.set(ends, uid)
  }
  wanted.forEach((w, i) => {
    for (const client of w.client) {
      for (const server of w.server) {
        const uid = owners.get(`${client} ${server}`)
        if (uid !== undefined && uids[i] === undefined) uids[i] = uid
      }
    }
  })
  return uids
}

/** `clientEnd serverEnd` -> uid, for the table's lines whose local end is one of `clientEnds`. */
export function tableOwners(table: string, clientEnds: ReadonlySet<string>): Map<string, number> {
  const owners = new Map<string, number>()
  for (const line of table.split('\n')) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
    const fields = line.trim().split(/\s+/, 8)
    if (fields.length < 8) continue
    const local = (fields[1] as string).toUpperCase()
    if (!clientEnds.has(local)) continue
    const uid = Number(fields[7])
    if (Number.isInteger(uid) && uid >= 0) owners.set(`${local} ${(fields[2] as string).toUpperCase()}`, uid)
  }
  return owners
}

/**
 * An endpoint as the tables write it, in each form it may take there: an IPv4 address as the 32-bit
 * word the kernel prints in host byte order, an IPv6 address as four such words, the port in hex; an
 * IPv4 address a dual-stack server sees as `::ffff:a.b.c.d` may be listed either way.
 */
export function encode(endpoint: Endpoint): string[] | undefined {
  const port = endpoint.port.toString(16).toUpperCase().padStart(4, '0')
  if (!Number.isInteger(endpoint.port) || endpoint.port < 0 || endpoint.port > 0xffff) return undefined
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(endpoint.address)
  const v4 = mapped ? mapped[1] as string : isIPv4(endpoint.address) ? endpoint.address : undefined
  if (v4) {
    const bytes = v4.split('.').map(Number)
    return [...words(bytes), ...words([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...bytes])].map((w) => `${w}:${port}`)
  }
  if (!isIPv6(endpoint.address)) return undefined
  const bytes = ipv6Bytes(endpoint.address)
  return bytes ? words(bytes).map((w) => `${w}:${port}`) : undefined
}

/**
 * Bytes as the kernel prints an address: 32-bit words in the machine's byte order, so the last byte of
 * each word first on a little-endian machine (x86, arm64) and in order on a big-endian one.
 */
function words(bytes: readonly number[]): string[] {
  const hex = (b: readonly number[]): string => b.map((n) => n.toString(16).toUpperCase().padStart(2, '0')).join('')
  let little = ''
  let big = ''
  for (let i = 0; i < bytes.length; i += 4) {
    const word = bytes.slice(i, i + 4)
    little += hex([...word].reverse())
    big += hex(word)
  }
  return little === big ? [little] : [little, big]
}

function ipv6Bytes(address: string): number[] | undefined {
  const [head = '', tail] = address.split('::', 2)
  const parts = (s: string): string[] => (s === '' ? [] : s.split(':'))
  const front = parts(head)
  const back = tail === undefined ? [] : parts(tail)
  const missing = 8 - front.length - back.length
  if (missing < 0 || (tail === undefined && missing !== 0)) return undefined
  const groups = [...front, ...Array<string>(missing).fill('0'), ...back]
  const bytes: number[] = []
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined
    const n = Number.parseInt(g, 16)
    bytes.push(n >> 8, n & 0xff)
  }
  return bytes
}
