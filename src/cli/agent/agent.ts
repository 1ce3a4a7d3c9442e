/** `hookd agent`: the reference agent host, a Claude tool-use loop whose every step runs hooks in hookd. */
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { TOKEN_ENV } from '../common/connect-flags.js'
import { AgentError } from '../../host/reference-agent/errors.js'
import { AnthropicModel } from '../../host/reference-agent/anthropic-model.js'
import { DEFAULT_MAX_TOKENS, DEFAULT_MAX_TURNS, runAgent } from '../../host/reference-agent/loop.js'
import type { Model } from '../../host/reference-agent/model.js'
import { recordingProblem } from '../../host/reference-agent/record.js'
import { SCRIPTED_PREFIX, ScriptedModel } from '../../host/reference-agent/scripted-model.js'
import { TerminalUI } from '../../host/reference-agent/terminal.js'
import { HookdError } from '../../protocol/status.js'
import { HookdClient } from '../../host/client.js'
import { Sidecar } from '../../sidecar/sidecar.js'
import { captureTap } from '../../testing/capture-tap.js'
import { CommandError, UsageError, addressFlag, parse, positiveInt } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { everyHook, everyHookLabel, hookFlag } from '../common/hook-choice.js'
import { isDirectory } from '../common/hook-paths.js'
import { onErrorFlag } from '../invoke/invoke.js'

export const DEFAULT_MODEL = 'claude-sonnet-4-6'

export const AGENT_HELP = `Usage: hookd agent [options] "task"

Runs a Claude tool-use loop on the task, with the tools shell, read_file, write_file and list_files
working in the workdir, and runs the declared hooks at every step of it in hookd: tool calls they
refuse go back to the model as errors, arguments and results they rewrite are what the tool and the
model see, and each decision is shown as it happens. Model text streams to stdout; tool calls, hook
decisions, hook logs and questions go to stderr.

  --hooks DIR        hooks folder for an embedded sidecar (default: ./hooks)
  --addr ADDR        use a running sidecar (unix:PATH or HOST:PORT) instead of an embedded one
  --token TOKEN      a tenant's token, for a sidecar started with --tenants (default: $HOOKD_TOKEN)
  --hook a,b         the hooks to run, in this order; repeatable (--hook a --hook b). Default: every
                     hook of the hooks folder (or of the --addr sidecar), in name order: the byte
                     order of the folder names, as 'LC_ALL=C ls' sorts them (number them, 10-guard,
                     20-audit, to choose). The first line says which hooks run
  --workdir DIR      the folder the tools work in (default: .)
  --model NAME       the Claude model (default: ${DEFAULT_MODEL}), or scripted:FILE to replay a recorded
                     run instead of calling the API (no key needed)
  --record FILE      write the model's turns to FILE, to replay with --model scripted:FILE
  --capture DIR      write every hook point call of the run to DIR as a \`hookd test\` case (payload,
                     what the hooks read, the result); replay a recording with --model scripted:FILE
                     --capture DIR to turn it into cases without calling the API
  --yes              answer every ctx.confirm question with yes (default: ask on this terminal, or
                     answer no when stdin is not a terminal)
  --fail-closed      at a tool gate, any failure of any hook refuses the call
  --fail-open        at a tool gate, no failure refuses the call (a hook's "onError": "refuse" wins)
  --max-turns N      stop after N model turns (default: ${DEFAULT_MAX_TURNS})
  --max-tokens N     the most tokens one answer may have (default: ${DEFAULT_MAX_TOKENS})
  -h, --help         show this help

Environment:
  ANTHROPIC_API_KEY  your Anthropic API key (required unless --model scripted:FILE)
  ANTHROPIC_BASE_URL the API's address, when you reach it through a proxy (optional)

Ctrl-C interrupts the run (hooks see afterRun with reason 'interrupted'); a second Ctrl-C quits at once.
Exit status: 0 when the model finished, 1 when the run stopped on an error (API, hookd, script),
2 when the command was called wrongly or ANTHROPIC_API_KEY is missing, 130 when interrupted.

Example:
  hookd agent --hook guard,audit,today "list the files here and summarize the README"`

async function requireDir(flag: string, path: string, cwd: string): Promise<string> {
  const full = resolve(cwd, path)
  const info = await stat(full).catch(() => undefined)
  if (!info?.isDirectory()) throw new UsageError(`${flag} '${path}' is not a folder; pass an existing folder`)
  return full
}

async function chooseModel(name: string, env: NodeJS.ProcessEnv): Promise<Model> {
  if (name.startsWith(SCRIPTED_PREFIX)) {
    const file = name.slice(SCRIPTED_PREFIX.length)
    if (!file) throw new UsageError(`--model ${SCRIPTED_PREFIX} needs a file: --model ${SCRIPTED_PREFIX}run.json`)
    try {
      return await ScriptedModel.load(file)
    } catch (err) {
      if (err instanceof AgentError) throw new UsageError(err.message)
      throw err
    }
  }
  try {
    return new AnthropicModel({ model: name, env })
  } catch (err) {
    if (err instanceof AgentError && err.kind === 'no-key') throw new UsageError(err.message)
    throw err
  }
}

