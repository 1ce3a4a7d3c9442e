/**
 * The npm name `hookd` belongs to an unrelated package (issue 15.16): `npx hookd` outside a clone
 * would fetch a stranger's code. The package is `hookd-sandbox`, every documented command runs it by
 * that name, and npx resolves that name to this CLI.
 */
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/processes.js'

const run = promisify(execFile)

/** Files a user reads or runs commands from: docs, help text, examples, the Makefile. */
async function userFacingFiles(): Promise<string[]> {
  const out = [join(ROOT, 'README.md'), join(ROOT, 'Makefile')]
  const walk = async (dir: string, keep: (name: string) => boolean): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) await walk(path, keep)
      else if (keep(entry.name)) out.push(path)
    }
  }
  await walk(join(ROOT, 'docs'), (n) => n.endsWith('.md'))
  await walk(join(ROOT, 'src'), (n) => n.endsWith('.ts'))
  await walk(join(ROOT, 'examples'), (n) => /\.(py|md|ts|js)$/.test(n))
  await walk(join(ROOT, 'types'), (n) => n.endsWith('.ts'))
  return out
}

describe('the package name', () => {
  it('is hookd-sandbox, whose bins hookd and hookd-sandbox are this CLI', async () => {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { name: string; bin: Record<string, string> }
    expect(pkg.name).toBe('hookd-sandbox')
    expect(pkg.bin).toEqual({ hookd: 'bin/hookd.js', 'hookd-sandbox': 'bin/hookd.js' })
  })

  it('is the one every documented command and import uses', async () => {
    const strays: string[] = []
    for (const file of await userFacingFiles()) {
      const lines = (await readFile(file, 'utf8')).split('\n')
      lines.forEach((line, i) => {
        if (/npx hookd(?![-\w])/.test(line) || /(?<![-\w./])hookd\/(host|hook|agent|claude-agent-sdk)\b/.test(line) || /npm (install|i) hookd(?![-\w])/.test(line)) {
          strays.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`)
        }
      })
    }
    expect(strays).toEqual([])
  })

  it('npx hookd-sandbox runs this CLI from the clone, without the registry', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'hookd-npx-cache-'))
    try {
      const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string }
      const { stdout } = await run('npm', ['exec', '--offline', '--cache', cache, '--', 'hookd-sandbox', '--version'], { cwd: ROOT, timeout: 120_000 })
      expect(stdout.trim()).toBe(pkg.version)
    } finally {
      await rm(cache, { recursive: true, force: true })
    }
  }, 150_000)
})
