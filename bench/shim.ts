/**
 * What the command shim of Codex, Gemini CLI, Copilot CLI and Cursor costs on top of the HTTP call it
 * makes: `hookd serve --http` runs the guard, and the same Codex PreToolUse event (a harmless `ls`,
 * which the guard lets through) goes to the same route in alternating samples these ways:
 *
 *   shim    the shim `hookd setup` writes (build/hookd-hook when the install compiled it), started as
 *           a process, as an agent starts its command hook
 *   script  bin/hookd-hook, the script form (sh, then bash over /dev/tcp), for machines without it
 *   curl    curl alone started as a process with the same request (what the script costs without bash)
 *   empty   /bin/true started the same way: what starting any process costs, the floor under every
 *           command hook, which no shim can go below
 *   http    a direct HTTP call (what an agent with http hooks pays)
 *
 * Twice, because how the agent starts a process matters more than the shim: from a lean starter
 * (bench/shim-spawn.py, posix_spawn as Codex's Rust does) and from this Node process (as Gemini CLI,
 * Copilot CLI and Claude Code start theirs: Node's spawn and its pipes cost ~10 ms more per process on
 * a small VM).
 *
 *   agents.shim_overhead_ms        lean: median(shim) - median(http), what the shim adds to a hook call
 *   agents.shim.lean.*_ms          the lean starter's medians
 *   agents.shim.node.*_ms          Node's medians; node.overhead_ms = median(shim) - median(http)
 *   agents.shim.cpu_ms.{shim, script, curl}   CPU time (user + system) per call, from a loop of calls
 *       in one sh (its `times`): unlike wall time, it does not grow when other work keeps the cores
 *       busy, so it shows each form's own cost on a loaded machine
 *
 * Part of `make bench`, smoke run included (a few samples).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { SCRIPT_SHIM, shimPath } from '../src/agents/settings/shim-command.js'
import { ROOT, startServe, stopProcess } from '../test/support/processes.js'

export interface ShimResult {
  shim_overhead_ms: number
  shim: {
    samples: number
    form: string
    lean: { shim_ms: number; script_ms: number; empty_ms: number; http_ms: number }
    node: { overhead_ms: number; shim_ms: number; script_ms: number; curl_ms: number; empty_ms: number; http_ms: number }
    cpu_ms: { shim: number; script: number; curl: number }
  }
}

const PYTHON = process.env.HOOKD_PYTHON ?? 'python3'

/** The lean starter's medians (bench/shim-spawn.py). */
async function leanTimes(samples: number, event: string, tokenFile: string, url: string, shim: string): Promise<Record<'http' | 'empty' | 'shim' | 'script', number>> {
  const file = join(await mkdtemp(join(tmpdir(), 'hookd-bench-shim-lean-')), 'event.json')
  await writeFile(file, event)
  try {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(PYTHON, [join(ROOT, 'bench', 'shim-spawn.py'), String(samples), file, tokenFile, url, shim, SCRIPT_SHIM], { stdio: ['ignore', 'pipe', 'pipe'] })
      let stdout = ''
      let stderr = ''
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
      child.on('error', reject)
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`bench/shim-spawn.py failed (exit ${code}): ${stderr}`))))
    })
    return JSON.parse(out) as Record<'http' | 'empty' | 'shim' | 'script', number>
  } finally {
    await rm(dirname(file), { recursive: true, force: true })
  }
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0
}

const round = (ms: number): number => Math.round(ms * 100) / 100

/** Runs a command with `input` on stdin; its wall time in ms. Throws on a non-zero exit. */
function timed(command: string, args: string[], input: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    const child = spawn(command, args, { stdio: ['pipe', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${command} exited with ${code}: ${stderr}`))
      else resolve(Number(process.hrtime.bigint() - start) / 1e6)
    })
    // An empty process exits without reading its input.
    child.stdin.on('error', () => {})
    child.stdin.end(input)
  })
}

/** `sh: times` prints the shell's user and system time, then its children's: `0m1.230s 0m0.450s`. */
function seconds(text: string): number {
  const m = /^(\d+)m([\d.]+)s$/.exec(text)
  return m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN
}

/** CPU ms per call of `argv` with `input` on stdin, over `calls` calls run by one sh. */
async function cpuPerCall(argv: string[], input: string, calls: number): Promise<number> {
  const file = join(await mkdtemp(join(tmpdir(), 'hookd-bench-shim-event-')), 'event.json')
  await writeFile(file, input)
  try {
    const script = 'n=$1; f=$2; shift 2; i=0; while [ $i -lt $n ]; do "$@" <"$f" >/dev/null || exit 1; i=$((i+1)); done; times'
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn('sh', ['-c', script, 'sh', String(calls), file, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] })
      let stdout = ''
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
      child.on('error', reject)
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${argv[0]} failed in the CPU loop (exit ${code})`))))
    })
    const children = out.trim().split('\n').at(-1)?.trim().split(/\s+/) ?? []
    return ((seconds(children[0] ?? '') + seconds(children[1] ?? '')) * 1000) / calls
  } finally {
    await rm(dirname(file), { recursive: true, force: true })
  }
}

