/**
 * deploy/kubernetes/, validated offline: against the Kubernetes 1.33 schema (kubernetes-models), with
 * unknown fields refused as the API server refuses them, against the rules the manifests promise, and
 * with the hooks their ConfigMaps carry loaded by `hookd check` from the layout the kubelet gives a
 * ConfigMap volume.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Manifest, loadManifests, schemaProblems, unknownFieldProblems } from '../support/deploy/kubernetes-manifests.js'
import { manifestProblems } from '../support/deploy/kubernetes-rules.js'
import { ROOT, runInProcess } from '../support/processes.js'

const DIR = join(ROOT, 'deploy', 'kubernetes')

let manifests: Manifest[]

beforeAll(async () => {
  manifests = await loadManifests(DIR)
})

interface PodTemplate {
  spec: {
    initContainers?: Array<Record<string, unknown> & { args: string[]; securityContext: Record<string, unknown>; livenessProbe: { grpc: { port: number } } }>
    containers: Array<Record<string, unknown> & { name?: string; args?: string[]; volumeMounts?: Array<{ name: string; mountPath: string }> }>
    volumes?: Array<{ name: string; configMap?: { name: string; items?: Array<{ key: string; path: string }> } }>
    terminationGracePeriodSeconds?: number
  }
}

function find(file: string, kind: string): Manifest {
  const m = manifests.find((x) => x.file === file && x.doc.kind === kind)
  if (!m) throw new Error(`no ${kind} in ${file}`)
  return m
}

function podTemplate(m: Manifest): PodTemplate {
  return (m.doc.spec as { template: PodTemplate }).template
}

describe('the Kubernetes manifests', () => {
  it('are the sidecar and the shared deployment', () => {
    expect(manifests.map((m) => `${m.file} ${String(m.doc.kind)}/${String(m.doc.metadata?.name)}`)).toEqual([
      'shared/hookd.yaml ConfigMap/hookd-tenant-hooks',
      'shared/hookd.yaml Deployment/hookd',
      'shared/hookd.yaml Service/hookd',
      'shared/hookd.yaml Service/hookd-headless',
      'shared/hookd.yaml PodDisruptionBudget/hookd',
      'shared/hookd.yaml NetworkPolicy/hookd',
      'sidecar/agent-with-hookd.yaml ConfigMap/agent-hooks',
      'sidecar/agent-with-hookd.yaml Deployment/agent',
    ])
  })

  it('fit the Kubernetes 1.33 schema', async () => {
    expect(await schemaProblems(manifests)).toEqual([])
  })

  it('have no field their kind does not know', () => {
    expect(unknownFieldProblems(manifests, ROOT)).toEqual([])
  })

  it('keep the rules: locked-down containers, gRPC probes on the health port, a native sidecar, a grace period that outlasts the drain', () => {
    expect(manifestProblems(manifests)).toEqual([])
  })

  it('fail on deliberate mistakes, each naming the document and the field', async () => {
    const broken = structuredClone(manifests)
    const agent = broken.find((m) => m.file.startsWith('sidecar/') && m.doc.kind === 'Deployment') as Manifest
    const pod = podTemplate(agent).spec
    const hookd = (pod.initContainers ?? [])[0] as NonNullable<PodTemplate['spec']['initContainers']>[number]
    hookd.ports = [{ name: 'health', containerPort: 8081, protocol: 'TPC' }]
    delete hookd.restartPolicy
    delete hookd.securityContext.readOnlyRootFilesystem
    hookd.securityContext.readOnlyRootFileSystem = true
    hookd.livenessProbe.grpc.port = 8082
    hookd.args[hookd.args.indexOf('--log-format') + 1] = 'xml'
    pod.terminationGracePeriodSeconds = 10
    delete pod.containers[0]?.name

    // The shared deployment pauses 5 s in preStop before SIGTERM: that counts against the period too.
    const shared = broken.find((m) => m.file.startsWith('shared/') && m.doc.kind === 'Deployment') as Manifest
    podTemplate(shared).spec.terminationGracePeriodSeconds = 52

    const where = 'sidecar/agent-with-hookd.yaml#1 Deployment/agent'
    expect(await schemaProblems(broken)).toEqual([
      `${where}: /spec/template/spec/containers/0 must have required property name`,
      `${where}: /spec/template/spec/initContainers/0/ports/0/protocol must be equal to one of the allowed values (SCTP, TCP, UDP)`,
    ])
    expect(unknownFieldProblems(broken, ROOT)).toEqual(
      expect.arrayContaining([
        `${where}: /spec/template/spec/initContainers/0/securityContext/readOnlyRootFileSystem Object literal may only specify known properties, and '"readOnlyRootFileSystem"' does not exist in type 'ISecurityContext'.`,
      ]),
    )
    expect(manifestProblems(broken)).toEqual([
      'shared/hookd.yaml#1 Deployment/hookd container hookd: terminationGracePeriodSeconds (52) must exceed the preStop pause (5 s) plus --grace-ms (45000 ms) by at least 5 s, or the drain is cut short by SIGKILL',
      `${where} container hookd: securityContext.readOnlyRootFilesystem must be true`,
      `${where} container hookd: an init container that serves hooks must be a native sidecar (restartPolicy: Always)`,
      `${where} container hookd: livenessProbe must be a gRPC probe on the health port 8081`,
      `${where} container hookd: ports does not list the metrics port 9464 (--metrics)`,
      `${where} container hookd: --log-format xml is not one of text, json`,
      `${where} container hookd: terminationGracePeriodSeconds (10) must exceed --grace-ms (20000 ms) by at least 5 s, or the drain is cut short by SIGKILL`,
    ])
  })

  it('catch a YAML mistake before any schema', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hookd-manifests-'))
    await writeFile(join(dir, 'dup.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  name: b\n')
    await expect(loadManifests(dir)).rejects.toThrow(/dup\.yaml document 0: .*Map keys must be unique/)
    await rm(dir, { recursive: true, force: true })
  })
})

describe('the hooks the manifests mount from ConfigMaps', () => {
  const made: string[] = []
  afterAll(async () => {
    for (const dir of made) await rm(dir, { recursive: true, force: true })
  })

  /**
   * Lays out a ConfigMap volume as the kubelet does: the files in a timestamped folder, `..data` a link
   * to it, and each top-level entry a link through `..data`, which is how hookd will find them.
   */
  async function configMapVolume(volume: NonNullable<PodTemplate['spec']['volumes']>[number]): Promise<string> {
    const source = manifests.find((m) => m.doc.kind === 'ConfigMap' && m.doc.metadata?.name === volume.configMap?.name)
    if (!source) throw new Error(`no ConfigMap ${volume.configMap?.name}`)
    const data = source.doc.data as Record<string, string>
    const root = await mkdtemp(join(tmpdir(), 'hookd-configmap-'))
    made.push(root)
    const stamp = '..2026_01_01_00_00_00.000000001'
    const tops = new Set<string>()
    for (const item of volume.configMap?.items ?? Object.keys(data).map((key) => ({ key, path: key }))) {
      await mkdir(dirname(join(root, stamp, item.path)), { recursive: true })
      await writeFile(join(root, stamp, item.path), data[item.key] as string)
      tops.add(item.path.split('/')[0] as string)
    }
    await symlink(stamp, join(root, '..data'))
    for (const top of tops) await symlink(join('..data', top), join(root, top))
    return root
  }

  it.each([
    // Where hookd looks for hooks in the container: its --hooks, or a tenant's folder in the tenants file.
    ['the agent sidecar', 'sidecar/agent-with-hookd.yaml', '/etc/hookd/hooks', ['guard', 'https-only']],
    ["the shared deployment's tenant acme", 'shared/hookd.yaml', '/srv/hookd/acme', ['guard']],
  ])('%s: every hook loads from the volume as the kubelet lays it out', async (_, file, hooksPath, names) => {
    const template = podTemplate(find(file, 'Deployment'))
    const hookd = [...(template.spec.initContainers ?? []), ...template.spec.containers].find((c) => String(c.image).includes('hookd')) as {
      args: string[]
      volumeMounts: Array<{ name: string; mountPath: string }>
    }
    if (hookd.args.includes('--hooks')) expect(hookd.args[hookd.args.indexOf('--hooks') + 1]).toBe(hooksPath)
    const mount = hookd.volumeMounts.find((v) => hooksPath.startsWith(`${v.mountPath}/`)) as { name: string; mountPath: string }
    const volume = template.spec.volumes?.find((v) => v.name === mount.name) as NonNullable<PodTemplate['spec']['volumes']>[number]
    expect(volume.configMap).toBeDefined()
    const root = await configMapVolume(volume)
    const ran = await runInProcess(['check', join(root, hooksPath.slice(mount.mountPath.length + 1)), '--json'])
    expect(ran.code, ran.stdout + ran.stderr).toBe(0)
    const report = JSON.parse(ran.stdout) as { hooks: Array<{ name: string; ok: boolean; points: string[] }>; problems: unknown[] }
    expect(report.problems).toEqual([])
    expect(report.hooks.map((h) => [h.name, h.ok, h.points])).toEqual(names.map((n) => [n, true, ['beforeToolExecute']]))
  })

  it('a ConfigMap mounted straight at the hooks folder fails: the kubelet links each hook folder, and hookd refuses links', async () => {
    const agent = find('sidecar/agent-with-hookd.yaml', 'Deployment')
    const volume = structuredClone(podTemplate(agent).spec.volumes?.find((v) => v.configMap)) as NonNullable<PodTemplate['spec']['volumes']>[number]
    for (const item of volume.configMap?.items ?? []) item.path = item.path.replace(/^hooks\//, '')
    const root = await configMapVolume(volume)
    const ran = await runInProcess(['check', root, '--json'])
    expect(ran.code).toBe(1)
    expect(ran.stdout).toContain('the hook folder guard is a symbolic link; hookd does not follow symbolic links in hook folders')
  })
})
