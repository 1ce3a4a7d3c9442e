/**
 * Hot-reload latency: from the moment a save finishes to the first point call that runs the new
 * version, for each editor save pattern, against `hookd serve` in its own process (as a host runs it).
 * The in-run baseline is a plain call's round trip, the granularity of the measurement: a call is
 * started, and timed, as soon as the previous one answers.
 *
 *   npx tsx bench/reload.ts                 # 30 saves per pattern
 *   BENCH_SMOKE=1 npx tsx bench/reload.ts   # 3 per pattern, only proves the benchmark works
 *
 * Nothing here asserts a speed. The target (docs/hot-reload.md) is 500 ms; the watcher waits
 * DEFAULT_WATCH.debounceMs + DEFAULT_WATCH.settleMs of quiet by design before it loads a file.
 */
import { mkdir, mkdtemp, open, rename, rm, unlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HookdClient, type HostSession } from '../src/host/index.js'
import { DEFAULT_SETTLE as DEFAULT_WATCH } from '../src/sidecar/hooks/settled-watcher.js'
import { startServe, stopProcess } from '../test/support/processes.js'

const SMOKE = process.env.BENCH_SMOKE === '1'
const SAVES = SMOKE ? 3 : 30
const CALL = { id: 'c1', name: 'shell', arguments: { command: 'ls' } }

const hookSource = (tag: string): string =>
  `// ${'padding '.repeat(200)}\nmodule.exports = {\n  beforeToolExecute(ctx, call) {\n    return { allow: false, reason: ${JSON.stringify(tag)} }\n  },\n}\n`

/** Editors' save patterns, done back to back as editors do them. */
const PATTERNS: Record<string, (file: string, text: string) => Promise<void>> = {
  'write in place': (file, text) => writeFile(file, text),
  'truncate then write': async (file, text) => {
    const handle = await open(file, 'w')
    await handle.write(text)
    await handle.close()
  },
  'temp file then rename': async (file, text) => {
    await writeFile(`${file}.tmp`, text)
    await rename(`${file}.tmp`, file)
  },
  'delete then create': async (file, text) => {
    await unlink(file)
    await writeFile(file, text)
  },
}

function percentile(sorted: number[], p: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[i] ?? 0
}

function stats(samples: number[]): { median: number; p90: number; max: number } {
  const sorted = [...samples].sort((a, b) => a - b)
  const round = (n: number): number => Math.round(n * 10) / 10
  return { median: round(percentile(sorted, 50)), p90: round(percentile(sorted, 90)), max: round(sorted.at(-1) ?? 0) }
}

/** Calls until a call runs `tag`; returns when that call was started, in ms since `since`. */
async function firstCallSeeing(session: HostSession, tag: string, since: number, limitMs: number): Promise<number> {
  for (;;) {
    const started = performance.now()
    const out = await session.call('beforeToolExecute', CALL)
    if (out.result.reason === tag) return started - since
    if (started - since > limitMs) throw new Error(`the new version was not served within ${limitMs} ms`)
  }
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'hookd-bench-reload-'))
  const file = join(root, 'guard', 'index.js')
  await mkdir(join(root, 'guard'))
  await writeFile(file, hookSource('v0'))
  const address = `unix:${join(root, 'hookd.sock')}`
  const { child } = await startServe(['--hooks', root, '--listen', address, '--workers', '1'])
  const client = await HookdClient.connect(address)
  try {
    const session = await client.openSession({ sessionId: 'bench', agentId: 'bench', modelId: 'bench', hooks: ['guard'] })
    const rtt: number[] = []
    for (let i = 0; i < (SMOKE ? 10 : 200); i++) {
      const t = performance.now()
      await session.call('beforeToolExecute', CALL)
      rtt.push(performance.now() - t)
    }
    const rows: Array<[string, ReturnType<typeof stats>]> = [['baseline: one call round trip', stats(rtt)]]
    let n = 0
    for (const [pattern, save] of Object.entries(PATTERNS)) {
      const samples: number[] = []
      for (let i = 0; i < SAVES; i++) {
        n += 1
        const tag = `v${n}`
        await save(file, hookSource(tag))
        const saved = performance.now()
        samples.push(await firstCallSeeing(session, tag, saved, 10_000))
        // Let the folder go quiet so that saves do not overlap.
        await new Promise((r) => setTimeout(r, 50))
      }
      rows.push([pattern, stats(samples)])
    }
    session.abandon()
    const width = Math.max(...rows.map(([name]) => name.length))
    process.stdout.write(
      `hot reload: save finished -> first call that runs the new version (${SAVES} saves per pattern; watcher debounce ${DEFAULT_WATCH.debounceMs} ms + settle ${DEFAULT_WATCH.settleMs} ms)\n\n`,
    )
    process.stdout.write(`${'pattern'.padEnd(width)}  ${'median ms'.padStart(9)}  ${'p90 ms'.padStart(7)}  ${'max ms'.padStart(7)}\n`)
    for (const [name, s] of rows) {
      process.stdout.write(`${name.padEnd(width)}  ${String(s.median).padStart(9)}  ${String(s.p90).padStart(7)}  ${String(s.max).padStart(7)}\n`)
    }
    const all = rows.slice(1).map(([, s]) => s.p90)
    process.stdout.write(`\nworst p90 across patterns: ${Math.max(...all)} ms (target: 500 ms)\n`)
  } finally {
    client.close()
    await stopProcess(child)
    await rm(root, { recursive: true, force: true })
  }
}

await main()
