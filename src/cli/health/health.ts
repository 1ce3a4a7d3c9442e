/**
 * `hookd health`: asks a sidecar's standard gRPC health service whether it serves, for container health
 * checks, supervisors and scripts. Exit 0 when SERVING, 1 when NOT_SERVING or when nothing answered
 * (the message says which), 2 for usage errors.
 */
import { checkHealth } from '../../host/health-check.js'
import { DEFAULT_ADDRESS } from '../../protocol/address.js'
import { HookdError } from '../../protocol/status.js'
import { CommandError, addressFlag, parse, positiveInt } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { CONNECT_FLAGS, CONNECT_HELP, connectOptions } from '../common/connect-flags.js'

const DEFAULT_TIMEOUT_MS = 5000

export const HEALTH_HELP = `Usage: hookd health [--addr ADDR] [--service NAME] [--timeout-ms N] [--token TOKEN] [--tls | --tls-ca FILE]

Asks a running sidecar's gRPC health service (grpc.health.v1.Health/Check) whether it serves, and prints
its answer (SERVING or NOT_SERVING) on stdout. Exit status: 0 when SERVING; 1 when NOT_SERVING (the
sidecar is draining after SIGTERM, or its worker pool gave up) or when it could not be reached (the
message on stderr says which); 2 for usage errors.

  --addr ADDR            the sidecar: its --listen address, or its --health-listen HOST:PORT
                         (default: ${DEFAULT_ADDRESS})
  --service NAME         the service asked about: '' for the whole sidecar (default) or hookd.v1.HookExecutor
  --timeout-ms N         how long to wait for the answer, connecting included (default: ${DEFAULT_TIMEOUT_MS})
${CONNECT_HELP}
  -h, --help             show this help

The health service needs no token; --token is sent when given, for proxies that ask for one.`

export async function health(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(HEALTH_HELP, {
    args: argv,
    strict: true,
    options: {
      addr: { type: 'string', default: DEFAULT_ADDRESS },
      service: { type: 'string', default: '' },
      'timeout-ms': { type: 'string' },
      ...CONNECT_FLAGS,
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${HEALTH_HELP}\n`)
    return 0
  }
  const timeoutMs = positiveInt('timeout-ms', values['timeout-ms']) ?? DEFAULT_TIMEOUT_MS
  addressFlag('addr', values.addr, io.cwd)
  const options = await connectOptions(values.addr, values, io.env)
  let status: string
  try {
    status = await checkHealth(values.addr, { ...options, service: values.service, timeoutMs })
  } catch (err) {
    throw err instanceof HookdError ? new CommandError(err.message) : err
  }
  io.stdout.write(`${status}\n`)
  if (status === 'SERVING') return 0
  const what = values.service === '' ? 'the sidecar' : `service '${values.service}'`
  io.stderr.write(
    `hookd health: ${values.addr} reports ${what} ${status}: it is draining after SIGINT/SIGTERM, or its worker pool gave up (see its stderr)\n`,
  )
  return 1
}
