/**
 * What hookd's Kubernetes manifests promise beyond the schema (docs/operations.md): every container
 * locked down, hookd probed over gRPC on its --health-listen port, its --metrics port listed, a native sidecar that really is one,
 * a termination grace period that outlasts hookd's drain, a socket folder both containers share, and
 * Services and budgets that select the pods they are for. A function that lists every broken rule, so a
 * test can show each rule catching a deliberate mistake.
 */
import { posix } from 'node:path'
import { LOG_FORMATS, LOG_LEVELS } from '../../../src/sidecar/observability/logger.js'
import { type Manifest, label } from './kubernetes-manifests.js'

type Json = Record<string, unknown>

interface Container {
  name?: string
  image?: string
  args?: string[]
  restartPolicy?: string
  ports?: Array<{ name?: string; containerPort?: number }>
  startupProbe?: Json
  livenessProbe?: Json
  readinessProbe?: Json
  resources?: { requests?: Json; limits?: Json }
  securityContext?: Json & { capabilities?: { drop?: string[] }; seccompProfile?: { type?: string } }
  volumeMounts?: Array<{ name?: string; mountPath?: string }>
  lifecycle?: { preStop?: { exec?: { command?: string[] }; sleep?: { seconds?: number } } }
}

interface PodSpec {
  terminationGracePeriodSeconds?: number
  automountServiceAccountToken?: boolean
  securityContext?: Json & { seccompProfile?: { type?: string } }
  initContainers?: Container[]
  containers?: Container[]
  volumes?: Array<{ name?: string; emptyDir?: Json }>
}

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job'])

