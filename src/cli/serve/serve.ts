/** `hookd serve`: run the sidecar until SIGINT/SIGTERM (or, in-process, until io.stopped). */
import { resolve } from 'node:path'
import { type Address, DEFAULT_ADDRESS } from '../../protocol/address.js'
import { inert } from '../../protocol/text.js'
import { listenHealth, parseHealthAddress } from '../../sidecar/grpc/health-listener.js'
import { listenProblem } from '../../sidecar/grpc/socket.js'
import { healthFollowing } from '../../sidecar/observability/health-status.js'
import type { Readiness } from '../../sidecar/observability/readiness.js'
import type { SidecarOptions } from '../../sidecar/sidecar.js'
import { DEFAULT_LIMITS, type Limits, MIN_MEMORY_MB } from '../../sidecar/limits.js'
import { CommandError, UsageError, addressFlag, parse, positiveInt } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { CAPTURE_FLAGS, CAPTURE_HELP, type Capturing, captureSettings } from './serve-capture.js'
import { HTTP_FLAGS, HTTP_HELP, type HttpSettings, httpSettings, projectsHttp, startHttp } from './serve-http.js'
import { OBSERVABILITY_FLAGS, OBSERVABILITY_HELP, observabilitySettings, startObservability } from './serve-observability.js'
import { PINNING_FLAGS, PINNING_HELP, pinningSettings } from './serve-pinning.js'
import { TENANCY_FLAGS, TENANCY_HELP, type TenancySettings, tenancySettings } from './serve-tenancy.js'

export const SERVE_HELP = `Usage: hookd serve [--hooks DIR] [--listen ADDR] [options]
       hookd serve --projects [--http [HOST:]PORT] [options]

Runs the hookd sidecar: serves hookd.v1.HookExecutor and grpc.health.v1.Health on ADDR, running the
hooks in DIR (one folder per hook, each with an index.js) in fresh isolates.

  --hooks DIR              hooks folder (default: ./hooks; not with --tenants)
  --floor DIR              the operator's floor: a hooks folder of its own whose hooks run first at
                           every point they serve, in every session of every tenant and project, in
                           the order of their folder names; no session, tenant, profile, route or
                           project can remove, reorder, shadow or skip them, and a later hook cannot
                           undo their refusal. A floor hook's failure at a gate refuses the call
                           unless its hook.json says "onError": "skip" (docs/operations.md, "Layers")
  --listen ADDR            unix:PATH or HOST:PORT (default: ${DEFAULT_ADDRESS})
  --projects               serve this user's agents in every project instead (what 'hookd up' runs):
                           the front door on the socket front.sock in the user's state folder
                           ($HOOKD_STATE_DIR, else ~/.local/state/hookd), each event running the hooks
                           folder its project commits (the entries 'hookd init' writes). No gRPC
  --workers N              sandbox worker processes (default: one per core); with --tenants, each
                           tenant's "workers" in the tenants file instead; with --projects, each
                           project's (default 1)
  --memory-mb N            heap limit per invocation (default: ${DEFAULT_LIMITS.memoryMb})
  --cpu-ms N               CPU time per invocation (default: ${DEFAULT_LIMITS.cpuMs})
  --wall-ms N              wall time per invocation, not counting host waits (default: ${DEFAULT_LIMITS.wallMs})
  --result-bytes N         largest returned value, as JSON (default: ${DEFAULT_LIMITS.resultBytes})
  --log-bytes N            ctx.log volume per invocation (default: ${DEFAULT_LIMITS.logBytes})
  --capability-calls N     ctx capability calls per invocation (default: ${DEFAULT_LIMITS.capabilityCalls})
  --json-depth N           deepest nesting of arrays and objects in JSON from hooks and hosts (default: ${DEFAULT_LIMITS.jsonDepth})
  --confirm-wait-ms N      longest wait for a human to answer ctx.confirm (default: 600000)
  --capability-wait-ms N   longest wait for the host to answer any other capability (default: 30000)
  --parked-mb N            memory (in invocations' memory limits) that invocations waiting on their host
                           may hold in one worker at once; past it their capability calls fail with
                           code 'limit' (default: 512)
  --worker-memory-mb N     memory one sandbox worker process may use, all its invocations together (a
                           memory cgroup per worker when hookd runs as root; else an address-space
                           limit of at least 8192) (default: 1024)
  --grace-ms N             on SIGINT/SIGTERM, how long in-flight calls may finish (default: 5000)
  --no-watch               do not reload hooks when their files change (default: watch and reload)
  --allow-symlinks         follow symbolic links in hook folders (a development setup that links hooks
                           in; refused with --tenants). Default: a linked hook folder, index.js or
                           hook.json does not load
  --fail-closed            every session fails closed at gate points: any failure of any hook refuses
                           the call, whatever a session or a hook asks (with --tenants: a tenant's
                           "onError": "refuse" in the tenants file)
  --require-permissions    every hook must declare what it may touch and decide ("permissions" in
                           its hook.json, docs/writing-hooks.md); one without does not load (with
                           --tenants: for every tenant; a tenant's "requirePermissions" asks it alone)
${CAPTURE_HELP}
  --health-listen HOST:PORT  also serve only grpc.health.v1.Health on this TCP address (no hooks, no
                           token), for Kubernetes gRPC probes when ADDR is a Unix socket
${PINNING_HELP}
${TENANCY_HELP}
${HTTP_HELP}
${OBSERVABILITY_HELP}
  -h, --help               show this help

It prints what isolates the sandbox workers ("hookd: walls: ...", see docs/containment.md). When
ready it prints one line to stderr: "hookd: listening on ADDR" (and "hookd: health on HOST:PORT"
with --health-listen; both are bound before either line is printed). Hooks that fail to load are
reported on stderr before it and skipped. Edits to hook folders are picked up while it runs (see
docs/hot-reload.md); each reload, failed reload and removal is reported on stderr.`

