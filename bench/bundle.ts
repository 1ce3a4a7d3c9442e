/**
 * What bundling an ordinary hook costs, through bundleHook (src/sidecar/hooks/bundle.ts) as the
 * registry calls it: a TypeScript hook of two files, and one that imports zod from its own
 * node_modules (dozens of files). Beside each, the in-run share of the checks made before esbuild
 * parses a file: the nesting scan (src/sidecar/hooks/source-nesting.ts) over the same inputs.
 *
 *   npx tsx bench/bundle.ts                 # 60 bundles of each hook
 *   BENCH_SMOKE=1 npx tsx bench/bundle.ts   # 5 of each, only proves the benchmark works
 *
 * Nothing here asserts a speed.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { bundleHook } from '../src/sidecar/hooks/bundle.js'
import { nesting } from '../src/sidecar/hooks/source-nesting.js'

const SMOKE = process.env.BENCH_SMOKE === '1'
const ROUNDS = SMOKE ? 5 : 60

const HOOKS: Record<string, Record<string, string>> = {
  'TypeScript, two files': {
    'index.ts': "import { verdict } from './lib/verdict'\n\nexport default {\n  beforeToolExecute(ctx: unknown, call: { name: string }) {\n    return verdict(call.name)\n  },\n}\n",
    'lib/verdict.ts': "export function verdict(name: string): { allow: boolean; reason?: string } {\n  return name === 'shell' ? { allow: false, reason: 'no shell' } : { allow: true }\n}\n",
  },
  'TypeScript with zod from node_modules': {
    'index.ts': "import * as z from 'zod'\n\nconst Args = z.object({ command: z.string().max(200) })\n\nexport default {\n  beforeToolExecute(ctx: unknown, call: { arguments: unknown }) {\n    return Args.safeParse(call.arguments).success ? { allow: true } : { allow: false, reason: 'bad arguments' }\n  },\n}\n",
    'package.json': '{"dependencies": {"zod": "4"}}',
  },
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 100) / 100
}

async function main(): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'hookd-bench-bundle-'))
  const zod = dirname(createRequire(import.meta.url).resolve('zod/package.json'))
  try {
    process.stdout.write(`bundleHook: ${ROUNDS} bundles of each hook, one at a time\n\n`)
    process.stdout.write(`${'hook'.padEnd(40)}  ${'inputs'.padStart(6)}  ${'KiB read'.padStart(8)}  ${'bundle ms'.padStart(9)}  ${'scan ms'.padStart(7)}\n`)
    for (const [name, files] of Object.entries(HOOKS)) {
      const dir = join(root, name.replace(/\W+/g, '-'))
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, path)), { recursive: true })
        await writeFile(join(dir, path), text)
      }
      if (files['package.json']) await cp(zod, join(dir, 'node_modules', 'zod'), { recursive: true })
      const first = await bundleHook(dir)
      if (!first.ok) throw new Error(`${name}: ${first.message}`)
      const texts = await Promise.all(first.inputs.map((input) => readFile(join(dir, input), 'utf8')))
      const bundles: number[] = []
      const scans: number[] = []
      for (let i = 0; i < ROUNDS; i++) {
        const t = performance.now()
        const out = await bundleHook(dir)
        bundles.push(performance.now() - t)
        if (!out.ok) throw new Error(`${name}: ${out.message}`)
        const s = performance.now()
        for (const text of texts) nesting(text, 256)
        scans.push(performance.now() - s)
      }
      const kib = Math.round(texts.reduce((sum, text) => sum + text.length, 0) / 1024)
      process.stdout.write(
        `${name.padEnd(40)}  ${String(first.inputs.length).padStart(6)}  ${String(kib).padStart(8)}  ${String(median(bundles)).padStart(9)}  ${String(median(scans)).padStart(7)}\n`,
      )
    }
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

await main()
