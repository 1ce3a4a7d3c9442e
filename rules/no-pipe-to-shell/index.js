// @ts-check
// no-pipe-to-shell, a starter rule of hookd: refuses shell commands that run what they download
// before anyone has read it: `curl ... | sh`, `wget -O- ... | sudo bash`, `bash <(curl ...)`,
// `sh -c "$(curl ...)"`, `curl ... | python3`, `curl -o x.sh ... && sh x.sh`. The downloaders and
// interpreters it knows are in hook.json; its cases are in tests/ (run them: hookd test).
//
// What it sees: every command of the line (pipes, groups, substitutions, `sh -c '...'`, `eval`,
// here-documents fed to a shell), which program each runs under its wrappers (sudo, env, xargs, ...)
// and where that program takes its code from (`-c`, a script file, its input). A shell or interpreter
// that reads its code from a pipe after a download anywhere earlier in the line is refused, and so is
// one that runs a file the line downloaded (`-o`, `-O`, `> f`, `tee f`). What it cannot see: a
// download made by a program it does not know (a script, `pip`, `npx`, a Python one-liner), code
// written to a file in one tool call and run in another, a downloader named only when the command
// runs (`$DL url | sh`), or an alias.
const { scriptsOf, programOf, shellArgs, SHELLS } = require('./lib/commands.js')

/** @typedef {{ downloaders: string[], interpreters: string[] }} Config */
/** @typedef {import('./lib/shell.js').Command} Command */
/** @typedef {import('./lib/shell.js').Word} Word */
/** @typedef {import('./lib/shell.js').Script} Script */

/** @type {import('hookd-sandbox/hook').Hook<Config>} */
const hook = {
  beforeToolExecute(ctx, call) {
    if (call.name !== 'shell') return
    const read = scriptsOf(String(call.arguments.command ?? ''))
    if (read.problem) return { allow: false, reason: `this rule could not read the whole command (${read.problem}), so it is refused; run it in smaller steps` }
    const known = { downloaders: new Set(ctx.config.downloaders ?? []), interpreters: new Set(ctx.config.interpreters ?? []) }
    /** @type {Map<string, string>} a downloaded file's name -> the downloader that wrote it */
    const files = new Map()
    for (const { script } of read.scripts) for (const c of script.commands) downloadedFiles(known, script, c, files)
    for (const { script } of read.scripts) {
      const found = check(known, script, files)
      if (found) {
        return {
          allow: false,
          reason: `this runs what '${found.downloader}' downloads as code (${found.how}) before anyone has read it: download it to a file, show it to the user, and run it only once they agree`,
        }
      }
    }
  },
}

module.exports = hook

/**
 * @typedef {{ downloaders: Set<string>, interpreters: Set<string> }} Known
 * @typedef {{ code: Word[], script: Word | undefined, stdin: boolean }} CodeSource
 */

/**
 * The first place in `script` where downloaded text is run as code, if there is one. A command that
 * reads its code from a pipe after a download anywhere earlier in the script is refused, not only in
 * the same pipeline: `(curl x) | sh`, `{ curl x; } | sh` and `curl x > f; cat f | sh` are the same
 * thing, and this reader does not follow groups.
 */
function check(/** @type {Known} */ known, /** @type {Script} */ script, /** @type {Map<string, string>} */ files) {
  /** @type {string | undefined} the first downloader so far */
  let upstream
  for (const c of script.commands) {
    const p = programOf(c)
    const source = codeSource(known, p.name, p.args)
    const xargs = p.wrappers.includes('xargs') && source !== undefined
    if (p.word && !p.word.literal) {
      const inside = downloaderIn(known, p.word.subs)
      if (inside) return { downloader: inside, how: 'as the command itself' }
      // A command whose name is built when it runs may be a shell: downloaded input to it is refused.
      if (upstream && c.stage > 0) return { downloader: upstream, how: `piped into '${p.word.text}', a command named only when it runs` }
    }
    if (source) {
      const name = /** @type {string} */ (p.name)
      if (upstream && c.stage > 0 && (source.stdin || xargs)) return { downloader: upstream, how: `piped into '${name}'` }
      for (const w of [...source.code, ...(source.script ? [source.script] : [])]) {
        const inside = downloaderIn(known, w.subs) ?? files.get(lastPart(w.text))
        if (inside) return { downloader: inside, how: `as the code '${name}' runs` }
      }
      if (source.stdin) {
        for (const r of c.redirects) {
          const subs = [...(r.target?.subs ?? []), ...(r.heredoc?.subs ?? [])]
          const feeds = r.op === '<' || r.op === '<<<' || r.op === '<<' || r.op === '<<-' || r.op === '<>'
          if (!feeds) continue
          const inside = downloaderIn(known, subs) ?? (r.op === '<' && r.target ? files.get(lastPart(r.target.text)) : undefined)
          if (inside) return { downloader: inside, how: `fed to '${name}' as its input` }
        }
      }
    }
    // ./install.sh after `curl -o install.sh`.
    if (p.word?.literal && p.word.text.includes('/')) {
      const wrote = files.get(lastPart(p.word.text))
      if (wrote) return { downloader: wrote, how: `run as the program '${p.word.text}'` }
    }
    upstream ??= downloaderOf(known, c, p.name)
  }
  return undefined
}