export async function agent(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(AGENT_HELP, {
    args: argv,
    strict: true,
    allowPositionals: true,
    options: {
      hooks: { type: 'string' },
      addr: { type: 'string' },
      token: { type: 'string' },
      hook: { type: 'string', multiple: true, default: [] },
      workdir: { type: 'string', default: '.' },
      model: { type: 'string', default: DEFAULT_MODEL },
      record: { type: 'string' },
      capture: { type: 'string' },
      yes: { type: 'boolean', default: false },
      'fail-closed': { type: 'boolean', default: false },
      'fail-open': { type: 'boolean', default: false },
      'max-turns': { type: 'string' },
      'max-tokens': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    io.stdout.write(`${AGENT_HELP}\n`)
    return 0
  }
  const task = positionals.join(' ').trim()
  if (!task) throw new UsageError(`a task is required, e.g. hookd agent --hook guard "list the files here"\n\n${AGENT_HELP}`)
  if (values.addr !== undefined) addressFlag('addr', values.addr, io.cwd)
  if (values.addr && values.hooks) throw new UsageError('--hooks and --addr exclude each other: a running sidecar serves its own hooks folder')
  if (values.token !== undefined && !values.addr) throw new UsageError('--token is for a running sidecar: pass it with --addr')
  const token = (values.token ?? (values.addr ? io.env[TOKEN_ENV] : undefined))?.trim()
  if (values.token !== undefined && !token) throw new UsageError(`--token is empty; pass the tenant's token (or set ${TOKEN_ENV})`)
  const named = hookFlag(values.hook)
  if (values.capture !== undefined && values.addr) throw new UsageError('--capture needs the embedded sidecar; with --addr, start that sidecar with hookd serve --capture DIR')
  const maxTurns = positiveInt('max-turns', values['max-turns'])
  const maxTokens = positiveInt('max-tokens', values['max-tokens'])
  const workdir = await requireDir('--workdir', values.workdir, io.cwd)
  if (values.record) {
    await requireDir('the folder of --record', dirname(resolve(io.cwd, values.record)), io.cwd)
    const problem = await recordingProblem(resolve(io.cwd, values.record))
    if (problem) throw new UsageError(`--record '${values.record}': ${problem}`)
  }
  const model = await chooseModel(values.model, io.env)

  let sidecar: Sidecar | undefined
  let socketDir: string | undefined
  let address = values.addr
  const ui = new TerminalUI({ stdout: io.stdout, stderr: io.stderr, env: io.env })
  const controller = new AbortController()
  const onSigint = (): void => {
    if (controller.signal.aborted) process.exit(130)
    ui.notice('interrupting (Ctrl-C again to quit at once)')
    controller.abort()
  }
  const hooksDir = resolve(io.cwd, values.hooks ?? 'hooks')
  const where = address ? `the sidecar at ${address}` : `the hooks folder ${values.hooks ?? './hooks'}`
  let hooks = named
  try {
    // Without --hook, every hook of the folder runs; only a default ./hooks that does not exist means none.
    if (!address && (named.length || values.hooks !== undefined || (await isDirectory(hooksDir)))) {
      const capture = values.capture !== undefined ? { tap: captureTap(resolve(io.cwd, values.capture), io.stderr) } : {}
      sidecar = await Sidecar.create({ hooks: hooksDir, workers: 1, ...capture }).catch((err: unknown) => {
        // A hooks folder that cannot be read is a wrong --hooks (the message says so).
        throw err instanceof HookdError && err.code === 'not-found' ? new UsageError(err.message) : err
      })
      if (!named.length) hooks = await everyHook({ sidecar })
      for (const d of sidecar.loadDiagnostics) if (hooks.includes(d.hook)) ui.diagnostic(d)
      socketDir = await mkdtemp(join(tmpdir(), 'hookd-agent-'))
      address = await sidecar.listen(`unix:${join(socketDir, 'hookd.sock')}`)
    } else if (address && !named.length) {
      hooks = await hooksOfSidecar(address, token)
    }
    if (!hooks.length) {
      const why = !address ? 'there is no ./hooks folder' : `${where} has none`
      if (values.capture !== undefined) throw new UsageError(`--capture records hook calls, and no hooks would run: ${why} (pass --hooks DIR)`)
      io.stderr.write(`hookd agent: no hooks will run: ${why} (pass --hooks DIR, or make one with 'hookd new NAME')\n`)
    }
    process.on('SIGINT', onSigint)
    const result = await runAgent({
      task,
      model,
      workdir,
      ui,
      hooks,
      ...(address ? { address } : {}),
      ...(token ? { token } : {}),
      sidecarLabel: named.length ? (sidecar ? `embedded sidecar on ${hooksDir}` : `sidecar at ${address ?? ''}`) : everyHookLabel(sidecar ? `the hooks folder ${hooksDir}` : where),
      interactive: process.stdin.isTTY === true && !values.yes,
      yes: values.yes,
      onError: onErrorFlag(values),
      signal: controller.signal,
      ...(values.record ? { record: values.record } : {}),
      ...(maxTurns ? { maxTurns } : {}),
      ...(maxTokens ? { maxTokens } : {}),
    })
    if (result.reason === 'interrupted') return 130
    if (result.reason === 'error' || result.recording?.error) return 1
    return 0
  } catch (err) {
    if (err instanceof HookdError) throw new CommandError(err.message)
    throw err
  } finally {
    process.off('SIGINT', onSigint)
    await sidecar?.stop()
    if (socketDir) await rm(socketDir, { recursive: true, force: true })
  }
}

/** Every hook a running sidecar serves (a tenant's, with its token), for a run without --hook. */
async function hooksOfSidecar(address: string, token: string | undefined): Promise<string[]> {
  let client: HookdClient | undefined
  try {
    client = await HookdClient.connect(address, token ? { token } : {})
    return await everyHook({ client })
  } catch (err) {
    if (!(err instanceof HookdError)) throw err
    throw new CommandError(`cannot ask the sidecar at ${address} for its hooks, to run every one: ${err.message}. Name the hooks with --hook to start without asking`)
  } finally {
    client?.close()
  }
}
