#!/usr/bin/env node
// Entry point of the `hookd` command: runs the built CLI (dist/), or tells how to build it.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const cli = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))
if (!existsSync(cli)) {
  process.stderr.write('hookd: not built yet; run `make build` (or `npm run build`) in the hookd folder first\n')
  process.exit(1)
}
await import(cli)