/**
 * The downloader a command runs, or holds in a substitution of its words (`cat <(curl x)`).
 * @returns {string | undefined}
 */
function downloaderOf(/** @type {Known} */ known, /** @type {Command} */ c, /** @type {string | undefined} */ name) {
  if (name !== undefined && known.downloaders.has(name)) return name
  return downloaderIn(known, [...c.words.flatMap((w) => w.subs), ...c.redirects.flatMap((r) => r.target?.subs ?? [])])
}

/**
 * A downloader run anywhere inside these scripts (their substitutions included).
 * @returns {string | undefined}
 */
function downloaderIn(/** @type {Known} */ known, /** @type {Script[]} */ scripts) {
  for (const s of scripts) {
    for (const c of s.commands) {
      const found = downloaderOf(known, c, programOf(c).name)
      if (found) return found
    }
  }
  return undefined
}

/**
 * The files a downloader writes: `curl -o F`, `wget -O F`, the URL's own name (`curl -O`, plain
 * `wget`), `curl x > F`, and a `tee F` later in its pipeline.
 */
function downloadedFiles(/** @type {Known} */ known, /** @type {Script} */ script, /** @type {Command} */ c, /** @type {Map<string, string>} */ files) {
  const p = programOf(c)
  if (p.name === undefined || !known.downloaders.has(p.name)) return
  const name = p.name
  for (const r of c.redirects) {
    if (r.target && (r.op === '>' || r.op === '>>' || r.op === '>|' || r.op === '&>' || r.op === '&>>')) files.set(lastPart(r.target.text), name)
  }
  for (const later of script.commands) {
    if (later.pipeline !== c.pipeline || later.stage <= c.stage) continue
    const q = programOf(later)
    if (q.name === 'tee') for (const a of q.args) if (!a.text.startsWith('-')) files.set(lastPart(a.text), name)
    for (const r of later.redirects) {
      if (r.target && (r.op === '>' || r.op === '>>' || r.op === '>|' || r.op === '&>' || r.op === '&>>')) files.set(lastPart(r.target.text), name)
    }
  }
  const args = p.args.map((a) => a.text)
  args.forEach((arg, i) => {
    const next = args[i + 1]
    if (/^-[A-Za-z]*[oO]$/.test(arg) && next !== undefined && next !== '-') files.set(lastPart(next), name)
    const long = /^--(?:output|output-document)=(.+)$/.exec(arg)
    if (long?.[1] && long[1] !== '-') files.set(lastPart(long[1]), name)
    if ((arg === '--output' || arg === '--output-document') && next !== undefined && next !== '-') files.set(lastPart(next), name)
    const url = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*\/([^?#]*)/i.exec(arg)
    const file = url?.[1] ? lastPart(url[1]) : ''
    if (file !== '') files.set(file, name)
  })
}

/** Interpreters' options that take their code as the next word, and those that take another value. */
const LANGUAGES = {
  python: { code: 'c', module: 'm', values: 'WXQ', long: ['--check-hash-based-pycs'] },
  node: { code: 'ep', module: '', values: 'rC', long: ['--require', '--import', '--loader', '--experimental-loader', '--conditions', '--input-type'] },
  perl: { code: 'eE', module: '', values: '', long: [] },
  ruby: { code: 'e', module: '', values: 'rIC', long: [] },
  php: { code: 'r', module: '', values: 'cdz', long: [] },
  lua: { code: 'e', module: '', values: 'l', long: [] },
  other: { code: '', module: '', values: '', long: [] },
}

/** Which language an interpreter's name is, for its options: python3.12 -> python. */
function language(/** @type {string} */ name) {
  const bare = name.replace(/[\d.]+$/, '')
  if (bare === 'python' || bare === 'pypy') return LANGUAGES.python
  if (bare === 'node' || bare === 'nodejs' || bare === 'deno' || bare === 'bun') return LANGUAGES.node
  if (bare === 'perl') return LANGUAGES.perl
  if (bare === 'ruby') return LANGUAGES.ruby
  if (bare === 'php') return LANGUAGES.php
  if (bare === 'lua' || bare === 'luajit') return LANGUAGES.lua
  return LANGUAGES.other
}

/**
 * Where a command takes code from when it is a shell or an interpreter: the words it runs as code
 * (`-c CODE`, eval's words), its script file, and whether it reads code from its input. Undefined
 * when it runs no code of its own.
 * @returns {CodeSource | undefined}
 */
function codeSource(/** @type {Known} */ known, /** @type {string | undefined} */ name, /** @type {Word[]} */ args) {
  if (name === undefined) return undefined
  if (name === 'eval') return { code: args, script: undefined, stdin: false }
  if (name === 'source' || name === '.') return { code: [], script: args[0], stdin: isStdin(args[0]) }
  if (name === 'iex' || name === 'Invoke-Expression') return { code: args, script: undefined, stdin: true }
  if (SHELLS.has(name) || (name === 'busybox' && SHELLS.has(args[0]?.text ?? ''))) {
    const s = shellArgs(name === 'busybox' ? args.slice(1) : args)
    return { code: s.code ? [s.code] : [], script: s.script, stdin: s.stdin || isStdin(s.script) }
  }
  const bare = name.replace(/[\d.]+$/, '')
  if (!known.interpreters.has(name) && !known.interpreters.has(bare)) return undefined
  if (bare === 'pwsh' || bare === 'powershell') {
    const at = args.findIndex((a) => /^-(c|command|encodedcommand|e|ec)$/i.test(a.text))
    const file = args.findIndex((a) => /^-(f|file)$/i.test(a.text))
    if (at >= 0) return { code: args.slice(at + 1, at + 2), script: undefined, stdin: args[at + 1]?.text === '-' }
    if (file >= 0) return { code: [], script: args[file + 1], stdin: isStdin(args[file + 1]) }
    return { code: [], script: undefined, stdin: args.every((a) => a.text.startsWith('-')) }
  }
  const lang = language(name)
  for (let i = 0; i < args.length; i++) {
    const t = /** @type {Word} */ (args[i]).text
    if (t === '--') return { code: [], script: args[i + 1], stdin: args[i + 1] === undefined || isStdin(args[i + 1]) }
    if (t === '-') return { code: [], script: undefined, stdin: true }
    if (t.startsWith('--')) {
      if (/^--(eval|print)$/.test(t)) return { code: args.slice(i + 1, i + 2), script: undefined, stdin: false }
      if (/^--(eval|print)=/.test(t)) return { code: [/** @type {Word} */ (args[i])], script: undefined, stdin: false }
      if (lang.long.includes(t)) i += 1
      continue
    }
    if (t.startsWith('-') && t.length > 1) {
      const letters = t.slice(1)
      const codeAt = [...letters].findIndex((l) => lang.code.includes(l))
      if (codeAt >= 0) return { code: codeAt === letters.length - 1 ? args.slice(i + 1, i + 2) : [/** @type {Word} */ (args[i])], script: undefined, stdin: false }
      if (lang.module !== '' && letters.includes(lang.module)) return { code: [], script: undefined, stdin: false }
      const valueAt = [...letters].findIndex((l) => lang.values.includes(l))
      if (valueAt >= 0 && valueAt === letters.length - 1) i += 1
      continue
    }
    return { code: [], script: args[i], stdin: isStdin(args[i]) }
  }
  return { code: [], script: undefined, stdin: true }
}

function isStdin(/** @type {Word | undefined} */ w) {
  return w !== undefined && (w.text === '-' || w.text === '/dev/stdin' || w.text === '/dev/fd/0' || w.text === '/proc/self/fd/0')
}

function lastPart(/** @type {string} */ path) {
  const trimmed = path.replace(/\/+$/, '')
  const slash = trimmed.lastIndexOf('/')
  return slash < 0 ? trimmed : trimmed.slice(slash + 1)
}
