/**
 * What `hookd COMMAND` prints when it fails in a way none of its messages foresaw: the error and its
 * stack as real lines (each made inert: an error may quote a hook's or a file's text), then one line
 * saying what to report and to whom. Run through main(argv, io), whose io here breaks on purpose.
 */
import { describe, expect, it } from 'vitest'
import { main } from '../../src/cli/main.js'
import type { CliIo } from '../../src/cli/common/io.js'
import { unexpectedFailure } from '../../src/cli/common/unexpected-failure.js'
import { HOOKD_VERSION } from '../../src/protocol/version.js'
import { ROOT } from '../support/processes.js'

/** An io whose stdout throws what `fail` makes on the first write; what reached stderr. */
function brokenStdout(fail: () => unknown): { io: CliIo; stderr: () => string } {
  let stderr = ''
  const io: CliIo = {
    stdout: {
      write: () => {
        throw fail()
      },
    },
    stderr: { write: (text: string) => (stderr += text) },
    env: {},
    cwd: ROOT,
  }
  return { io, stderr: () => stderr }
}

const WHERE = `hookd ${HOOKD_VERSION} (Node ${process.version}, ${process.platform} ${process.arch})`

describe('an unexpected failure', () => {
  it('prints its message, then its stack as lines of their own, then what to report and to whom; exit 1', async () => {
    const { io, stderr } = brokenStdout(() => new Error('stdout is gone'))
    expect(await main(['health', '--help'], io)).toBe(1)
    const lines = stderr().split('\n')
    expect(lines[0]).toBe('hookd health: unexpected failure: Error: stdout is gone')
    const stack = lines.slice(1, -2)
    expect(stack.length).toBeGreaterThan(1)
    for (const line of stack) expect(line).toMatch(/^ {4}at /)
    expect(stack.some((line) => line.includes('src/cli/health/health.ts'))).toBe(true)
    expect(lines.at(-2)).toBe(
      `hookd health: this is a bug in ${WHERE}: no message of its own explains it; please report it, with the lines above, to the maintainers of the hookd-sandbox package`,
    )
    expect(lines.at(-1)).toBe('')
    expect(stderr()).not.toContain('\\n')
  })

  it('a module that is missing: says to reinstall, then to report', () => {
    const err = Object.assign(new Error("Cannot find package 'zod' imported from /p/node_modules/hookd-sandbox/dist/cli/check.js"), { code: 'ERR_MODULE_NOT_FOUND' })
    const text = unexpectedFailure('check', err)
    expect(text.split('\n')[0]).toBe("hookd check: unexpected failure: Error: Cannot find package 'zod' imported from /p/node_modules/hookd-sandbox/dist/cli/check.js")
    expect(text.split('\n').at(-2)).toBe(
      `hookd check: ${WHERE} is missing a module it needs: reinstall hookd-sandbox (npm install hookd-sandbox) so that npm installs all of its dependencies; if that does not help, please report it, with the lines above, to the maintainers of the hookd-sandbox package`,
    )
  })

  it("a hostile message cannot act on the terminal or forge a line; causes follow, indented; a value that is not an Error still says what it was", () => {
    const err = new Error('boom \u001b[2J\rhookd: all good', { cause: new TypeError('inner \u009b31m') })
    err.stack = `Error: boom \u001b[2J\rhookd: all good\n    at somewhere (file:///x.js:1:1)`
    const text = unexpectedFailure('serve', err)
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    const lines = text.split('\n')
    expect(lines[0]).toBe('hookd serve: unexpected failure: Error: boom \\u001b[2J\\rhookd: all good')
    expect(lines[1]).toBe('    at somewhere (file:///x.js:1:1)')
    expect(lines[2]).toBe('  caused by: TypeError: inner \\u009b31m')
    expect(lines.slice(3, -2).every((line) => line.startsWith('      at '))).toBe(true)
    expect(unexpectedFailure('list', 42).split('\n')[0]).toBe('hookd list: unexpected failure: 42')
  })

  it('a stack of thousands of lines is cut to 40, saying how many more', () => {
    const err = new Error('deep')
    err.stack = ['Error: deep', ...Array.from({ length: 5000 }, (_, i) => `    at f${i} (x.js:${i}:1)`)].join('\n')
    const lines = unexpectedFailure('test', err).split('\n')
    expect(lines).toHaveLength(40 + 1 + 1 + 1)
    expect(lines[40]).toBe('    ... (4961 more lines)')
  })
})
