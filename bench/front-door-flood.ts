/**
 * What a flood of large events costs the front door: EVENTS Claude Code PreToolUse events of MB each,
 * posted at once (one connection each) by a client process of its own, to a sidecar in this process
 * whose hook waits on a local origin that answers every HOLD_MS. It prints how the requests were
 * answered and the peak resident memory of this process (the sidecar's main process) and of its
 * sandbox workers, sampled every 100 ms:
 *
 *   npx tsx bench/front-door-flood.ts [EVENTS=190] [MB=3.9] [HOLD_MS=8000] [BUDGET_MB]
 *
 * BUDGET_MB sets both byte budgets (per tenant and in all); without it the defaults apply
 * (docs/containment.md#the-front-doors-bounds has the figures).
 */
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Sidecar } from '../src/sidecar/sidecar.js'
import { hook, writeTree } from '../test/support/sidecar.js'

const EVENTS = Number(process.argv[2] ?? 190)
const MB = Number(process.argv[3] ?? 3.9)
const HOLD_MS = Number(process.argv[4] ?? 8000)
const BUDGET_MB = process.argv[5] === undefined ? undefined : Number(process.argv[5])
const TOKEN = 'hkd_front-door-flood-bench-0123456789abcdefghijk'

const CLIENT = `
const { request } = require('node:http')
const [url, n, mb] = [process.argv[1], Number(process.argv[2]), Number(process.argv[3])]
const pad = 'a'.repeat(Math.round(mb * 1024 * 1024))
const body = (i) => JSON.stringify({ session_id: 's' + (i % 8), cwd: '/tmp', hook_event_name: 'PreToolUse', permission_mode: 'default', tool_name: 'Bash', tool_input: { command: 'echo ' + pad, description: 'd' }, tool_use_id: 't' + i })
const post = (i) => new Promise((resolve) => {
  const req = request(url, { method: 'POST', agent: false, headers: { authorization: 'Bearer ${TOKEN}' } }, (res) => { res.resume(); res.on('end', () => resolve(String(res.statusCode))) })
  req.on('error', (e) => resolve(e.code))
  req.end(body(i))
})
Promise.all(Array.from({ length: n }, (_, i) => post(i))).then((codes) => {
  const count = {}
  for (const c of codes) count[c] = (count[c] ?? 0) + 1
  console.log(JSON.stringify(count))
})
`

function rssMiB(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** The sandbox workers: this process's children but the posting client. */
function workersMiB(client?: number): number {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim()
  return children ? children.split(/\s+/).map(Number).filter((pid) => pid !== client).reduce((sum, pid) => sum + rssMiB(pid), 0) : 0
}

async function main(): Promise<void> {
  const held: Array<() => void> = []
  const origin = createServer((_req, res) => void held.push(() => res.end('ok')))
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve))
  const originUrl = `http://127.0.0.1:${(origin.address() as AddressInfo).port}`
  const hooks = await writeTree({
    'slow/index.js': hook({ beforeToolExecute: 'function (ctx) { ctx.http.fetch(ctx.config.url) }' }),
    'slow/hook.json': JSON.stringify({ config: { url: `${originUrl}/x` } }),
    'slow.profile.json': JSON.stringify({ hooks: ['slow'], policy: { httpOrigins: [originUrl] } }),
  })
  const sidecar = await Sidecar.create({ hooks, workers: 1, watch: false })
  const budget = BUDGET_MB === undefined ? {} : { budget: { tenantBytes: BUDGET_MB * 1024 * 1024, totalBytes: BUDGET_MB * 1024 * 1024 } }
  const url = await sidecar.listenHttp('127.0.0.1', 0, { token: TOKEN, report: () => {}, ...budget })
  const before = { main: rssMiB(process.pid), workers: workersMiB() }
  const peak = { ...before }
  let client: ReturnType<typeof spawn> | undefined
  const sampler = setInterval(() => {
    peak.main = Math.max(peak.main, rssMiB(process.pid))
    peak.workers = Math.max(peak.workers, workersMiB(client?.pid))
  }, 100)
  const releaser = setInterval(() => held.splice(0).forEach((answer) => answer()), HOLD_MS)
  try {
    const started = Date.now()
    client = spawn(process.execPath, ['-e', CLIENT, `${url}/claude-code/profile/slow`, String(EVENTS), String(MB)], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    client.stdout?.on('data', (c: Buffer) => (out += c.toString()))
    await new Promise((resolve) => client?.on('exit', resolve))
    const mib = (n: number): string => `${Math.round(n)} MiB`
    process.stdout.write(`front door flood: ${EVENTS} PreToolUse events of ${MB} MB at once, the hook waiting ${HOLD_MS} ms (budget: ${BUDGET_MB === undefined ? 'default' : `${BUDGET_MB} MiB`})\n`)
    process.stdout.write(`  answers                 ${out.trim()} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
    process.stdout.write(`  peak rss, main process  ${mib(peak.main)} (from ${mib(before.main)})\n`)
    process.stdout.write(`  peak rss, workers       ${mib(peak.workers)} (from ${mib(before.workers)})\n`)
  } finally {
    clearInterval(sampler)
    clearInterval(releaser)
    held.splice(0).forEach((answer) => answer())
    await sidecar.stop()
    await new Promise<void>((resolve) => origin.close(() => resolve()))
    await rm(hooks, { recursive: true, force: true })
  }
}

await main()
