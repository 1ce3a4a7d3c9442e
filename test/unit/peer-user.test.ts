import { spawn } from 'node:child_process'
import { type Server, type Socket, connect, createServer } from 'node:net'
import { describe, expect, it } from 'vitest'
import { encode, peerUid, tableOwners } from '../../src/sidecar/http/peer-user.js'

async function listen(host: string): Promise<{ server: Server; port: number; next: () => Promise<Socket> }> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const port = (server.address() as { port: number }).port
  return { server, port, next: () => new Promise<Socket>((resolve) => server.once('connection', resolve)) }
}

function ends(sock: Socket): Parameters<typeof peerUid>[0] {
  return {
    local: { address: sock.localAddress as string, port: sock.localPort as number },
    remote: { address: sock.remoteAddress as string, port: sock.remotePort as number },
  }
}

describe('peerUid', () => {
  it("finds the uid that owns the client's end of a real loopback connection, over IPv4 and IPv6", async () => {
    for (const host of ['127.0.0.1', '::1']) {
      const { server, port, next } = await listen(host)
      const accepted = next()
      const client = connect(port, host)
      const sock = await accepted
      expect(await peerUid(ends(sock))).toBe(process.getuid?.())
      client.destroy()
      sock.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it.skipIf(process.getuid?.() !== 0)("names another user's connection by that user's uid, not the server's", async () => {
    const { server, port, next } = await listen('127.0.0.1')
    const accepted = next()
    const uid = 1_900_004_321
    // A client running as another uid holds its connection open until the test ends it.
    const client = spawn('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', process.execPath, '-e', `require('net').connect(${port}, '127.0.0.1'); setTimeout(() => {}, 30000)`], { stdio: 'ignore' })
    try {
      const sock = await accepted
      expect(await peerUid(ends(sock))).toBe(uid)
      sock.destroy()
    } finally {
      client.kill()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('reads the table lines as the kernel writes them, and is undefined for a connection it does not list', () => {
    const table = [
      '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
      '   0: 0100007F:1CDE 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 1 1',
      '   1: 0100007F:D431 0100007F:1CDE 01 00000000:00000000 00:00000000 00000000  1000        0 2 1',
    ].join('\n')
    const client = encode({ address: '127.0.0.1', port: 0xd431 }) as string[]
    const server = encode({ address: '::ffff:127.0.0.1', port: 0x1cde }) as string[]
    const owners = tableOwners(table, new Set(client))
    expect(server.map((end) => owners.get(`${client[0]} ${end}`))).toContain(1000)
    expect(tableOwners(table, new Set(encode({ address: '127.0.0.1', port: 1 }) as string[])).size).toBe(0)
    expect(encode({ address: 'not an address', port: 1 })).toBeUndefined()
    expect(encode({ address: '::1', port: 80 })).toContain('00000000000000000000000001000000:0050')
  })
})