/** Every broken rule, one sentence each, naming the document and container; [] when all hold. */
export function manifestProblems(manifests: Manifest[]): string[] {
  const problems: string[] = []
  const podLabels: Array<Record<string, string>> = []
  for (const m of manifests) {
    const kind = m.doc.kind as string
    const spec = (m.doc.spec ?? {}) as Json
    const template = (kind === 'Pod' ? { metadata: m.doc.metadata, spec } : WORKLOADS.has(kind) ? spec.template : undefined) as
      | { metadata?: { labels?: Record<string, string> }; spec?: PodSpec }
      | undefined
    if (!template?.spec) continue
    podLabels.push(template.metadata?.labels ?? {})
    problems.push(...podProblems(label(m), template.spec))
  }
  // Services, budgets and network policies must select some pod of these manifests.
  for (const m of manifests) {
    const spec = (m.doc.spec ?? {}) as Json
    const selector =
      m.doc.kind === 'Service'
        ? (spec.selector as Record<string, string> | undefined)
        : m.doc.kind === 'PodDisruptionBudget'
          ? (spec.selector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels
          : m.doc.kind === 'NetworkPolicy'
            ? (spec.podSelector as { matchLabels?: Record<string, string> } | undefined)?.matchLabels
            : undefined
    if (selector === undefined) continue
    const selects = podLabels.some((labels) => Object.entries(selector).every(([k, v]) => labels[k] === v))
    if (!selects) problems.push(`${label(m)}: its selector ${JSON.stringify(selector)} matches no pod template in these manifests`)
  }
  return problems
}

function podProblems(where: string, pod: PodSpec): string[] {
  const problems: string[] = []
  const podContext = pod.securityContext ?? {}
  if (pod.automountServiceAccountToken !== false) problems.push(`${where}: set automountServiceAccountToken: false (nothing here calls the Kubernetes API)`)
  const all = [...(pod.initContainers ?? []).map((c) => ({ c, init: true })), ...(pod.containers ?? []).map((c) => ({ c, init: false }))]
  for (const { c, init } of all) {
    const at = `${where} container ${c.name}`
    const sc = c.securityContext ?? {}
    if (sc.allowPrivilegeEscalation !== false) problems.push(`${at}: securityContext.allowPrivilegeEscalation must be false`)
    if (sc.readOnlyRootFilesystem !== true) problems.push(`${at}: securityContext.readOnlyRootFilesystem must be true`)
    if (!sc.capabilities?.drop?.includes('ALL')) problems.push(`${at}: securityContext.capabilities.drop must include ALL`)
    if ((sc.runAsNonRoot ?? podContext.runAsNonRoot) !== true) problems.push(`${at}: runAsNonRoot must be true (in the pod's or the container's securityContext)`)
    if ((sc.seccompProfile?.type ?? podContext.seccompProfile?.type) !== 'RuntimeDefault') problems.push(`${at}: seccompProfile must be RuntimeDefault`)
    for (const [kind, keys] of [['requests', ['cpu', 'memory']], ['limits', ['memory']]] as const) {
      for (const key of keys) if (c.resources?.[kind]?.[key] === undefined) problems.push(`${at}: resources.${kind}.${key} is not set`)
    }
    if (c.image?.includes('hookd')) problems.push(...hookdProblems(at, c, init, pod))
  }
  return problems
}

function hookdProblems(at: string, c: Container, init: boolean, pod: PodSpec): string[] {
  const problems: string[] = []
  const args = c.args ?? []
  const flag = (name: string): string | undefined => {
    const i = args.indexOf(name)
    return i >= 0 ? args[i + 1] : undefined
  }
  if (init && c.restartPolicy !== 'Always') problems.push(`${at}: an init container that serves hooks must be a native sidecar (restartPolicy: Always)`)
  const health = flag('--health-listen')
  const port = Number(health?.split(':').at(-1))
  if (!health || !Number.isInteger(port)) {
    problems.push(`${at}: pass --health-listen HOST:PORT, so that gRPC probes have a port to ask`)
  } else {
    if (!c.ports?.some((p) => p.containerPort === port)) problems.push(`${at}: ports does not list the health port ${port}`)
    for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'] as const) {
      const grpc = c[probe]?.grpc as { port?: number } | undefined
      if (grpc?.port !== port) problems.push(`${at}: ${probe} must be a gRPC probe on the health port ${port}`)
    }
  }
  // Prometheus finds the metrics by the container's port (PodMonitor) or the pod's annotations.
  const metrics = flag('--metrics')
  if (metrics !== undefined) {
    const metricsPort = Number(metrics.split(':').at(-1))
    if (!c.ports?.some((p) => p.containerPort === metricsPort)) problems.push(`${at}: ports does not list the metrics port ${metricsPort} (--metrics)`)
  }
  for (const [name, allowed] of [['--log-format', LOG_FORMATS], ['--log-level', LOG_LEVELS]] as const) {
    const value = flag(name)
    if (value !== undefined && !(allowed as readonly string[]).includes(value)) problems.push(`${at}: ${name} ${value} is not one of ${allowed.join(', ')}`)
  }
  const graceMs = Number(flag('--grace-ms') ?? 5000)
  const period = (pod.terminationGracePeriodSeconds ?? 30) * 1000
  // A preStop pause runs before SIGTERM, inside the same period.
  const preStop = c.lifecycle?.preStop
  const pauseMs = 1000 * Number(preStop?.sleep?.seconds ?? (preStop?.exec?.command?.[0] === 'sleep' ? preStop.exec.command[1] : 0))
  // Workers and the audit log close after the drain: leave them 5 s before the kubelet's SIGKILL.
  if (period < pauseMs + graceMs + 5000) {
    const pause = pauseMs > 0 ? `the preStop pause (${pauseMs / 1000} s) plus ` : ''
    problems.push(`${at}: terminationGracePeriodSeconds (${period / 1000}) must exceed ${pause}--grace-ms (${graceMs} ms) by at least 5 s, or the drain is cut short by SIGKILL`)
  }
  const listen = flag('--listen')
  if (listen?.startsWith('unix:')) {
    const folder = posix.dirname(listen.slice('unix:'.length))
    const mount = c.volumeMounts?.find((v) => v.mountPath === folder)
    const volume = pod.volumes?.find((v) => v.name === mount?.name)
    const sharers = [...(pod.initContainers ?? []), ...(pod.containers ?? [])].filter((o) => o !== c && o.volumeMounts?.some((v) => v.name === mount?.name))
    if (!mount || !volume?.emptyDir || sharers.length === 0) {
      problems.push(`${at}: the socket's folder ${folder} must be an emptyDir mounted by hookd and by the containers that call it`)
    }
  }
  return problems
}
