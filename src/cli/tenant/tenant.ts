/**
 * `hookd tenant`: tools for the tenants file of a multi-tenant sidecar (docs/tenants.md).
 *
 * - `hookd tenant token` makes a new random token and prints it with its hash and the tenants-file entry
 *   to paste. The token is shown only then: the file keeps the hash.
 * - `hookd tenant check FILE` validates a tenants file as `hookd serve --tenants` would.
 */
import { stat } from 'node:fs/promises'
import { resolve } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { hashToken, newToken } from '../../sidecar/tenancy/tenant-token.js'
import { readTenants } from '../../sidecar/tenancy/tenants-file.js'
import { CommandError, UsageError, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'

export const TENANT_HELP = `Usage: hookd tenant token [--id ID] [--hooks DIR] [--json]
       hookd tenant check FILE

Tools for the tenants file of 'hookd serve --tenants FILE' (see docs/tenants.md).

  token    print a new random token, its hash, and the tenants-file entry to paste. Give the token to
           the tenant (its host sends it as 'authorization: Bearer <token>'); the file keeps only the
           hash. To revoke a token, remove the tenant or replace its tokenHash: the running sidecar
           ends the tenant's open sessions.
  check    validate a tenants file as 'hookd serve' would, and check every hooks folder exists.
           Exit status 0 when it is good, 1 with the problem when not.

  --id ID       the tenant id for the printed entry (default: "TENANT-ID")
  --hooks DIR   the hooks folder for the printed entry (default: "hooks/TENANT-ID")
  --json        print {"token", "tokenHash", "tenant"} as JSON instead
  -h, --help    show this help`

export async function tenant(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(TENANT_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      id: { type: 'string' },
      hooks: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${TENANT_HELP}\n`)
    return 0
  }
  const [sub, ...rest] = positionals
  if (sub === 'token') {
    if (rest.length) throw new UsageError(`'hookd tenant token' takes no arguments; got '${rest.join(' ')}'\n\n${TENANT_HELP}`)
    return token(values.id, values.hooks, values.json === true, io)
  }
  if (sub === 'check') {
    if (rest.length !== 1 || values.id !== undefined || values.hooks !== undefined) {
      throw new UsageError(`'hookd tenant check' takes one tenants file, and no --id or --hooks\n\n${TENANT_HELP}`)
    }
    return checkFile(resolve(io.cwd, rest[0] as string), rest[0] as string, values.json === true, io)
  }
  throw new UsageError(`${sub ? `unknown subcommand '${sub}'` : 'a subcommand is needed'}; use 'token' or 'check'\n\n${TENANT_HELP}`)
}

function token(id: string | undefined, hooks: string | undefined, json: boolean, io: CliIo): number {
  if (id !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(id)) {
    throw new UsageError(`--id '${id}': use 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit`)
  }
  const value = newToken()
  const tokenHash = hashToken(value)
  const entry = { id: id ?? 'TENANT-ID', tokenHash, hooks: hooks ?? `hooks/${id ?? 'TENANT-ID'}`, limits: {}, policy: { file: 'none' } }
  if (json) {
    io.stdout.write(`${JSON.stringify({ token: value, tokenHash, tenant: entry })}\n`)
    return 0
  }
  io.stdout.write(
    [
      `token:     ${value}`,
      `tokenHash: ${tokenHash}`,
      '',
      'Give the token to the tenant now: it is not stored anywhere. Add this entry to the "tenants" array',
      'of the tenants file (the running sidecar picks it up when the file is saved):',
      '',
      `  ${JSON.stringify(entry)}`,
      '',
    ].join('\n'),
  )
  return 0
}

async function checkFile(path: string, file: string, json: boolean, io: CliIo): Promise<number> {
  let tenants
  try {
    tenants = (await readTenants(path, file)).tenants
  } catch (err) {
    if (err instanceof HookdError) throw new CommandError(err.message)
    throw err
  }
  const problems: string[] = []
  for (const [i, t] of tenants.entries()) {
    const isDir = await stat(t.hooks).then(
      (s) => s.isDirectory(),
      () => false,
    )
    if (!isDir) problems.push(`tenants[${i}].hooks: ${t.hooks} (tenant '${t.id}') is not a folder; create it or fix the path`)
  }
  if (json) {
    io.stdout.write(`${JSON.stringify({ file, tenants: tenants.map((t) => ({ id: t.id, hooks: t.hooks })), problems })}\n`)
  } else {
    for (const p of problems) io.stdout.write(`${file}: ${p}\n`)
    io.stdout.write(`${file}: ${tenants.length} tenant(s)${tenants.length ? ` (${tenants.map((t) => t.id).join(', ')})` : ''}, ${problems.length ? `${problems.length} problem(s)` : 'all good'}\n`)
  }
  return problems.length ? 1 : 0
}
