/**
 * What hookd's HTTP front door adds to an agent's http hook call, without the agent: the same Claude
 * Code PreToolUse event (a harmless `echo`, which the guard lets through) is posted, in alternating
 * samples `GAP` ms apart, to `hookd serve --http` running `guard`, and to a trivial HTTP server in a
 * process of its own that answers `{}` at once (the floor of any http hook). Each post opens its own
 * connection. It prints, as medians:
 *
 *   hookd / trivial      the round trip seen by the poster, and their difference (issue 17's gap)
 *   decision / hook      the sidecar's own timings of the point call and of the guard's step (its log)
 *   cpu per call         CPU time (user + system, from /proc) of the sidecar's main process and of its
 *                        sandbox workers, divided by the calls: unlike wall time, it does not grow when
 *                        other work keeps the cores busy
 *
 *   npx tsx bench/front-door.ts [CALLS=100] [GAP_MS=100]
 *
 * Claude Code itself (its debug log's hook times) is measured by test/agents/support/claude-bench.ts;
 * this isolates hookd's share, for work on the front door (docs/performance.md#the-front-door).
 */
import { spawn } from 'node:child_process'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { request } from 'node:http'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT, startServe, stopProcess } from '../test/support/processes.js'

const CALLS = Number(process.argv[2] ?? 100)
const GAP_MS = Number(process.argv[3] ?? 100)
const WARMUP = 5

const TRIVIAL = `
const server = require('node:http').createServer((req, res) => {
  req.resume()
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' }); res.end('{}') })
})
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'))
`

function post(url: string, token: string, body: string): Promise<number> {
  const start = process.hrtime.bigint()
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` } }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? resolve(Number(process.hrtime.bigint() - start) / 1e6) : reject(new Error(`${url} answered ${res.statusCode}`))))
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** CPU time of a process so far, in ms (utime + stime). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) * (1000 / 100)
}

async function childrenOf(pid: number): Promise<number[]> {
  const text = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '')
  return text.trim() ? text.trim().split(/\s+/).map(Number) : []
}

function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const event = (i: number, cwd: string): string =>
  JSON.stringify({
    session_id: 'front-door-bench',
    transcript_path: join(cwd, 'transcript.jsonl'),
    cwd,
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command: `echo ${i}`, description: 'bench' },
    tool_use_id: `toolu_${i}`,
  })

async function main(): Promise<void> {
  const state = await mkdtemp(join(tmpdir(), 'hookd-bench-door-'))
  const serving = await startServe(['--hooks', join(ROOT, 'hooks'), '--listen', `unix:${join(state, 'hookd.sock')}`, '--http', '0', '--no-watch', '--log-format', 'json'], {
    cwd: state,
    timeoutMs: 60_000,
    ready: /http on (http:\/\/[^\s"]+)/,
  })
  const trivial = spawn(process.execPath, ['-e', TRIVIAL], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const port = await new Promise<string>((resolve) => trivial.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())))
    const token = (await readFile(join(state, '.hookd', 'http-token'), 'utf8')).trim()
    const hookdUrl = `${serving.address}/claude-code/guard`
    const trivialUrl = `http://127.0.0.1:${port}/`
    const pid = serving.child.pid as number
    const hookd: number[] = []
    const floor: number[] = []
    let cpu = { main: 0, workers: 0 }
    for (let i = 0; i < WARMUP + CALLS; i++) {
      if (i === WARMUP) {
        const workers = await childrenOf(pid)
        cpu = { main: await cpuMs(pid), workers: (await Promise.all(workers.map(cpuMs))).reduce((a, b) => a + b, 0) }
      }
      // Alternate which goes first, so that neither always follows the other.
      for (const target of i % 2 ? ['trivial', 'hookd'] : ['hookd', 'trivial']) {
        await new Promise((resolve) => setTimeout(resolve, GAP_MS))
        const ms = target === 'hookd' ? await post(hookdUrl, token, event(i, state)) : await post(trivialUrl, token, event(i, state))
        if (i >= WARMUP) (target === 'hookd' ? hookd : floor).push(ms)
      }
    }
    const workers = await childrenOf(pid)
    const mainCpu = ((await cpuMs(pid)) - cpu.main) / CALLS
    const workerCpu = ((await Promise.all(workers.map(cpuMs))).reduce((a, b) => a + b, 0) - cpu.workers) / CALLS
    const decisions = serving.output.stderr
      .split('\n')
      .filter((line) => line.includes('"event":"decision"') && line.includes('beforeToolExecute'))
      .map((line) => JSON.parse(line) as { duration_ms: number; hooks: Array<{ duration_ms: number }> })
      .slice(WARMUP)
    const row = (label: string, value: string): void => void process.stdout.write(`  ${label.padEnd(44)}${value}\n`)
    process.stdout.write(`hookd front door: ${CALLS} Claude Code PreToolUse calls ${GAP_MS} ms apart (load ${loadavg()[0]?.toFixed(1)})\n`)
    row('hookd / trivial http hook (median ms)', `${median(hookd).toFixed(2)} / ${median(floor).toFixed(2)} (+${(median(hookd) - median(floor)).toFixed(2)})`)
    row('decision / guard step, sidecar log (ms)', `${median(decisions.map((d) => d.duration_ms)).toFixed(2)} / ${median(decisions.map((d) => d.hooks[0]?.duration_ms ?? Number.NaN)).toFixed(2)}`)
    row('cpu per call: sidecar / its workers (ms)', `${mainCpu.toFixed(2)} / ${workerCpu.toFixed(2)} (${workers.length} workers)`)
  } finally {
    trivial.kill()
    await stopProcess(serving.child)
    await rm(state, { recursive: true, force: true })
  }
}

await main()
