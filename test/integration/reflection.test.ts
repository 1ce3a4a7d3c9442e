/**
 * gRPC server reflection: a generic client that has no copy of the proto lists the sidecar's services,
 * reads their descriptors, and calls one, as grpcurl would.
 */
import { createRequire } from 'node:module'
import { join } from 'node:path'
import * as grpc from '@grpc/grpc-js'
import * as protoLoader from '@grpc/proto-loader'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXAMPLE_HOOKS, type Running, startSidecar } from '../support/sidecar.js'

const require = createRequire(import.meta.url)
const REFLECTION_PROTO = join(require.resolve('@grpc/reflection/package.json'), '..', 'build', 'proto', 'grpc', 'reflection', 'v1', 'reflection.proto')

interface DescriptorModule {
  FileDescriptorProto: {
    decode(bytes: Uint8Array): {
      name: string
      package: string
      service: Array<{ name: string; method: Array<{ name: string; inputType: string; outputType: string }> }>
    }
  }
}
// protobufjs's descriptor.proto bindings (a dependency of @grpc/proto-loader) decode what reflection sends.
const descriptor = require('protobufjs/ext/descriptor') as DescriptorModule

type Stream = grpc.ClientDuplexStream<Record<string, unknown>, Record<string, unknown>>

let running: Running
let reflection: grpc.Client & { ServerReflectionInfo(): Stream }

/** One request, one answer, on a fresh reflection stream. */
function ask(request: Record<string, unknown>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const stream = reflection.ServerReflectionInfo()
    stream.on('data', (answer: Record<string, unknown>) => {
      resolve(answer)
      stream.end()
    })
    stream.on('error', reject)
    stream.write(request)
  })
}

beforeAll(async () => {
  running = await startSidecar({ hooks: EXAMPLE_HOOKS })
  const def = protoLoader.loadSync(REFLECTION_PROTO, { keepCase: true, longs: Number, enums: String, defaults: true, oneofs: true })
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: new (target: string, creds: grpc.ChannelCredentials) => typeof reflection } } }
  }
  reflection = new pkg.grpc.reflection.v1.ServerReflection(running.address, grpc.credentials.createInsecure())
})

afterAll(async () => {
  reflection?.close()
  await running?.stop()
})

describe('server reflection', () => {
  it('lists the services the sidecar serves', async () => {
    const answer = await ask({ list_services: '' })
    const services = (answer.list_services_response as { service: Array<{ name: string }> }).service.map((s) => s.name)
    expect(services.sort()).toEqual(['grpc.health.v1.Health', 'hookd.v1.HookExecutor'])
  })

  it('describes HookExecutor well enough to call it', async () => {
    const answer = await ask({ file_containing_symbol: 'hookd.v1.HookExecutor' })
    const files = (answer.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto.map((b) =>
      descriptor.FileDescriptorProto.decode(b),
    )
    const service = files.flatMap((f) => f.service.map((s) => ({ ...s, pkg: f.package }))).find((s) => s.name === 'HookExecutor')
    expect(service?.pkg).toBe('hookd.v1')
    expect(service?.method.map((m) => `${m.name}(${m.inputType}) -> ${m.outputType}`)).toEqual([
      'Session(.hookd.v1.HostMessage) -> .hookd.v1.SidecarMessage',
      'Invoke(.hookd.v1.InvokeRequest) -> .hookd.v1.InvokeResponse',
      'ListHooks(.hookd.v1.ListHooksRequest) -> .hookd.v1.ListHooksResponse',
    ])
  })

  it('names the files as the repositories do, so that a client can ask by file name (issue 15.9)', async () => {
    const byFile = async (name: string) => {
      const answer = await ask({ file_by_filename: name })
      return (answer.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto.map((b) => descriptor.FileDescriptorProto.decode(b))
    }
    const [hookd] = await byFile('hookd/v1/hookd.proto')
    expect(hookd?.name).toBe('hookd/v1/hookd.proto')
    expect(hookd?.package).toBe('hookd.v1')
    expect(hookd?.service.map((s) => s.name)).toEqual(['HookExecutor'])
    const [health] = await byFile('grpc/health/v1/health.proto')
    expect(health?.name).toBe('grpc/health/v1/health.proto')
    expect(health?.service.map((s) => s.name)).toEqual(['Health'])
    // A symbol's file is reported under the same name.
    const bySymbol = await ask({ file_containing_symbol: 'hookd.v1.OpenSession' })
    const files = (bySymbol.file_descriptor_response as { file_descriptor_proto: Buffer[] }).file_descriptor_proto.map((b) => descriptor.FileDescriptorProto.decode(b).name)
    expect(files).toEqual(['hookd/v1/hookd.proto'])
    // The name protobufjs would have made up is not served.
    const madeUp = await ask({ file_by_filename: 'hookd_v1.proto' })
    expect(madeUp.error_response).toMatchObject({ error_code: grpc.status.NOT_FOUND })
  })

  it('answers NOT_FOUND for a symbol it does not serve', async () => {
    const answer = await ask({ file_containing_symbol: 'hookd.v1.Nope' })
    expect(answer.error_response).toMatchObject({ error_code: grpc.status.NOT_FOUND })
  })

  it('serves a call made from the reflected descriptors alone', async () => {
    // A generic client: build the method from reflection's answer, encode an empty ListHooksRequest.
    const client = new grpc.Client(running.address, grpc.credentials.createInsecure())
    const reply = await new Promise<Buffer>((resolve, reject) =>
      client.makeUnaryRequest(
        '/hookd.v1.HookExecutor/ListHooks',
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        (err, res) => (err ? reject(err) : resolve(res as Buffer)),
      ),
    )
    client.close()
    // The examples' hook names are in the encoded ListHooksResponse.
    expect(reply.toString('latin1')).toContain('guard')
  })
})
