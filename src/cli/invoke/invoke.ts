/** `hookd invoke`: run one point through a chain of hooks and print the result as JSON. */
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { HookdClient } from '../../host/client.js'
import { terminalConfirm } from '../../host/capabilities.js'
import { getPoint, isPointName } from '../../protocol/points/points.js'
import { HookdError } from '../../protocol/status.js'
import type { LogLineData } from '../../protocol/wire.js'
import { Sidecar } from '../../sidecar/sidecar.js'
import { CommandError, UsageError, addressFlag, list, parse } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { everyHook, everyHookLabel, hookFlag } from '../common/hook-choice.js'
import { STEP_POINTS, pointsText, unknownPointMessage, wrap } from '../common/point-groups.js'
import { CONNECT_FLAGS, CONNECT_HELP, connectFlagsGiven, connectHint, connectOptions } from '../common/connect-flags.js'
import { issueText } from '../../protocol/issue-text.js'
import { inert, inertJson } from '../../protocol/text.js'

export const INVOKE_HELP = `Usage: hookd invoke --point POINT --payload JSON [--hook a,b] [options]

Runs one hook point through a chain of hooks and prints one JSON object on stdout:
  {"result": ..., "diagnostics": [...], "trace": [...], "logs": [...], "notifications": [...]}
Hook logs also stream to stderr as "[hook] message" while hooks run.

What to run:
  --point POINT          the hook point (see Points below)
  --payload JSON         the point's payload (see Payloads below)
  --hook a,b             the hooks to run, in this order; repeatable (--hook a --hook b). Default:
                         every hook of the hooks folder, in name order (byte order of the folder
                         names, as 'LC_ALL=C ls' sorts them: number them, 10-guard, 20-audit, to
                         choose); stderr then names them
  --workdir DIR          the run's working directory (default: .)

Where the hooks run:
  --hooks DIR            hooks folder for an embedded sidecar (default: ./hooks)
  --addr ADDR            use a running sidecar (unix:PATH or HOST:PORT) instead of an embedded one
${CONNECT_HELP}

What the hooks may do:
  --auto-approve         answer ctx.confirm with yes (default: no) when not interactive
  --interactive          ask ctx.confirm questions on this terminal
  --allow-http ORIGIN    let ctx.http.fetch reach ORIGIN, e.g. http://127.0.0.1:8080; repeatable, or a,b
  --allow-env NAME       show environment variable NAME in ctx.env; repeatable, or A,B

When a hook fails at a gate point (beforeToolExecute, tool:gate, ...):
  --fail-closed          any failure of any hook refuses the call (hook.json "onError": "refuse" for
                         every hook)
  --fail-open            no failure refuses the call (a hook or the sidecar operator that asks for
                         "refuse" still wins). Default: a hook that threw or returned an invalid value
                         is skipped; one that could not decide (a limit, a crash, a cancel) refuses

  -h, --help             show this help

Points:
${pointsText(2)}

Payloads:
${STEP_POINTS.map((p) => [`  ${p}`, ...wrap('    ', getPoint(p)?.summary ?? '')].join('\n')).join('\n')}
  An event point's payload is its event, a JSON object; the result holds the fields the hooks changed.

Exit status: 0 when the chain ran (hook failures are diagnostics, not errors), 1 when the session could
not run (e.g. an unknown hook), 2 when the command was called wrongly.

Example:
  hookd invoke --hook guard,https-only --point beforeToolExecute \\
    --payload '{"id":"c1","name":"shell","arguments":{"command":"rm -rf /tmp/x"}}'`

/** --fail-closed / --fail-open as a session's onError; both at once is a usage error. */
export function onErrorFlag(values: { 'fail-closed'?: boolean | undefined; 'fail-open'?: boolean | undefined }): 'default' | 'refuse' | 'skip' {
  if (values['fail-closed'] && values['fail-open']) throw new UsageError('--fail-closed and --fail-open exclude each other; pick one')
  return values['fail-closed'] ? 'refuse' : values['fail-open'] ? 'skip' : 'default'
}

