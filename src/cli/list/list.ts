/** `hookd list`: the hooks a running sidecar serves. */
import { HookdClient } from '../../host/client.js'
import { DEFAULT_ADDRESS } from '../../protocol/address.js'
import { HookdError } from '../../protocol/status.js'
import { CommandError, addressFlag, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { CONNECT_FLAGS, CONNECT_HELP, connectHint, connectOptions } from '../common/connect-flags.js'
import { inert, inertJson } from '../../protocol/text.js'

/** How much of a description the table shows: enough for one line beside the other columns. */
const DESCRIPTION_COLUMN = 60

/** The permissions column of a hook whose hook.json has no "permissions" block. */
const UNDECLARED = 'undeclared'

function cut(text: string): string {
  return text.length > DESCRIPTION_COLUMN ? `${text.slice(0, DESCRIPTION_COLUMN - 3)}...` : text
}

export const LIST_HELP = `Usage: hookd list [--addr ADDR] [--token TOKEN] [--tls | --tls-ca FILE] [--json]

Lists the hooks a running sidecar serves: name, version, content digest (what hookd.lock pins, its
first 12 hex digits; --json has all of it), status, points, description (hook.json "description", cut
to ${DESCRIPTION_COLUMN} characters; --json has all of it), permissions (what hook.json "permissions"
let it touch and decide; "undeclared": it may do whatever the session allows) and the last load
error. A sidecar with tenants lists the hooks of the tenant whose token is given.

  --addr ADDR            the sidecar (default: ${DEFAULT_ADDRESS})
${CONNECT_HELP}
  --json                 print JSON instead of a table
  -h, --help             show this help`

export async function listHooks(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(LIST_HELP, {
    args: argv,
    strict: true,
    options: { addr: { type: 'string', default: DEFAULT_ADDRESS }, ...CONNECT_FLAGS, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
  })
  if (values.help) {
    io.stdout.write(`${LIST_HELP}\n`)
    return 0
  }
  addressFlag('addr', values.addr, io.cwd)
  const options = await connectOptions(values.addr, values, io.env)
  const failed = (err: unknown): CommandError => new CommandError(err instanceof HookdError ? connectHint(err, values.addr, options) : String(err))
  let client: HookdClient
  try {
    client = await HookdClient.connect(values.addr, options)
  } catch (err) {
    throw failed(err)
  }
  try {
    const hooks = await client.listHooks().catch((err: unknown) => {
      throw failed(err)
    })
    if (values.json) {
      io.stdout.write(`${inertJson(JSON.stringify(hooks, null, 2))}\n`)
      return 0
    }
    const rows = hooks.map((h) => [
      h.name,
      h.version || '-',
      h.digest ? h.digest.slice(0, 'sha256:'.length + 12) : '-',
      h.status,
      h.points.join(',') || '-',
      h.description ? inert(cut(h.description)) : '-',
      h.permissions ? inert(h.permissions) : h.version ? UNDECLARED : '-',
      inert(h.lastError?.message ?? ''),
    ])
    const head = ['NAME', 'VERSION', 'DIGEST', 'STATUS', 'POINTS', 'DESCRIPTION', 'PERMISSIONS', 'LAST ERROR']
    const widths = head.map((_, i) => Math.max(head[i]?.length ?? 0, ...rows.map((r) => r[i]?.length ?? 0)))
    const line = (r: string[]): string => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  ').trimEnd()
    io.stdout.write(`${[line(head), ...rows.map(line)].join('\n')}\n`)
    return 0
  } finally {
    client.close()
  }
}
