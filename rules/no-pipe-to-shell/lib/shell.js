// @ts-check
// A reader of shell command lines for hookd's starter rules: it splits a command the way a POSIX shell
// does (quotes, escapes, pipes, `;`, `&&`, redirections, here-documents, `$(...)`, backticks,
// `<(...)`) into simple commands and their words; commands.js says what each runs. Every starter rule
// carries the same copy of lib/ (test/rules/rule-files.test.ts holds them equal).
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

module.exports = { parseShell, MAX_CHARS, MAX_DEPTH, MAX_COMMANDS }
