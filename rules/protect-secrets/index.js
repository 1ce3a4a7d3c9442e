// @ts-check
// protect-secrets, a starter rule of hookd: refuses reading and writing files that hold secrets (.env
// files, private keys, credential files) through the file tools and through the shell commands that
// name them. The patterns are in hook.json; its cases are in tests/ (run them: hookd test).
//
// What it sees: the paths the file tools are given, the files a patch names, and every word of a
// shell command (in pipes, substitutions, `sh -c '...'` and redirections), with quotes and escapes
// taken out as the shell takes them out. What it cannot see: a name the shell builds when the
// command runs (`cat $F`, `cat "$(ls -a | grep en)"`), a program that opens the file itself (a script,
// `make`), or a search of a whole folder that happens to include the file.
const { commandsOf, patchPaths } = require('./lib/commands.js')

/** @typedef {{ protected: string[], allowed: string[] }} Config */

/** The canonical tools that read or write one file, by `path`. */
const FILE_TOOLS = new Set(['read_file', 'write_file', 'edit_file', 'search_files'])
/** The canonical tools; any other tool (an MCP server's, a tool no agent table maps) is looked at by its path-like arguments. */
const CANONICAL = new Set(['shell', 'read_file', 'write_file', 'edit_file', 'web_fetch', 'web_search', 'find_files', 'search_files', 'list_files', 'apply_patch'])
const PATH_FIELDS = ['path', 'file_path', 'filePath', 'filename', 'file', 'paths']
/** Characters that end a path inside a word: `--file=.env`, `open('.env')`, `a:.env`. */
const PIECES = /[\s'"`()=:,;<>|&{}]+/

/** @type {import('hookd-sandbox/hook').Hook<Config>} */
const hook = {
  beforeToolExecute(ctx, call) {
    const rules = compile(ctx.config)
    const args = call.arguments
    if (call.name === 'shell') return checkShell(rules, String(args.command ?? ''))
    /** @type {string[]} */
    let paths = []
    if (FILE_TOOLS.has(call.name)) paths = [String(args.path ?? '')]
    else if (call.name === 'apply_patch') paths = patchPaths(String(args.command ?? ''))
    else if (!CANONICAL.has(call.name)) paths = PATH_FIELDS.flatMap((field) => strings(args[field]))
    for (const path of paths) {
      const hit = protectedBy(rules, path)
      if (hit) return refuse(path, hit)
    }
  },
}

module.exports = hook

/**
 * @typedef {{ test: (path: string) => string | undefined, samples: string[], allowed: (path: string) => boolean }} Rules
 */

/** The config's patterns as matchers. */
function compile(/** @type {Config} */ config) {
  const protectedGlobs = (config.protected ?? []).map((p) => ({ pattern: p, match: globMatcher(p) }))
  const allowedGlobs = (config.allowed ?? []).map(globMatcher)
  /** @type {Rules} */
  const rules = {
    allowed: (path) => allowedGlobs.some((m) => m(path)),
    test: (path) => protectedGlobs.find((g) => g.match(path))?.pattern,
    // Names that each pattern stands for (`*.pem` -> `x.pem`), to ask whether a glob in a command
    // (`cat *.pem`, `cat .e*`) would reach one.
    samples: protectedGlobs.map((g) => lastPart(g.pattern).replace(/\*+/g, 'x').replace(/\?/g, 'x')),
  }
  return rules
}

/** The protected pattern `path` matches, unless an allowed one matches it too. */
function protectedBy(/** @type {Rules} */ rules, /** @type {string} */ path) {
  const clean = path.replace(/\\/g, '/').replace(/\/+$/, '')
  if (clean === '' || rules.allowed(clean)) return undefined
  return rules.test(clean)
}

function checkShell(/** @type {Rules} */ rules, /** @type {string} */ command) {
  const read = commandsOf(command)
  if (read.problem) return { allow: false, reason: `this rule could not read the whole command (${read.problem}), so it is refused; run it in smaller steps` }
  for (const { command: c } of read.commands) {
    const words = [...c.words, ...c.redirects.flatMap((r) => (r.target && !r.heredoc ? [r.target] : []))]
    for (const word of words) {
      // `.e{n,}v` is `.env .ev` to the shell: each spelling is a name the command may open.
      const spellings = braces(word.text)
      if (!spellings) return { allow: false, reason: `this rule could not read the whole command ('${word.text.slice(0, 80)}' has braces that stand for more than 64 names), so it is refused; write the names out` }
      for (const spelling of spellings) {
        for (const piece of [...spelling.split(PIECES), spelling]) {
          if (piece === '') continue
          const hit = protectedBy(rules, piece) ?? (hasGlob(piece) ? globReaches(rules, piece) : undefined)
          if (hit) return refuse(piece, hit, true)
        }
      }
    }
  }
}

/** The pattern whose sample name the glob `piece` (a word of a command, `*.pem`) would match. */
function globReaches(/** @type {Rules} */ rules, /** @type {string} */ piece) {
  const last = lastPart(piece)
  // A bare `*` (or `*.*`) names no file in particular: `ls *` is not a read of the keys it lists.
  if (last.replace(/[*?[\]]/g, '').length < 2 && !last.startsWith('.')) return undefined
  const at = rules.samples.findIndex((sample) => shellGlob(last, sample) && !rules.allowed(sample))
  return at < 0 ? undefined : rules.test(/** @type {string} */ (rules.samples[at])) ?? undefined
}

function refuse(/** @type {string} */ path, /** @type {string} */ pattern, shell = false) {
  const what = shell ? `the command names '${path}'` : `'${path}'`
  return {
    allow: false,
    reason: `${what}, which may hold secrets (it matches '${pattern}'): reading or writing it is refused. Ask the user for what you need from it instead`,
  }
}

/**
 * A glob as a test of a path: `*` and `?` within one folder name, `**` across folders. A pattern
 * without `/` matches a file of that name in any folder; one with `/` matches the path's end
 * (`.aws/credentials` matches `/home/me/.aws/credentials`). Case does not matter.
 */
function globMatcher(/** @type {string} */ pattern) {
  const source = pattern
    .split(/(\*\*\/?|\*|\?)/)
    .map((part) => (part === '**/' ? '(?:.*/)?' : part === '**' ? '.*' : part === '*' ? '[^/]*' : part === '?' ? '[^/]' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('')
  const re = new RegExp(`(?:^|/)${source}$`, 'i')
  return (/** @type {string} */ path) => re.test(path)
}

/**
 * Whether the shell glob `glob` (`*`, `?`, `[...]`) matches `name`, as bash matches a file name.
 * Iterative, with one step back to the last `*` (never exponential, whatever the glob).
 */
function shellGlob(/** @type {string} */ glob, /** @type {string} */ name) {
  const g = glob.toLowerCase()
  const n = name.toLowerCase()
  let gi = 0
  let ni = 0
  let star = -1
  let mark = 0
  while (ni < n.length) {
    const c = g[gi]
    if (c === '*') {
      star = gi++
      mark = ni
      continue
    }
    if (c === '[') {
      const close = g.indexOf(']', gi + 2)
      if (close > 0) {
        const negate = g[gi + 1] === '!' || g[gi + 1] === '^'
        const set = g.slice(gi + (negate ? 2 : 1), close)
        if (inSet(set, /** @type {string} */ (n[ni])) !== negate) {
          gi = close + 1
          ni += 1
          continue
        }
      } else if (n[ni] === '[') {
        gi += 1
        ni += 1
        continue
      }
    } else if (c !== undefined && (c === '?' || c === n[ni])) {
      gi += 1
      ni += 1
      continue
    }
    if (star < 0) return false
    gi = star + 1
    ni = ++mark
  }
  while (g[gi] === '*') gi += 1
  return gi === g.length
}

/** Whether `ch` is in a bracket set's text (`a-z0-9_`). */
function inSet(/** @type {string} */ set, /** @type {string} */ ch) {
  for (let i = 0; i < set.length; i++) {
    if (set[i + 1] === '-' && i + 2 < set.length) {
      if (ch >= /** @type {string} */ (set[i]) && ch <= /** @type {string} */ (set[i + 2])) return true
      i += 2
    } else if (set[i] === ch) return true
  }
  return false
}

/**
 * The spellings a word's braces stand for (`a{b,c}d` -> abd, acd), the word itself when it has none;
 * undefined when they stand for more than 64 (or nest more than 8 deep), which this rule does not read.
 * @returns {string[] | undefined}
 */
function braces(/** @type {string} */ text) {
  /** @type {string[]} */
  let out = [text]
  for (let round = 0; round < 8; round++) {
    /** @type {string[]} */
    const next = []
    let changed = false
    for (const t of out) {
      const m = /\{([^{}]*,[^{}]*)\}/.exec(t)
      if (!m) {
        next.push(t)
        continue
      }
      changed = true
      for (const part of (m[1] ?? '').split(',')) next.push(t.slice(0, m.index) + part + t.slice(m.index + m[0].length))
    }
    if (next.length > 64) return undefined
    out = next
    if (!changed) return out
  }
  return /\{[^{}]*,[^{}]*\}/.test(out.join('')) ? undefined : out
}

function lastPart(/** @type {string} */ path) {
  const slash = path.lastIndexOf('/')
  return slash < 0 ? path : path.slice(slash + 1)
}

function hasGlob(/** @type {string} */ text) {
  return /[*?[]/.test(text)
}

/** @returns {string[]} */
function strings(/** @type {unknown} */ value) {
  if (typeof value === 'string') return [value]
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'string')
  return []
}
