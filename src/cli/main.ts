/** The `hookd` command: `main(argv, io)` (bin.ts runs it as the program). */
import { didYouMean } from '../protocol/did-you-mean.js'
import { HookdError } from '../protocol/status.js'
import { HOOKD_VERSION } from '../protocol/version.js'
import { CommandError, UsageError } from './common/args.js'
import { type CliIo, processIo } from './common/io.js'
import { inert } from '../protocol/text.js'
import { unexpectedFailure } from './common/unexpected-failure.js'

const HELP = `hookd ${HOOKD_VERSION}: runs AI-agent hooks in fresh isolated-vm isolates, served over gRPC.

Usage: hookd <command> [options]

Commands:
  serve     run the sidecar (hookd serve --hooks ./hooks)
  invoke    run one hook point through a chain of hooks and print the result as JSON
  list      list the hooks a running sidecar serves
  health    ask a running sidecar whether it serves (exit 0 when SERVING), for health checks
  check     load every hook in a folder as the sidecar would and report problems (run before committing)
  lock      pin every hook's content digest and permissions in hookd.lock (for serve --locked)
  trust     approve the named hooks as they are now in hookd.lock
  keygen    make an ed25519 key pair for hookd sign
  sign      sign hooks (HOOK/hook.sig) or the lock (hookd.lock.sig) with an ed25519 key
  bundle    build a signed bundle of a hooks folder for 'hookd serve --hooks-from URL'
  new       create a hook folder to start from: typed handlers, hook.json, passing test cases
  test      run the hooks' test cases (HOOK/tests/*.json) in the sandbox
  init      set a project up for the whole team: hookd's entries in the agent's committed settings
  up        start this user's hookd (a user service), which guards every project set up with init
  down      stop this user's hookd
  status    whether this user's hookd runs, and where
  setup     point an agent's hooks at 'hookd serve --http' (hookd setup claude-code --hooks guard)
  tenant    make a tenant token (hookd tenant token) or check a tenants file, for 'serve --tenants'
  agent     run a Claude tool-use agent on a task, with hooks at every step (needs ANTHROPIC_API_KEY)

Run 'hookd <command> --help' for a command's options.`

// Each command is loaded when it runs: `hookd health` or `hookd setup` need not load the sidecar, the
// bundler or the Anthropic SDK, and start in a fraction of the time.
const COMMANDS: Record<string, (argv: string[], io: CliIo) => Promise<number>> = {
  serve: async (argv, io) => (await import('./serve/serve.js')).serve(argv, io),
  invoke: async (argv, io) => (await import('./invoke/invoke.js')).invoke(argv, io),
  list: async (argv, io) => (await import('./list/list.js')).listHooks(argv, io),
  health: async (argv, io) => (await import('./health/health.js')).health(argv, io),
  check: async (argv, io) => (await import('./check/check.js')).check(argv, io),
  lock: async (argv, io) => (await import('./lock/lock.js')).lock(argv, io),
  trust: async (argv, io) => (await import('./lock/lock.js')).trust(argv, io),
  keygen: async (argv, io) => (await import('./sign/sign.js')).keygen(argv, io),
  sign: async (argv, io) => (await import('./sign/sign.js')).signHooks(argv, io),
  bundle: async (argv, io) => (await import('./bundle/bundle.js')).bundle(argv, io),
  new: async (argv, io) => (await import('./new/new.js')).newHook(argv, io),
  test: async (argv, io) => (await import('./test/test.js')).test(argv, io),
  setup: async (argv, io) => (await import('./setup/setup.js')).setup(argv, io),
  init: async (argv, io) => (await import('./setup/init.js')).init(argv, io),
  up: async (argv, io) => (await import('./up/up.js')).up(argv, io),
  down: async (argv, io) => (await import('./up/up.js')).down(argv, io),
  status: async (argv, io) => (await import('./up/up.js')).status(argv, io),
  tenant: async (argv, io) => (await import('./tenant/tenant.js')).tenant(argv, io),
  agent: async (argv, io) => (await import('./agent/agent.js')).agent(argv, io),
}

/**
 * Runs `hookd ...argv` and returns its exit status. `io` is the process's own by default; tests pass
 * their own to run a command in-process.
 */
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  const [command, ...rest] = argv
  if (!command || command === '-h' || command === '--help' || command === 'help') {
    io.stdout.write(`${HELP}\n`)
    return command ? 0 : 2
  }
  if (command === '--version' || command === '-v') {
    io.stdout.write(`${HOOKD_VERSION}\n`)
    return 0
  }
  const run = COMMANDS[command]
  if (!run) {
    const near = didYouMean(command, Object.keys(COMMANDS))
    io.stderr.write(`hookd: unknown command '${inert(command, 200)}'${near ? `; did you mean '${near}'?` : ''}\n\n${HELP}\n`)
    return 2
  }
  try {
    return await run(rest, io)
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`hookd ${command}: ${inertMessage(err.message)}\n`)
      return 2
    }
    if (err instanceof CommandError || err instanceof HookdError) {
      io.stderr.write(`hookd ${command}: ${inertMessage(err.message)}\n`)
      return 1
    }
    io.stderr.write(unexpectedFailure(command, err))
    return 1
  }
}

/**
 * An error message for stderr: hookd's usage messages hold whole help texts on purpose (their lines
 * stay lines); every line is made inert, since a message may quote what a hook or a file said.
 */
function inertMessage(message: string): string {
  return message
    .split('\n')
    .map((line) => inert(line))
    .join('\n')
}
