// @ts-check
// What the commands of a shell command line run, for hookd's starter rules: the program of each simple
// command under its wrappers (sudo, env, xargs, ...), where a shell takes its code from (`-c`, a
// script, its input), the shell code a command carries (`sh -c '...'`, `eval`, a here-document fed to
// a shell), and every script a line holds, read in turn and bounded (scriptsOf). The reading itself is
// shell.js's.
'use strict'

const { parseShell, MAX_CHARS, MAX_DEPTH, MAX_COMMANDS } = require('./shell.js')

/** @typedef {import('./shell.js').Word} Word */
/** @typedef {import('./shell.js').Command} Command */
/** @typedef {import('./shell.js').Script} Script */

/**
 * Commands that run the command after them: their options, the letters of those that take a value,
 * and the long options that take one.
 * @type {Record<string, { values: string, long: string[], positionals?: number }>}
 */
const WRAPPERS = {
  sudo: { values: 'ugCDhprtUT', long: ['--user', '--group', '--close-from', '--chdir', '--host', '--prompt', '--role', '--type', '--other-user', '--command-timeout'] },
  doas: { values: 'uC', long: [] },
  env: { values: 'uCS', long: ['--unset', '--chdir', '--split-string'] },
  nice: { values: 'n', long: ['--adjustment'] },
  ionice: { values: 'cnp', long: ['--class', '--classdata', '--pid'] },
  nohup: { values: '', long: [] },
  time: { values: 'fo', long: ['--format', '--output'] },
  command: { values: '', long: [] },
  builtin: { values: '', long: [] },
  exec: { values: 'a', long: [] },
  stdbuf: { values: 'ioe', long: ['--input', '--output', '--error'] },
  timeout: { values: 'sk', long: ['--signal', '--kill-after'], positionals: 1 },
  xargs: { values: 'IdLnPsEa', long: ['--delimiter', '--max-lines', '--max-args', '--max-procs', '--max-chars', '--eof', '--arg-file', '--replace'] },
  chroot: { values: '', long: ['--userspec', '--groups'], positionals: 1 },
  watch: { values: 'nd', long: ['--interval'] },
}

/** Words a command line may start with that are the shell's own syntax, not the command. */
const KEYWORDS = new Set(['if', 'then', 'elif', 'else', 'fi', 'do', 'done', 'while', 'until', '!', '{', '}', 'function', 'select', 'coproc'])

const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*\+?=/

/**
 * @typedef {object} Program
 * @property {string | undefined} name the program's name (its file name without folders), or undefined when it is not written out ($X, $(...))
 * @property {Word | undefined} word the word that names it
 * @property {Word[]} args its arguments
 * @property {Word[]} assignments NAME=value words before it, its own and its wrappers' (env NAME=value)
 * @property {string[]} wrappers the commands it runs under (sudo, env, xargs, ...)
 */

/** What a simple command runs: the program after assignments, keywords and wrappers, and its arguments. */
function programOf(/** @type {Command} */ command) {
  const words = command.words
  /** @type {Word[]} */
  const assignments = []
  /** @type {string[]} */
  const wrappers = []
  let i = 0
  for (;;) {
    while (i < words.length && (KEYWORDS.has(words[i]?.text ?? '') || ASSIGNMENT.test(words[i]?.text ?? ''))) {
      const w = /** @type {Word} */ (words[i])
      if (ASSIGNMENT.test(w.text)) assignments.push(w)
      i += 1
    }
    const w = words[i]
    if (!w) return /** @type {Program} */ ({ name: undefined, word: undefined, args: [], assignments, wrappers })
    const name = w.literal ? baseName(w.text) : undefined
    const wrapper = name === undefined ? undefined : WRAPPERS[name]
    if (!wrapper || !Object.hasOwn(WRAPPERS, /** @type {string} */ (name))) {
      return /** @type {Program} */ ({ name, word: w, args: words.slice(i + 1), assignments, wrappers })
    }
    // `command -v x` and `command -V x` only look x up.
    if (name === 'command' && /^-[a-zA-Z]*[vV]/.test(words[i + 1]?.text ?? '')) {
      return /** @type {Program} */ ({ name, word: w, args: words.slice(i + 1), assignments, wrappers })
    }
    wrappers.push(/** @type {string} */ (name))
    i += 1
    let positionals = wrapper.positionals ?? 0
    while (i < words.length) {
      const t = /** @type {Word} */ (words[i]).text
      if (t === '--') {
        i += 1
        break
      }
      if (name === 'env' && ASSIGNMENT.test(t)) {
        assignments.push(/** @type {Word} */ (words[i]))
        i += 1
        continue
      }
      if (t.startsWith('--')) {
        i += wrapper.long.includes(t) ? 2 : 1
        continue
      }
      if (t.startsWith('-') && t.length > 1) {
        const letters = t.slice(1)
        const at = [...letters].findIndex((l) => wrapper.values.includes(l))
        i += at >= 0 && at === letters.length - 1 ? 2 : 1
        continue
      }
      if (positionals > 0) {
        positionals -= 1
        i += 1
        continue
      }
      break
    }
  }
}

/** The last part of a path: `/usr/bin/curl` -> `curl`. */
function baseName(/** @type {string} */ path) {
  const trimmed = path.replace(/\/+$/, '')
  const slash = trimmed.lastIndexOf('/')
  return slash < 0 ? trimmed : trimmed.slice(slash + 1)
}

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'yash', 'fish', 'rbash'])

