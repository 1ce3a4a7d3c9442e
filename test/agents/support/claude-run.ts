/**
 * Runs the real Claude Code CLI once in print mode (`claude -p`) against a Messages API stand-in,
 * offline: a fresh temporary HOME (no user settings, no login, no trust granted) and a fresh project
 * folder whose `.claude/settings.json` holds the hooks under test. The environment is built from
 * scratch (PATH and the variables below), so nothing of the caller's Claude setup leaks in.
 */
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'

export interface ClaudeRunOptions {
  /** The claude binary (agentCli('claude')). */
  claude: string
  /** The stand-in's base URL. */
  apiUrl: string
  prompt?: string
  /** Written to <project>/.claude/settings.json when given. */
  settings?: unknown
  /** Files to create in the project folder, by relative path. */
  files?: Record<string, string>
  /** Default: ['--allowedTools', 'Bash']. */
  args?: string[]
  env?: Record<string, string>
  /** The project folder; default: a new temp folder. */
  cwd?: string
  /** Kill the CLI after this long. Default: 180 s. */
  timeoutMs?: number
}

export interface ClaudeRun {
  code: number | null
  stdout: string
  stderr: string
  /** stdout parsed (`--output-format json`), or undefined when it is not JSON. */
  result: Record<string, unknown> | undefined
  cwd: string
  home: string
  ms: number
}

export async function projectDir(files: Record<string, string> = {}, settings?: unknown): Promise<string> {
  const cwd = await mkdtemp(join(tmpdir(), 'hookd-claude-project-'))
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(cwd, path)), { recursive: true })
    await writeFile(join(cwd, path), text)
  }
  if (settings !== undefined) {
    await mkdir(join(cwd, '.claude'), { recursive: true })
    await writeFile(join(cwd, '.claude', 'settings.json'), JSON.stringify(settings, null, 2))
  }
  return cwd
}

/** The environment of an offline run: the stand-in as the API, telemetry and extra traffic off. */
export function offlineEnv(apiUrl: string, home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin',
    HOME: home,
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    ANTHROPIC_BASE_URL: apiUrl,
    ANTHROPIC_API_KEY: 'sk-ant-stand-in',
    DISABLE_TELEMETRY: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    ...extra,
  }
}

export async function runClaude(options: ClaudeRunOptions): Promise<ClaudeRun> {
  const cwd = options.cwd ?? (await projectDir(options.files, options.settings))
  if (options.cwd && (options.files || options.settings !== undefined)) throw new Error('give files and settings to projectDir, or no cwd')
  const home = await mkdtemp(join(tmpdir(), 'hookd-claude-home-'))
  const args = ['-p', options.prompt ?? 'do the task', '--output-format', 'json', ...(options.args ?? ['--allowedTools', 'Bash'])]
  const started = Date.now()
  const child = spawn(options.claude, args, { cwd, env: offlineEnv(options.apiUrl, home, options.env), stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')))
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 180_000)
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject)
    child.on('close', (exit) => resolve(exit))
  }).finally(() => clearTimeout(timer))
  let result: Record<string, unknown> | undefined
  try {
    result = JSON.parse(stdout) as Record<string, unknown>
  } catch {
    result = undefined
  }
  return { code, stdout, stderr, result, cwd, home, ms: Date.now() - started }
}