export async function serve(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(SERVE_HELP, {
      args: argv,
      strict: true,
      options: {
        hooks: { type: 'string' },
        floor: { type: 'string' },
        listen: { type: 'string', default: DEFAULT_ADDRESS },
        workers: { type: 'string' },
        'memory-mb': { type: 'string' },
        'cpu-ms': { type: 'string' },
        'wall-ms': { type: 'string' },
        'result-bytes': { type: 'string' },
        'log-bytes': { type: 'string' },
        'capability-calls': { type: 'string' },
        'json-depth': { type: 'string' },
        'confirm-wait-ms': { type: 'string' },
        'capability-wait-ms': { type: 'string' },
        'grace-ms': { type: 'string' },
        'parked-mb': { type: 'string' },
        'worker-memory-mb': { type: 'string' },
        'no-watch': { type: 'boolean', default: false },
        'allow-symlinks': { type: 'boolean', default: false },
        'fail-closed': { type: 'boolean', default: false },
        'require-permissions': { type: 'boolean', default: false },
        'health-listen': { type: 'string' },
        ...CAPTURE_FLAGS,
        projects: { type: 'boolean', default: false },
        ...PINNING_FLAGS,
        ...TENANCY_FLAGS,
        ...HTTP_FLAGS,
        ...OBSERVABILITY_FLAGS,
        help: { type: 'boolean', short: 'h' },
      },
  })
  if (values.help) {
    io.stdout.write(`${SERVE_HELP}\n`)
    return 0
  }
  if (values.projects) {
    const clash = (['hooks', 'tenants', 'capture', 'http-token-file'] as const).find((flag) => values[flag] !== undefined)
    if (clash) throw new UsageError(`--${clash} does not apply with --projects: each project's own hooks folder is served, with this user's token in the state folder`)
    if (argv.some((a) => a === '--listen' || a.startsWith('--listen='))) throw new UsageError("--listen does not apply with --projects: the user's hookd serves the front door on its socket, no gRPC")
  }
  if (values.floor === '') throw new UsageError("--floor needs the operator's hooks folder, e.g. --floor /etc/hookd/floor")
  const listenAddress = addressFlag('listen', values.listen, io.cwd)
  const limits: Partial<Limits> = {}
  const set = (key: keyof Limits, flag: string, v: string | undefined): void => {
    const n = positiveInt(flag, v)
    if (n !== undefined) limits[key] = n
  }
  set('memoryMb', 'memory-mb', values['memory-mb'])
  set('cpuMs', 'cpu-ms', values['cpu-ms'])
  set('wallMs', 'wall-ms', values['wall-ms'])
  set('resultBytes', 'result-bytes', values['result-bytes'])
  set('logBytes', 'log-bytes', values['log-bytes'])
  set('capabilityCalls', 'capability-calls', values['capability-calls'])
  set('jsonDepth', 'json-depth', values['json-depth'])
  if (limits.memoryMb !== undefined && limits.memoryMb < MIN_MEMORY_MB) throw new UsageError(`--memory-mb must be at least ${MIN_MEMORY_MB}`)
  const workers = positiveInt('workers', values.workers)
  if (values['allow-symlinks'] && values.tenants !== undefined) {
    throw new UsageError("--allow-symlinks cannot be used with --tenants: one tenant's link could read another tenant's files")
  }
  if (workers !== undefined && values.tenants !== undefined) {
    throw new UsageError('--workers is for a sidecar without tenants; with --tenants each tenant has workers of its own ("workers" in the tenants file), and --slots says how many invocations run at once across them')
  }
  if (values.capture !== undefined && values.tenants !== undefined) {
    throw new UsageError("--capture is for a sidecar without tenants: one folder would hold every tenant's payloads")
  }
  const capture = captureSettings(values, io)
  const confirmMs = positiveInt('confirm-wait-ms', values['confirm-wait-ms'])
  const capabilityMs = positiveInt('capability-wait-ms', values['capability-wait-ms'])
  const graceMs = positiveInt('grace-ms', values['grace-ms'])
  const parkedMb = positiveInt('parked-mb', values['parked-mb'])
  const workerMemoryMb = positiveInt('worker-memory-mb', values['worker-memory-mb'])
  const healthListen = values['health-listen']
  try {
    if (healthListen !== undefined) parseHealthAddress(healthListen)
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
  const pinning = await pinningSettings(values, io.cwd)
  const tenancy = await tenancySettings(values)
  if (values.projects || pinning.hooksFrom) delete tenancy.sidecar.hooks
  if (values['fail-closed'] && values.tenants !== undefined) {
    throw new UsageError('--fail-closed is for a sidecar without tenants; with --tenants, set "onError": "refuse" on each tenant in the tenants file')
  }
  const http = values.projects ? projectsHttp(values, io) : httpSettings(values, io.cwd)
  // Before anything starts: what stands at each address, in one line (never a gRPC log line).
  if (!values.projects) await listenable('listen', listenAddress)
  if (http?.socket !== undefined) await listenable('projects', { kind: 'unix', path: http.socket })
  if (healthListen !== undefined) await listenable('health-listen', addressFlag('health-listen', healthListen, io.cwd))
  if (http && http.port >= 0) await listenable('http', { kind: 'tcp', host: http.host, port: http.port })
  const observability = observabilitySettings(values, io.env)
  const options: SidecarOptions = {
    ...tenancy.sidecar,
    ...pinning,
    limits,
    ...(workers !== undefined && !values.projects ? { workers } : {}),
    ...(values['allow-symlinks'] ? { followSymlinks: true } : {}),
    waits: { ...(confirmMs !== undefined ? { confirmMs } : {}), ...(capabilityMs !== undefined ? { capabilityMs } : {}) },
    ...(graceMs !== undefined ? { graceMs } : {}),
    pool: {
      ...(parkedMb !== undefined ? { maxParkedMb: parkedMb } : {}),
      ...(workerMemoryMb !== undefined ? { walls: { workerMemoryMb } } : {}),
    },
    watch: !values['no-watch'],
    ...(values['fail-closed'] ? { onError: 'refuse' as const } : {}),
    ...(values['require-permissions'] ? { requirePermissions: true } : {}),
    ...(capture ? { tap: capture.tap } : {}),
    ...(values.projects ? { projects: workers !== undefined ? { workers } : {} } : {}),
    ...(values.floor !== undefined ? { floor: resolve(io.cwd, values.floor) } : {}),
  }

  // The last line of defence: a promise hookd forgot to handle must cost a log line, never the process
  // that serves every session. (Every known path handles its rejections; this is for the unknown one.)
  const onUnhandled = (reason: unknown): void => {
    io.stderr.write(`hookd: internal error, still serving: an unhandled rejection: ${inert(reason instanceof Error ? (reason.stack ?? reason.message) : String(reason))}\n`)
  }
  process.on('unhandledRejection', onUnhandled)
  try {
    const observed = await startObservability(observability, io)
    try {
      return await serveUntilSignal(observed.wire(options), { listen: values.listen, tls: tenancy.listen, health: healthListen, http, capture }, observed.io, observed.readiness)
    } finally {
      await capture?.close()
      await observed.close()
    }
  } finally {
    process.off('unhandledRejection', onUnhandled)
  }
}

/**
 * Refuses an address hookd cannot take: a usage error (exit 2) when it names something that is not a
 * socket or cannot be used, a command error (exit 1) when another process holds it.
 */
async function listenable(flag: string, address: Address): Promise<void> {
  const problem = await listenProblem(address)
  if (problem?.kind === 'wrong') throw new UsageError(`--${flag}: ${problem.message}`)
  if (problem) throw new CommandError(`--${flag}: ${problem.message}`)
}

/** Where the sidecar listens: its gRPC address (with TLS), and the optional health and HTTP listeners. */
interface Listeners {
  listen: string
  tls: TenancySettings['listen']
  health: string | undefined
  http: HttpSettings | undefined
  capture: Capturing | undefined
}

/**
 * Starts the sidecar, listens, reports, and stops it on SIGINT or SIGTERM. The health listener is bound
 * first, so that probes get NOT_SERVING while the hooks load (its line still comes after "listening on").
 */
async function serveUntilSignal(options: SidecarOptions, listeners: Listeners, io: CliIo, readiness: Readiness): Promise<number> {
  const health = listeners.health !== undefined ? await listenHealth(healthFollowing(readiness), listeners.health) : undefined
  try {
    return await serveWithHealth(options, listeners, io, health?.address)
  } finally {
    // Last, after the drain: probes see NOT_SERVING until the process exits.
    await health?.close()
  }
}

async function serveWithHealth(options: SidecarOptions, listeners: Listeners, io: CliIo, healthAddress: string | undefined): Promise<number> {
  // Loaded once the flags and addresses are checked: a refused serve answers without loading the sidecar.
  const { Sidecar } = await import('../../sidecar/sidecar.js')
  const sidecar = await Sidecar.create(options)
  for (const d of sidecar.loadDiagnostics) {
    io.stderr.write(`hookd: ${inert(`hook '${d.hook}' failed to load (${d.file}${d.line ? `:${d.line}` : ''}): ${d.message}`)}\n`)
  }
  // What stands around the workers, so that an operator sees a wall that this machine does not allow.
  io.stderr.write(`hookd: walls: ${sidecar.wallLines().join('; ')}\n`)
  let address: string
  try {
    if (sidecar.projects) {
      address = await startHttp(sidecar, listeners.http as HttpSettings, io)
    } else {
      address = await sidecar.listen(listeners.listen, listeners.tls)
      if (listeners.http) await startHttp(sidecar, listeners.http, io, listeners.capture?.door)
    }
  } catch (err) {
    await sidecar.stop()
    throw err
  }
  // The handlers go in before the line that says we are ready: whoever reads it may signal at once
  // (a loaded machine can pause this process right after the write), and must get a drain, not a kill.
  const signalled = io.stopped ?? processSignal()
  io.stderr.write(`hookd: listening on ${address}\n`)
  if (healthAddress !== undefined) io.stderr.write(`hookd: health on ${healthAddress}\n`)
  // Hot reload news, worker exits and decisions are logged by the observer (serve-observability.ts).
  const tenants = sidecar.tenants
  if (tenants) io.stderr.write(`hookd: serving ${tenants.ids().length} tenant(s): ${tenants.ids().join(', ') || 'none yet'}\n`)
  if (sidecar.projects) io.stderr.write("hookd: serving this user's projects: each event runs the hooks folder its project's entries name\n")
  await sidecar.stop(await signalled)
  return 0
}

/** The process's first SIGINT or SIGTERM. */
function processSignal(): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((resolve) => {
    const onSignal = (name: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal)
      process.off('SIGTERM', onSignal)
      resolve(name)
    }
    process.on('SIGINT', onSignal)
    process.on('SIGTERM', onSignal)
  })
}