/**
 * The shell code a command runs besides its own words: `sh -c CODE`, `eval ARGS`, `su -c CODE`, a
 * shell fed a here-document or a here-string. Each as text, to be read as a script.
 */
function codeOf(/** @type {Command} */ command) {
  const p = programOf(command)
  /** @type {string[]} */
  const code = []
  if (p.wrappers.includes('env')) {
    // env -S 'sh -x script' splits its string into a command.
    const words = command.words
    const at = words.findIndex((w) => w.text === '-S' || w.text === '--split-string')
    const s = at >= 0 ? words[at + 1] : undefined
    if (s) code.push(s.text)
  }
  if (p.name === undefined) return code
  let name = p.name
  let args = p.args
  if (name === 'busybox' && SHELLS.has(args[0]?.text ?? '')) {
    name = /** @type {string} */ (args[0]?.text)
    args = args.slice(1)
  }
  if (name === 'eval') {
    if (args.length > 0) code.push(args.map((a) => a.text).join(' '))
  } else if (SHELLS.has(name)) {
    const shell = shellArgs(args)
    if (shell.code !== undefined) code.push(shell.code.text)
    else if (shell.script === undefined || shell.stdin) {
      for (const r of command.redirects) {
        if (r.heredoc) code.push(r.heredoc.body)
        else if (r.op === '<<<' && r.target) code.push(r.target.text)
      }
    }
  } else if (name === 'su') {
    const at = args.findIndex((a) => a.text === '-c' || a.text === '--command')
    const c = at >= 0 ? args[at + 1] : undefined
    if (c) code.push(c.text)
  }
  return code
}

/**
 * How a shell's arguments say where its code comes from: `-c CODE`, a script file, or its input
 * (no script, or -s).
 * @returns {{ code: Word | undefined, script: Word | undefined, stdin: boolean }}
 */
function shellArgs(/** @type {Word[]} */ args) {
  let c = false
  let stdin = false
  for (let i = 0; i < args.length; i++) {
    const t = /** @type {Word} */ (args[i]).text
    if (t === '--' || t === '-') return { code: c ? args[i + 1] : undefined, script: c ? undefined : args[i + 1], stdin: stdin || t === '-' }
    if ((t === '-o' || t === '+o' || t === '-O' || t === '+O' || t === '--rcfile' || t === '--init-file') && i + 1 < args.length) {
      i += 1
      continue
    }
    if (t.startsWith('--')) continue
    if (/^[-+][A-Za-z]+$/.test(t)) {
      if (t.startsWith('-') && t.includes('c')) c = true
      if (t.startsWith('-') && t.includes('s')) stdin = true
      continue
    }
    return { code: c ? args[i] : undefined, script: c ? undefined : args[i], stdin }
  }
  return { code: undefined, script: undefined, stdin: true }
}

/**
 * Every script a command line holds, the line itself first: its substitutions, and the shell code its
 * commands run (`sh -c`, `eval`, here-documents fed to a shell), each read in turn, at most MAX_DEPTH
 * deep. `problem` says when some of it could not be read.
 * @returns {{ scripts: Array<{ script: Script, depth: number }>, problem: string | undefined }}
 */
function scriptsOf(/** @type {string} */ text) {
  const top = parseShell(text)
  /** @type {Array<{ script: Script, depth: number }>} */
  const scripts = []
  let problem = top.problem
  let count = 0
  // Code inside code is read again (`sh -c "$(...)"` reads the substitution as a word and as code):
  // all the reading together is bounded, not only each piece.
  let read = text.length
  const visit = (/** @type {Script} */ script, /** @type {number} */ depth) => {
    count += 1
    if (count > MAX_COMMANDS) {
      problem ??= `the command holds more than ${MAX_COMMANDS} commands`
      return
    }
    scripts.push({ script, depth })
    for (const command of script.commands) {
      for (const w of command.words) for (const s of w.subs) visit(s, depth + 1)
      for (const r of command.redirects) {
        for (const s of r.target?.subs ?? []) visit(s, depth + 1)
        for (const s of r.heredoc?.subs ?? []) visit(s, depth + 1)
      }
      for (const code of codeOf(command)) {
        if (depth + 1 > MAX_DEPTH) {
          problem ??= `the command nests $(...), backticks or sh -c more than ${MAX_DEPTH} levels deep`
          continue
        }
        read += code.length
        if (read > 4 * MAX_CHARS) {
          problem ??= `the command holds more than ${4 * MAX_CHARS} characters of shell code, counted at every level`
          continue
        }
        const inner = parseShell(code)
        if (inner.problem) problem ??= inner.problem
        visit(inner, depth + 1)
      }
    }
  }
  visit(top, 0)
  return { scripts, problem }
}

/** Every simple command of a command line, at every depth (see scriptsOf). */
function commandsOf(/** @type {string} */ text) {
  const { scripts, problem } = scriptsOf(text)
  return { commands: scripts.flatMap((s) => s.script.commands.map((command) => ({ command, depth: s.depth }))), problem }
}

/** The file paths a patch names (`*** Add File: x`, `*** Update File:`, `*** Delete File:`, `*** Move to:`). */
function patchPaths(/** @type {string} */ patch) {
  /** @type {string[]} */
  const paths = []
  for (const line of patch.split(/\r?\n/)) {
    const m = /^\*\*\* (?:Add File|Update File|Delete File|Move to): (.*)$/.exec(line.trim())
    if (m && m[1] !== undefined) paths.push(m[1].trim())
  }
  return paths
}

module.exports = { scriptsOf, commandsOf, programOf, codeOf, shellArgs, baseName, patchPaths, SHELLS }