export async function invoke(argv: string[], io: CliIo): Promise<number> {
  const { values } = parse(INVOKE_HELP, {
    args: argv,
    strict: true,
    options: {
      hooks: { type: 'string' },
      addr: { type: 'string' },
      hook: { type: 'string', multiple: true, default: [] },
      point: { type: 'string' },
      payload: { type: 'string' },
      workdir: { type: 'string', default: '.' },
      'auto-approve': { type: 'boolean', default: false },
      'fail-closed': { type: 'boolean', default: false },
      'fail-open': { type: 'boolean', default: false },
      interactive: { type: 'boolean', default: false },
      'allow-http': { type: 'string', multiple: true, default: [] },
      'allow-env': { type: 'string', multiple: true, default: [] },
      ...CONNECT_FLAGS,
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${INVOKE_HELP}\n`)
    return 0
  }
  const named = hookFlag(values.hook)
  if (!values.point) throw new UsageError(`--point is required: a step point such as beforeToolExecute, or an event point such as tool:gate ('hookd invoke --help' lists them)`)
  if (!isPointName(values.point)) throw new UsageError(unknownPointMessage('--point', values.point))
  const point = values.point
  const spec = getPoint(point)
  if (values.payload === undefined) throw new UsageError(`--payload is required. ${point}: ${spec?.summary ?? ''}`)
  let payload: unknown
  try {
    payload = JSON.parse(values.payload)
  } catch (err) {
    throw new UsageError(`--payload is not valid JSON: ${(err as Error).message}`)
  }
  const checked = spec?.payload.safeParse(payload)
  if (checked && !checked.success) {
    throw new UsageError(`--payload does not fit ${point}: ${issueText(checked.error, 'payload')}\n  ${point}: ${spec?.summary ?? ''}`)
  }
  // Repeated or comma-separated, like --hook: an origin or a variable name never holds a comma.
  const allowHttp = list(values['allow-http'])
  const allowEnv = list(values['allow-env'])
  for (const origin of allowHttp) {
    try {
      new URL(origin)
    } catch {
      throw new UsageError(`--allow-http '${origin}' is not an origin; write it like http://127.0.0.1:8080`)
    }
  }
  if (values.addr !== undefined) addressFlag('addr', values.addr, io.cwd)
  if (values.addr && values.hooks) {
    throw new UsageError('--hooks and --addr exclude each other: a running sidecar serves its own hooks folder')
  }
  if (!values.addr && connectFlagsGiven(values)) {
    throw new UsageError('--token, --tls, --tls-ca and --tls-server-name are for a running sidecar: pass its --addr too (the embedded sidecar needs none)')
  }
  const connect = values.addr ? await connectOptions(values.addr, values, io.env) : {}

  let sidecar: Sidecar | undefined
  let socketDir: string | undefined
  let address = values.addr
  try {
    if (!address) {
      sidecar = await Sidecar.create({ hooks: resolve(io.cwd, values.hooks ?? 'hooks'), workers: 1 })
      socketDir = await mkdtemp(join(tmpdir(), 'hookd-invoke-'))
      address = await sidecar.listen(`unix:${join(socketDir, 'hookd.sock')}`)
    }
    const client = await HookdClient.connect(address, connect)
    const logs: LogLineData[] = []
    const notifications: Array<{ hook: string; title: string; body?: string }> = []
    try {
      const hooks = named.length ? named : await everyHookOf(sidecar, client, values.hooks, address, io)
      const session = await client.openSession({
        sessionId: `invoke-${process.pid}`,
        agentId: 'hookd-invoke',
        hooks,
        workdir: resolve(io.cwd, values.workdir),
        interactive: values.interactive,
        autoApprove: values['auto-approve'],
        onError: onErrorFlag(values),
        policy: { httpOrigins: allowHttp.map((o) => new URL(o).origin), env: allowEnv },
        // The allowed variables' values from this command's environment (in-process, not the process's).
        env: io.env,
        capabilities: {
          log(line) {
            logs.push(line)
            io.stderr.write(`${inert(`[${line.hook}] ${line.message}`)}\n`)
          },
          notify(message, origin) {
            notifications.push({ hook: origin.hook, ...message })
            io.stderr.write(`${inert(`[${origin.hook}] notify: ${message.title}${message.body ? ` - ${message.body}` : ''}`)}\n`)
          },
          confirm: (message, origin) => terminalConfirm(message, origin, io.terminal),
          diagnostic(d) {
            io.stderr.write(`hookd: ${inert(d.message)}\n`)
          },
        },
      })
      const outcome = await session.call(point, payload as never)
      // One point was asked for: leave without closing, which would also run afterRun.
      session.abandon()
      io.stdout.write(
        `${inertJson(
          JSON.stringify({
          result: outcome.result,
          diagnostics: outcome.diagnostics,
          trace: outcome.trace,
          logs: logs.map(({ hook, point: p, message, timeMs }) => ({ hook, point: p, message, timeMs })),
          notifications,
        }),
        )}\n`,
      )
      return 0
    } finally {
      client.close()
    }
  } catch (err) {
    if (err instanceof HookdError) {
      if (err.code === 'invalid-argument') throw new UsageError(err.message)
      throw new CommandError(connectHint(err, address ?? '', connect))
    }
    throw err
  } finally {
    await sidecar?.stop()
    if (socketDir) await rm(socketDir, { recursive: true, force: true })
  }
}

/** Every hook of the embedded sidecar's folder or of the running sidecar, named on stderr. */
async function everyHookOf(sidecar: Sidecar | undefined, client: HookdClient, hooksFlag: string | undefined, address: string, io: CliIo): Promise<string[]> {
  const hooks = await everyHook(sidecar ? { sidecar } : { client })
  const where = sidecar ? `the hooks folder ${hooksFlag ?? './hooks'}` : `the sidecar at ${address}`
  if (!hooks.length) throw new CommandError(`no hooks to run: ${where} has none (make one with 'hookd new NAME')`)
  io.stderr.write(`hookd invoke: hooks ${hooks.join(', ')} (${everyHookLabel(where)})\n`)
  return hooks
}
