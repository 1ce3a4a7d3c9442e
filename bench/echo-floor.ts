/**
 * The latency floors of the two process boundaries a hook call crosses, measured by bench/run.ts in
 * the same run as hookd: run as a child process, this answers a bidirectional gRPC stream on a Unix
 * socket and Node IPC messages by echoing them, doing nothing else. A host's call to hookd crosses the
 * first boundary (host -> sidecar) and the second (sidecar -> sandbox worker), then the worker's hop
 * to the isolate's thread, each way; on an idle machine each crossing also pays for waking a process.
 *
 *   echo-floor.ts ADDRESS   (forked with an IPC channel; sends 'ready' once the socket listens)
 */
import * as grpc from '@grpc/grpc-js'

/** A one-method service on raw bytes: no protobuf, no validation, the least grpc-js can do. */
export const ECHO_SERVICE: grpc.ServiceDefinition = {
  Echo: {
    path: '/hookd.bench.Echo/Echo',
    requestStream: true,
    responseStream: true,
    requestSerialize: (b: Buffer) => b,
    requestDeserialize: (b: Buffer) => b,
    responseSerialize: (b: Buffer) => b,
    responseDeserialize: (b: Buffer) => b,
    originalName: 'echo',
  },
}

async function serve(address: string): Promise<void> {
  const server = new grpc.Server()
  server.addService(ECHO_SERVICE, {
    Echo: (call: grpc.ServerDuplexStream<Buffer, Buffer>) => {
      call.on('data', (frame: Buffer) => call.write(frame))
      call.on('end', () => call.end())
    },
  })
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
  )
  process.on('message', (message) => process.send?.(message))
  process.on('disconnect', () => server.forceShutdown())
  process.send?.('ready')
}

const address = process.argv[2]
if (address) await serve(address)
