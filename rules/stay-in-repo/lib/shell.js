// @ts-check
// A reader of shell command lines for hookd's starter rules: it splits a command the way a POSIX shell
// does (quotes, escapes, pipes, `;`, `&&`, redirections, here-documents, `$(...)`, backticks,
// `<(...)`) and says what each simple command runs and with which words. Every starter rule carries
// the same copy of this file (test/rules/rule-files.test.ts holds them equal).
//
// What it cannot see, and no reading of the text can: what a variable, a glob or an alias expands to
// when the command runs, what a script file or a program does inside, what a command written to a
// file and run later does. A word that holds an expansion says so (`literal: false`), and each rule
// decides what that means for it.
//
// Bounded: a command longer than MAX_CHARS or nested deeper than MAX_DEPTH is not read (`problem`
// says why), and the work is linear in the command's length at each level of nesting.
'use strict'

/** The longest command read; a longer one is refused by the rules that read commands. */
const MAX_CHARS = 256 * 1024
/** How deeply `$(...)`, backticks, `sh -c '...'` and `eval` may nest. */
const MAX_DEPTH = 8
/** The most simple commands read in one command line, at every level together. */
const MAX_COMMANDS = 4096

/**
 * @typedef {object} Word
 * @property {string} text what the shell passes, quotes and escapes removed; expansions kept as written
 * @property {number} start where the word starts in the text it was read from
 * @property {number} end where it ends
 * @property {boolean} literal false when part of it expands ($X, ${X}, $(...), `...`, $((...)), <(...))
 * @property {boolean} glob true when it holds an unquoted *, ? or [
 * @property {Script[]} subs the commands of its substitutions ($(...), `...`, <(...), >(...))
 *
 * @typedef {object} Redirect
 * @property {string} op '>', '>>', '>|', '<', '<>', '<<', '<<-', '<<<', '&>', '&>>', '>&' or '<&'
 * @property {string} fd the file descriptor written before the operator, or ''
 * @property {Word | undefined} target the file (the delimiter of a here-document)
 * @property {{ body: string, quoted: boolean, subs: Script[] } | undefined} heredoc a here-document's text
 *
 * @typedef {object} Command
 * @property {Word[]} words the command's words, assignments before it included
 * @property {Redirect[]} redirects
 * @property {number} pipeline which pipeline of its script it belongs to
 * @property {number} stage its place in that pipeline (0: the first command)
 *
 * @typedef {object} Script
 * @property {Command[]} commands in the order they appear
 * @property {string | undefined} problem why the text could not be read whole, if it could not
 *
 * @typedef {object} Budget
 * @property {number} commands
 * @property {string | undefined} problem
 */

/** Reads a command line. */
function parseShell(/** @type {string} */ text) {
  if (text.length > MAX_CHARS) return /** @type {Script} */ ({ commands: [], problem: `the command is longer than ${MAX_CHARS} characters` })
  /** @type {Budget} */
  const budget = { commands: 0, problem: undefined }
  const script = parseAt(text, 0, budget)
  script.problem = budget.problem
  return script
}

/** Reads `text` as a script at `depth`, sharing `budget` with the levels around it. */
function parseAt(/** @type {string} */ text, /** @type {number} */ depth, /** @type {Budget} */ budget) {
  return readList(text, 0, false, depth, budget).script
}

const SPECIAL_PARAMS = '0123456789@*#?$!-'

/**
 * Reads a list of commands from `src` at `from`, up to its end or, with `closer`, up to the `)` that
 * closes a `$(` or `<(` opened before `from`.
 * @returns {{ script: Script, end: number }}
 */