export async function shimBench(smoke: boolean): Promise<ShimResult> {
  const samples = Number(process.env.BENCH_SHIM_SAMPLES ?? (smoke ? 5 : 200))
  const state = await mkdtemp(join(tmpdir(), 'hookd-bench-shim-'))
  const serving = await startServe(['--hooks', join(ROOT, 'hooks'), '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--workers', '1'], { cwd: state, timeoutMs: 60_000 })
  try {
    const base = /^hookd: http on (\S+)$/m.exec(serving.output.stderr)?.[1]
    if (!base) throw new Error(`hookd serve printed no 'hookd: http on' line:\n${serving.output.stderr}`)
    const url = `${base}/codex/guard`
    const tokenFile = join(state, '.hookd', 'http-token')
    const token = (await readFile(tokenFile, 'utf8')).trim()
    const event = JSON.stringify({
      session_id: 'bench-shim',
      turn_id: 't1',
      cwd: state,
      hook_event_name: 'PreToolUse',
      model: 'gpt-5.5',
      permission_mode: 'default',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'call_1',
    })
    const shim = shimPath()
    const shimArgv = [shim, '--token-file', tokenFile, url]
    const scriptArgv = [SCRIPT_SHIM, '--token-file', tokenFile, url]
    const curlArgv = ['curl', '-s', '--fail', '-X', 'POST', '-H', 'content-type: application/json', '-H', `authorization: Bearer ${token}`, '--data-binary', '@-', url]
    const ways: Record<'shim' | 'script' | 'curl' | 'empty' | 'http', () => Promise<number>> = {
      shim: () => timed(shimArgv[0] as string, shimArgv.slice(1), event),
      script: () => timed(scriptArgv[0] as string, scriptArgv.slice(1), event),
      curl: () => timed(curlArgv[0] as string, curlArgv.slice(1), event),
      empty: () => timed('/bin/true', [], event),
      http: async () => {
        const start = process.hrtime.bigint()
        const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: event })
        await response.arrayBuffer()
        if (!response.ok) throw new Error(`the front door answered ${response.status}`)
        return Number(process.hrtime.bigint() - start) / 1e6
      },
    }
    const times: Record<keyof typeof ways, number[]> = { shim: [], script: [], curl: [], empty: [], http: [] }
    // The first calls open the session's run and warm the worker: not counted.
    for (const way of Object.values(ways)) await way()
    for (let i = 0; i < samples; i++) {
      for (const [name, way] of Object.entries(ways) as Array<[keyof typeof ways, () => Promise<number>]>) times[name].push(await way())
    }
    const cpu = {
      shim: round(await cpuPerCall(shimArgv, event, samples)),
      script: round(await cpuPerCall(scriptArgv, event, samples)),
      curl: round(await cpuPerCall(curlArgv, event, samples)),
    }
    const lean = await leanTimes(samples, event, tokenFile, url, shim)
    const m = (way: keyof typeof ways): number => round(median(times[way]))
    return {
      shim_overhead_ms: round(lean.shim - lean.http),
      shim: {
        samples,
        form: relative(ROOT, shim),
        lean: { shim_ms: round(lean.shim), script_ms: round(lean.script), empty_ms: round(lean.empty), http_ms: round(lean.http) },
        node: { overhead_ms: round(median(times.shim) - median(times.http)), shim_ms: m('shim'), script_ms: m('script'), curl_ms: m('curl'), empty_ms: m('empty'), http_ms: m('http') },
        cpu_ms: cpu,
      },
    }
  } finally {
    await stopProcess(serving.child)
    await rm(state, { recursive: true, force: true })
  }
}

/** The table rows for bench/run.ts's summary. */
export function shimRows(agents: Record<string, unknown> | undefined): Array<[string, string]> {
  const shim = agents?.shim as ShimResult['shim'] | undefined
  if (!shim) return []
  const { lean, node } = shim
  return [
    [`${shim.form} - direct HTTP call, started as Codex does (ms)`, `${agents?.shim_overhead_ms}`],
    ['  shim / script / empty process / direct HTTP, medians (ms)', `${lean.shim_ms} / ${lean.script_ms} / ${lean.empty_ms} / ${lean.http_ms}`],
    [`${shim.form} - direct HTTP call, started from Node (ms)`, `${node.overhead_ms}`],
    ['  shim / script / curl / empty process / direct HTTP, medians (ms)', `${node.shim_ms} / ${node.script_ms} / ${node.curl_ms} / ${node.empty_ms} / ${node.http_ms}`],
    ['CPU per call: shim / script (sh + bash) / curl (ms)', `${shim.cpu_ms.shim} / ${shim.cpu_ms.script} / ${shim.cpu_ms.curl}`],
  ]
}
