#!/usr/bin/env node
// Entry point of the `hookd` command: runs the built CLI (dist/), or tells how to build it. When hookd's
// own code cannot load (a dependency missing from a broken install), it says so in readable lines
// rather than as Node's one uncaught stack, and what to do.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const cli = fileURLToPath(new URL('../dist/cli/bin.js', import.meta.url))
if (!existsSync(cli)) {
  process.stderr.write('hookd: not built yet; run `make build` (or `npm run build`) in the hookd folder first\n')
  process.exit(1)
}
try {
  await import(cli)
} catch (err) {
  // Control characters escaped, so that a path or message cannot act on the terminal (src/protocol/text.ts).
  const text = String((err instanceof Error && err.stack) || err).replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
  const lines = text.split('\n').filter((line) => line.trim() !== '').slice(0, 40)
  process.stderr.write(
    `hookd: could not load its own code (${cli}): ${lines.join('\n')}\n` +
      "hookd: reinstall the package (npm install hookd-sandbox) so that npm installs all of its dependencies; if that does not help, please report it, with the lines above, to the maintainers of the hookd-sandbox package\n",
  )
  process.exitCode = 1
}
