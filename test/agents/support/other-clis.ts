/** Runs the real agent CLIs for the contract tests: temp folders, hook scripts, child processes (installs: cli.ts). */
import { spawn } from 'node:child_process'
import { chmod, mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

export async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `hookd-${prefix}-`))
}

/** A project folder holding `victim/keep.txt`, the folder the model is told to delete. */
export async function projectWithVictim(prefix: string): Promise<string> {
  return projectWithVictims(prefix, ['victim'])
}

/** A project folder holding `NAME/keep.txt` for each name: one victim folder per scenario of a run. */
export async function projectWithVictims(prefix: string, names: readonly string[]): Promise<string> {
  const dir = await tempDir(prefix)
  for (const name of names) {
    await mkdir(join(dir, name))
    await writeFile(join(dir, name, 'keep.txt'), 'precious\n')
  }
  return dir
}

export async function writeScript(path: string, body: string): Promise<string> {
  await mkdir(dirname(path), { recursive: true })
  await writeFile(path, body)
  await chmod(path, 0o755)
  return path
}

export interface Ran {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs a command with stdin closed, killing it (and failing) after `timeoutMs`. */
export function run(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Ran> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      fail(new Error(`${command} ${args.join(' ')} did not finish in ${options.timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 120_000)
    child.on('error', (err) => {
      clearTimeout(timer)
      fail(err)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      done({ code, signal, stdout, stderr })
    })
  })
}

/**
 * The environment a CLI runs in: this process's, less anything that could point it at a real
 * service or account, with HOME moved to a temp folder.
 */
export function isolatedEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(OPENAI|CODEX|GEMINI|GOOGLE|COPILOT|GH|GITHUB|ANTHROPIC|CLAUDE)_/i.test(key)) continue
    if (/^(HTTPS?_PROXY|ALL_PROXY|NO_PROXY)$/i.test(key)) continue
    env[key] = value
  }
  return { ...env, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_CACHE_HOME: join(home, '.cache'), ...extra }
}

/**
 * The guard every contract test installs: a POSIX sh script that reads the hook's stdin and refuses
 * any command containing `rm -r` (which covers `rm -rf`), answering in the way `mode` names.
 * Each agent's test supplies the refusal text for its own `json` answer.
 */
export function guardScript(options: { denyJson: string; logFile?: string }): string {
  const log = options.logFile ? `printf '%s\\n' "$input" >> '${options.logFile}'\n` : ''
  return `#!/bin/sh
# Test guard: $1 is how to refuse: json (a JSON answer on stdout, exit 0), exit2 (reason on stderr,
# exit 2), exit1 (exit 1, which no agent counts as a refusal).
input=$(cat)
${log}case $input in
  *'rm -r'*)
    case $1 in
      json) printf '%s\\n' '${options.denyJson}'; exit 0 ;;
      exit2) echo 'guard: rm -r is not allowed here' >&2; exit 2 ;;
      exit1) echo 'guard: rm -r is not allowed here' >&2; exit 1 ;;
    esac ;;
esac
exit 0
`
}

/** Codex's config.toml pointing it at the Responses API stand-in (key in $STUB_OPENAI_KEY), no retries. */
export function codexConfig(baseUrl: string): string {
  return `model = "test-model"
model_provider = "stub"

[model_providers.stub]
name = "stub"
base_url = "${baseUrl}"
wire_api = "responses"
env_key = "STUB_OPENAI_KEY"
request_max_retries = 0
stream_max_retries = 0
`
}

/** Gemini CLI's environment for the Gemini API stand-in (its settings.json must pick API-key auth). */
export function geminiEnv(home: string, baseUrl: string): NodeJS.ProcessEnv {
  return isolatedEnv(home, { GEMINI_API_KEY: 'stub-key', GOOGLE_GEMINI_BASE_URL: baseUrl })
}

/**
 * Copilot CLI's environment for running offline against the Responses API stand-in: no GitHub account,
 * a BYOK provider (`copilot help environment`).
 */
export function copilotEnv(copilot: string, home: string, baseUrl: string): NodeJS.ProcessEnv {
  return isolatedEnv(home, {
    COPILOT_OFFLINE: 'true',
    COPILOT_AUTO_UPDATE: 'false',
    COPILOT_PROVIDER_BASE_URL: baseUrl,
    COPILOT_PROVIDER_WIRE_API: 'responses',
    COPILOT_PROVIDER_API_KEY: 'stub-key',
    COPILOT_MODEL: 'gpt-5.5',
    // The binary unpacks its JavaScript (about 235 MB) under $XDG_CACHE_HOME/copilot on first run:
    // share one unpacked copy beside the install rather than one per temp HOME.
    XDG_CACHE_HOME: join(dirname(dirname(dirname(copilot))), 'xdg-cache'),
  })
}
