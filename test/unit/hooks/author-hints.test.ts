/**
 * Author hints (src/sidecar/hooks/author-hints.ts): for each first mistake, the advice names what to
 * write instead. The messages fed in are the ones the real sandbox produces
 * (test/integration/cli/author-hints.test.ts checks that against a running sidecar), so the hints match
 * what authors see.
 */
import { describe, expect, it } from 'vitest'
import { builtinAdvice, hintFor } from '../../../src/sidecar/hooks/author-hints.js'

describe('hintFor', () => {
  it('points an export in a CommonJS file to module.exports or index.mjs', () => {
    for (const message of ["SyntaxError: Unexpected token 'export'", 'SyntaxError: Cannot use import statement outside a module']) {
      expect(hintFor({ kind: 'load', message })).toBe(
        'hookd runs a plain index.js as a CommonJS script: write module.exports = { beforeToolExecute(ctx, call) { ... } } instead of export, or name the file index.mjs (or index.ts) and hookd bundles it as a module',
      )
    }
  })

  it('says what replaces require, process, console and fetch', () => {
    expect(hintFor({ kind: 'throw', message: "hook 'x' beforeRun: ReferenceError: require is not defined" })).toMatch(
      /^hooks have no require\(\) when they run: write import .* use ctx\.file for files, ctx\.http\.fetch for HTTP and ctx\.env/,
    )
    expect(hintFor({ message: 'ReferenceError: process is not defined' })).toMatch(/^hooks have no process: read allowed environment variables from ctx\.env/)
    expect(hintFor({ message: 'ReferenceError: console is not defined' })).toBe('hooks have no console: log with ctx.log(...values), which reaches the host while the hook runs')
    expect(hintFor({ message: 'ReferenceError: fetch is not defined' })).toMatch(/ctx\.http\.fetch\(url, init\)/)
    expect(hintFor({ message: 'ReferenceError: myHelper is not defined' })).toBeUndefined()
  })

  it('names the point a misspelt export meant', () => {
    expect(hintFor({ exported: 'beforeToolExecut' })).toBe("rename 'beforeToolExecut' to 'beforeToolExecute'")
    expect(hintFor({ exported: 'BeforeRun' })).toBe("rename 'BeforeRun' to 'beforeRun'")
    expect(hintFor({ exported: 'helper' })).toBeUndefined()
    expect(hintFor({ exported: 'default' })).toMatch(/^hookd reads the handlers from module\.exports/)
  })

  it("turns a Claude Code-style answer into hookd's, keeping the reason", () => {
    expect(hintFor({ point: 'beforeToolExecute', returned: { decision: 'block', reason: 'no rm -rf' } })).toBe(
      "'decision' is Claude Code's hook answer, not hookd's: to refuse the tool call, return { allow: false, reason: \"no rm -rf\" } from beforeToolExecute (to let it run, return nothing)",
    )
    expect(
      hintFor({ point: 'beforeToolExecute', returned: { hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny', permissionDecisionReason: 'not here' } } }),
    ).toBe(
      "'hookSpecificOutput' is Claude Code's hook answer, not hookd's: to refuse the tool call, return { allow: false, reason: \"not here\" } from beforeToolExecute (to let it run, return nothing)",
    )
    expect(hintFor({ point: 'beforeToolExecute', returned: { continue: false, stopReason: 'stop' } })).toMatch(
      /^'continue', 'stopReason' are Claude Code's hook answer, not hookd's: to refuse the tool call, return \{ allow: false, reason: "stop" \}/,
    )
    expect(hintFor({ point: 'afterToolExecute', returned: { decision: 'block', reason: 'lint failed' } })).toBe(
      "'decision' is Claude Code's hook answer, not hookd's: return { text, isError } to change what the model reads, e.g. { text: \"lint failed\", isError: true }",
    )
    expect(hintFor({ point: 'beforeToolExecute', returned: { allow: false, reason: 'fine' } })).toBeUndefined()
  })

  it('finds the foreign fields in an ignored-field diagnostic when the answer itself is not at hand', () => {
    const message =
      "hook 'cc' beforeToolExecute returned 'decision', which beforeToolExecute does not let a hook change; ignored (it accepts: allow, reason, arguments, defer)"
    expect(hintFor({ kind: 'ignored-field', point: 'beforeToolExecute', message })).toMatch(/^'decision' is Claude Code's hook answer, not hookd's: to refuse the tool call, return \{ allow: false/)
  })

  it('knows what replaces each Node built-in module', () => {
    expect(builtinAdvice('node:fs/promises')).toMatch(/^read and write files in the workdir with ctx\.file/)
    expect(builtinAdvice('https')).toMatch(/^make HTTP requests with ctx\.http\.fetch/)
    expect(builtinAdvice('child_process')).toMatch(/^hooks cannot start programs/)
    expect(builtinAdvice('zlib')).toMatch(/^bundle a pure-JavaScript package instead/)
  })
})
