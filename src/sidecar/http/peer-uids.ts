/**
 * The users on the other end of many loopback connections at once, from one read of the kernel's
 * socket tables (peer-user.ts says how a connection appears there). The connection guard asks for
 * whole batches: a table holds every socket of the machine (TIME_WAIT ones too, thousands under a
 * flood of connections), so reading it once per connection would cost the main thread a full parse
 * per connection; once per batch costs one.
 */
import { readFile } from 'node:fs/promises'
import { type Connection, encode } from './peer-user.js'

const TABLES = ['/proc/net/tcp', '/proc/net/tcp6']
const MAX_TABLE_BYTES = 64 * 1024 * 1024

/** Each connection's client uid, in order; undefined where the tables do not say. */
export async function peerUids(connections: readonly Connection[], tables: readonly string[] = TABLES): Promise<Array<number | undefined>> {
  const wanted = connections.map((c) => ({ client: encode(c.remote) ?? [], server: encode(c.local) ?? [] }))
  const clientEnds = new Set(wanted.flatMap((w) => w.client))
  const uids: Array<number | undefined> = connections.map(() => undefined)
  if (clientEnds.size === 0) return uids
  // `clientEnd serverEnd` -> uid, for the lines whose local end is one of the clients'.
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
    for (const line of text.split('\n')) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
      const fields = line.trim().split(/\s+/, 8)
      if (fields.length < 8) continue
      const local = (fields[1] as string).toUpperCase()
      if (!clientEnds.has(local)) continue
      const uid = Number(fields[7])
      if (Number.isInteger(uid) && uid >= 0) owners.set(`${local} ${(fields[2] as string).toUpperCase()}`, uid)
    }
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
