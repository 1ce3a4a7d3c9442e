/**
 * A Unix-socket relay in front of the sidecar, one listener per gRPC host, so that the soak can drop a
 * host's connection mid-call the way a network does: both sockets destroyed at once, whatever is in
 * flight on them. A relay whose sidecar is gone (a restart) closes the host's connection at once, as a
 * refused connection would.
 */
import { type Server, type Socket, connect, createServer } from 'node:net'
import { unlink } from 'node:fs/promises'

export class ConnProxy {
  private readonly pairs = new Set<[Socket, Socket]>()
  private dropped = 0

  private constructor(
    private readonly server: Server,
    /** The address hosts connect to. */
    readonly address: string,
  ) {}

  static async listen(path: string, target: string): Promise<ConnProxy> {
    await unlink(path).catch(() => {})
    let proxy: ConnProxy | undefined
    const server = createServer((client) => {
      const upstream = connect(target)
      const pair: [Socket, Socket] = [client, upstream]
      proxy?.pairs.add(pair)
      const end = (): void => {
        proxy?.pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      client.on('error', end).on('close', end)
      upstream.on('error', end).on('close', end)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(path, () => resolve())
    })
    proxy = new ConnProxy(server, `unix:${path}`)
    return proxy
  }

  /** Destroys every open connection; returns how many there were. */
  drop(): number {
    const n = this.pairs.size
    for (const [client, upstream] of [...this.pairs]) {
      client.destroy()
      upstream.destroy()
    }
    this.pairs.clear()
    this.dropped += n
    return n
  }

  get connections(): number {
    return this.pairs.size
  }

  async close(): Promise<void> {
    this.drop()
    await new Promise<void>((resolve) => this.server.close(() => resolve()))
  }
}