function readList(/** @type {string} */ src, /** @type {number} */ from, /** @type {boolean} */ closer, /** @type {number} */ depth, /** @type {Budget} */ budget) {
  /** @type {Command[]} */
  const commands = []
  let pos = from
  let pipeline = 0
  let stage = 0
  let parens = 0
  /** @type {Command} */
  let cur = { words: [], redirects: [], pipeline, stage }
  /** @type {Word | undefined} */
  let word
  /** @type {Redirect | undefined} */
  let awaiting
  /** @type {Redirect[]} */
  const heredocs = []

  const startWord = () => {
    if (!word) word = { text: '', start: pos, end: pos, literal: true, glob: false, subs: [] }
    return word
  }
  const endWord = () => {
    if (!word) return
    word.end = pos
    if (awaiting) {
      awaiting.target = word
      if (awaiting.op === '<<' || awaiting.op === '<<-') heredocs.push(awaiting)
      awaiting = undefined
    } else {
      cur.words.push(word)
    }
    word = undefined
  }
  const endCommand = (/** @type {boolean} */ piped) => {
    endWord()
    awaiting = undefined
    if (cur.words.length > 0 || cur.redirects.length > 0) {
      commands.push(cur)
      budget.commands += 1
      if (budget.commands > MAX_COMMANDS && !budget.problem) budget.problem = `the command holds more than ${MAX_COMMANDS} commands`
    }
    if (piped) stage += 1
    else {
      pipeline += 1
      stage = 0
    }
    cur = { words: [], redirects: [], pipeline, stage }
  }
  /** Reads a nested list after `$(` or `<(`, returning its script; `pos` moves past its `)`. */
  const nested = () => {
    if (depth + 1 > MAX_DEPTH) {
      // Not read, and not recursed into either: the line is refused as a whole, so skipping to the
      // end is enough, whatever depth the rest would have.
      if (!budget.problem) budget.problem = `the command nests $(...), backticks or sh -c more than ${MAX_DEPTH} levels deep`
      pos = src.length
      return /** @type {Script} */ ({ commands: [], problem: 'skipped' })
    }
    const inner = readList(src, pos, true, depth + 1, budget)
    pos = inner.end
    return inner.script
  }
  const backtick = () => {
    // pos is just past the opening backtick.
    let body = ''
    while (pos < src.length && src[pos] !== '`') {
      if (src[pos] === '\\' && pos + 1 < src.length && '$`\\'.includes(/** @type {string} */ (src[pos + 1]))) {
        body += src[pos + 1]
        pos += 2
      } else {
        body += src[pos]
        pos += 1
      }
    }
    pos += 1
    if (depth + 1 > MAX_DEPTH) {
      if (!budget.problem) budget.problem = `the command nests $(...), backticks or sh -c more than ${MAX_DEPTH} levels deep`
      return /** @type {Script} */ ({ commands: [], problem: 'skipped' })
    }
    return parseAt(body, depth + 1, budget)
  }
  /** Reads what follows a `$` (pos at the `$`) into `w`. */
  const dollar = (/** @type {Word} */ w) => {
    const next = src[pos + 1]
    if (next === "'") {
      pos += 2
      w.text += ansiC()
      return
    }
    if (next === '(' && src[pos + 2] === '(') {
      const start = pos
      pos += 3
      let level = 2
      while (pos < src.length && level > 0) {
        if (src[pos] === '(') level += 1
        else if (src[pos] === ')') level -= 1
        pos += 1
      }
      w.text += src.slice(start, pos)
      w.literal = false
      return
    }
    if (next === '(') {
      const start = pos
      pos += 2
      w.subs.push(nested())
      w.text += src.slice(start, pos)
      w.literal = false
      return
    }
    if (next === '{') {
      const start = pos
      pos += 2
      let level = 1
      while (pos < src.length && level > 0) {
        const c = src[pos]
        if (c === '\\') pos += 2
        else if (c === '$' && src[pos + 1] === '(') {
          pos += 2
          w.subs.push(nested())
        } else if (c === '`') {
          pos += 1
          w.subs.push(backtick())
        } else {
          if (c === '{') level += 1
          else if (c === '}') level -= 1
          pos += 1
        }
      }
      w.text += src.slice(start, pos)
      w.literal = false
      return
    }
    if (next !== undefined && /[A-Za-z_]/.test(next)) {
      const start = pos
      pos += 1
      while (pos < src.length && /[A-Za-z0-9_]/.test(/** @type {string} */ (src[pos]))) pos += 1
      w.text += src.slice(start, pos)
      w.literal = false
      return
    }
    if (next !== undefined && SPECIAL_PARAMS.includes(next)) {
      w.text += src.slice(pos, pos + 2)
      w.literal = false
      pos += 2
      return
    }
    if (next === '"') {
      // $"..." is a double-quoted string (translated by locale).
      pos += 1
      return
    }
    w.text += '$'
    pos += 1
  }
  /** Decodes a $'...' string (pos just past its opening quote), as bash does. */
  const ansiC = () => {
    let out = ''
    while (pos < src.length && src[pos] !== "'") {
      const c = /** @type {string} */ (src[pos])
      if (c !== '\\' || pos + 1 >= src.length) {
        out += c
        pos += 1
        continue
      }
      const e = /** @type {string} */ (src[pos + 1])
      pos += 2
      const simple = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', E: '\x1b', f: '\f', v: '\v', '\\': '\\', "'": "'", '"': '"', '?': '?' }
      if (Object.hasOwn(simple, e)) out += simple[/** @type {keyof typeof simple} */ (e)]
      else if (e === 'x' || e === 'u' || e === 'U') {
        const most = e === 'x' ? 2 : e === 'u' ? 4 : 8
        let hex = ''
        while (hex.length < most && /[0-9A-Fa-f]/.test(src[pos] ?? '')) hex += src[pos++]
        const code = hex === '' ? NaN : parseInt(hex, 16)
        out += Number.isNaN(code) || code > 0x10ffff ? `\\${e}${hex}` : String.fromCodePoint(code)
      } else if (/[0-7]/.test(e)) {
        let oct = e
        while (oct.length < 3 && /[0-7]/.test(src[pos] ?? '')) oct += src[pos++]
        out += String.fromCharCode(parseInt(oct, 8) & 0xff)
      } else if (e === 'c' && pos < src.length) {
        out += String.fromCharCode((/** @type {string} */ (src[pos]).charCodeAt(0)) & 0x1f)
        pos += 1
      } else out += `\\${e}`
    }
    pos += 1
    return out
  }
  /** Reads a double-quoted string (pos just past its opening quote) into `w`. */
  const doubleQuoted = (/** @type {Word} */ w) => {
    while (pos < src.length && src[pos] !== '"') {
      const c = src[pos]
      if (c === '\\' && pos + 1 < src.length) {
        const e = /** @type {string} */ (src[pos + 1])
        if (e === '\n') pos += 2
        else if ('$`"\\'.includes(e)) {
          w.text += e
          pos += 2
        } else {
          w.text += '\\'
          pos += 1
        }
      } else if (c === '$') dollar(w)
      else if (c === '`') {
        const start = pos
        pos += 1
        w.subs.push(backtick())
        w.text += src.slice(start, pos)
        w.literal = false
      } else {
        w.text += c
        pos += 1
      }
    }
    pos += 1
  }
  /** Reads the bodies of the here-documents opened on the line that just ended (pos past its newline). */
  const readHeredocs = () => {
    for (const r of heredocs.splice(0)) {
      const raw = src.slice(r.target?.start ?? 0, r.target?.end ?? 0)
      const delimiter = r.target?.text ?? ''
      const quoted = /['"\\]/.test(raw)
      let body = ''
      while (pos < src.length) {
        let eol = src.indexOf('\n', pos)
        if (eol < 0) eol = src.length
        const line = src.slice(pos, eol)
        pos = Math.min(eol + 1, src.length)
        if ((r.op === '<<-' ? line.replace(/^\t+/, '') : line) === delimiter) break
        body += `${line}\n`
      }
      r.heredoc = { body, quoted, subs: quoted ? [] : expansionsIn(body, depth, budget) }
    }
  }

  while (pos < src.length) {
    const c = /** @type {string} */ (src[pos])
    const next = src[pos + 1]
    if (c === ')' && parens === 0 && closer) {
      endCommand(false)
      return { script: { commands, problem: undefined }, end: pos + 1 }
    }
    if (c === ' ' || c === '\t') {
      endWord()
      pos += 1
    } else if (c === '\n') {
      endCommand(false)
      pos += 1
      readHeredocs()
    } else if (c === ';') {
      endCommand(false)
      pos += next === ';' || next === '&' ? 2 : 1
    } else if (c === '&' && next === '&') {
      endCommand(false)
      pos += 2
    } else if (c === '&' && next === '>') {
      endWord()
      const op = src[pos + 2] === '>' ? '&>>' : '&>'
      pos += op.length
      awaiting = { op, fd: '', target: undefined, heredoc: undefined }
      cur.redirects.push(awaiting)
    } else if (c === '&') {
      endCommand(false)
      pos += 1
    } else if (c === '|' && next === '|') {
      endCommand(false)
      pos += 2
    } else if (c === '|') {
      endCommand(true)
      pos += next === '&' ? 2 : 1
    } else if ((c === '<' || c === '>') && next === '(' && !word) {
      // Process substitution: a word that names a pipe to the commands inside.
      const w = startWord()
      const start = pos
      pos += 2
      w.subs.push(nested())
      w.text += src.slice(start, pos)
      w.literal = false
    } else if (c === '<' || c === '>') {
      let fd = ''
      if (word && /^\d+$/.test(src.slice(word.start, pos)) && !awaiting) {
        fd = word.text
        word = undefined
      } else endWord()
      let op = c
      if (c === '>' && (next === '>' || next === '|' || next === '&')) op += next
      else if (c === '<' && next === '<') op = src[pos + 2] === '<' ? '<<<' : src[pos + 2] === '-' ? '<<-' : '<<'
      else if (c === '<' && (next === '>' || next === '&')) op += next
      pos += op.length
      awaiting = { op, fd, target: undefined, heredoc: undefined }
      cur.redirects.push(awaiting)
    } else if (c === '(' && !word) {
      if (next === '(') {
        // An arithmetic command, (( ... )): nothing in it runs.
        let level = 0
        while (pos < src.length) {
          if (src[pos] === '(') level += 1
          else if (src[pos] === ')') level -= 1
          pos += 1
          if (level === 0) break
        }
      } else {
        endCommand(false)
        parens += 1
        pos += 1
      }
    } else if (c === '(') {
      // `name() { ...; }`: a function definition; what follows is its body.
      endCommand(false)
      pos += next === ')' ? 2 : 1
    } else if (c === ')') {
      endCommand(false)
      if (parens > 0) parens -= 1
      pos += 1
    } else if (c === '#' && !word) {
      while (pos < src.length && src[pos] !== '\n') pos += 1
    } else if (c === '\\') {
      if (next === '\n') pos += 2
      else {
        startWord().text += next ?? ''
        pos += 2
      }
    } else if (c === "'") {
      const w = startWord()
      const close = src.indexOf("'", pos + 1)
      const end = close < 0 ? src.length : close
      w.text += src.slice(pos + 1, end)
      pos = end + 1
    } else if (c === '"') {
      const w = startWord()
      pos += 1
      doubleQuoted(w)
    } else if (c === '$') {
      dollar(startWord())
    } else if (c === '`') {
      const w = startWord()
      const start = pos
      pos += 1
      w.subs.push(backtick())
      w.text += src.slice(start, pos)
      w.literal = false
    } else {
      const w = startWord()
      if (c === '*' || c === '?' || c === '[') w.glob = true
      w.text += c
      pos += 1
    }
  }
  pos = src.length
  endCommand(false)
  return { script: { commands, problem: undefined }, end: pos }
}

/** The substitutions of an unquoted here-document's body, which the shell runs. */
function expansionsIn(/** @type {string} */ body, /** @type {number} */ depth, /** @type {Budget} */ budget) {
  /** @type {Script[]} */
  const subs = []
  const quotedBody = body.replace(/["]/g, ' ')
  const read = readList(`"${quotedBody}"`, 0, false, depth, budget)
  for (const command of read.script.commands) for (const w of command.words) subs.push(...w.subs)
  return subs
}

// ------------------------------------------------------------------------------------------------
// What a command runs
// ------------------------------------------------------------------------------------------------

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

module.exports = { parseShell, scriptsOf, commandsOf, programOf, codeOf, shellArgs, baseName, patchPaths, SHELLS, MAX_CHARS, MAX_DEPTH }
