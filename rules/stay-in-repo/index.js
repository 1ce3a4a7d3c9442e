// @ts-check
// stay-in-repo, a starter rule of hookd: refuses writes and deletes outside the run's workdir (the
// project), through the file tools, patches and shell commands. Folders outside it that may be
// written anyway are in hook.json (`alsoWritable`); its cases are in tests/ (run them: hookd test).
//
// What it sees: the paths the file tools and patches are given (hookd hands a path outside the
// workdir to hooks as an absolute path), and in a shell command the files that rm, rmdir, unlink,
// shred, mv, cp, ln, install, touch, mkdir, truncate, tee, chmod, chown, chgrp, dd of=, sed -i,
// perl -i and find -delete/-exec name, and every redirection (`>`, `>>`, `&>`), each resolved from
// the folder the command is in at that point, following `cd` and `pushd` through the line. A path
// the shell builds when it runs (`$DIR/x`, `$(mktemp)`, `~`), a `cd` it cannot follow (`cd -`, a
// `cd` with CDPATH set) and files a writer gets from xargs are refused, since they could lead anywhere.
//
// What it cannot see: a symbolic link inside the project that points out of it, what any other
// program writes (make, npm install -g, git -C, a script, an editor), a folder changed by an earlier
// tool call (Claude Code keeps its shell's folder between calls; hookd sees one call at a time), or
// the paths inside an archive it unpacks. A shell command is text to this rule, not a sandbox: for
// a wall, run the agent where it can write only the project.
const { parseShell } = require('./lib/shell.js')
const { programOf, codeOf, patchPaths } = require('./lib/commands.js')

/** @typedef {{ alsoWritable: string[] }} Config */
/** @typedef {import('./lib/shell.js').Command} Command */
/** @typedef {import('./lib/shell.js').Script} Script */
/** @typedef {import('./lib/shell.js').Word} Word */
/** @typedef {{ allow: false, reason: string }} Refusal */
/** @typedef {{ root: string, writable: string[] }} Place */
/** @typedef {{ word: Word, delete: boolean }} Target */
/** @typedef {{ dir: string | undefined, why: string, cdpath: boolean }} At where the shell is: its folder, or undefined (and why) */

/** Files a write to is no write to a file: the shell's own streams. */
const DEVICES = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

/** @type {import('hookd-sandbox/hook').Hook<Config>} */
const hook = {
  beforeToolExecute(ctx, call) {
    const root = resolvePath('/', ctx.workdir)
    /** @type {Place} */
    const place = { root, writable: (ctx.config.alsoWritable ?? []).map((p) => resolvePath('/', p)) }
    const args = call.arguments
    if (call.name === 'write_file' || call.name === 'edit_file') return checkPath(place, root, String(args.path ?? ''), false)
    if (call.name === 'apply_patch') {
      const patch = String(args.command ?? '')
      for (const path of patchPaths(patch)) {
        const refused = checkPath(place, root, path, patch.includes(`*** Delete File: ${path}`))
        if (refused) return refused
      }
      return
    }
    if (call.name !== 'shell') return
    const start = typeof args.cwd === 'string' ? resolvePath(root, args.cwd) : root
    const command = String(args.command ?? '')
    const script = parseShell(command)
    if (script.problem) return { allow: false, reason: `this rule could not read the whole command (${script.problem}), so it is refused; run it in smaller steps` }
    // With CDPATH set, `cd x` may go to a folder of CDPATH's instead of ./x.
    const cdpath = /(^|[^A-Za-z0-9_])CDPATH=/.test(command)
    return walk(place, script, { dir: start, why: '', cdpath }, { depth: 0, read: command.length })
  },
}

module.exports = hook

/**
 * Checks a script's commands in order, following `cd`. `at.dir` is undefined after a `cd` the rule
 * cannot follow (`at.why` says which). Substitutions and `sh -c` code are checked from the folder
 * they start in.
 * @returns {Refusal | undefined}
 */
function walk(/** @type {Place} */ place, /** @type {Script} */ script, /** @type {At} */ at, /** @type {{ depth: number, read: number }} */ budget) {
  const unreadable = (/** @type {string} */ why) => ({ allow: /** @type {const} */ (false), reason: `this rule could not read the whole command (${why}), so it is refused; run it in smaller steps` })
  if (budget.depth > 8) return unreadable('it nests sh -c too deeply')
  for (const c of script.commands) {
    for (const w of [...c.words, ...c.redirects.flatMap((r) => (r.target ? [r.target] : []))]) {
      for (const sub of w.subs) {
        const refused = walk(place, sub, { ...at }, { depth: budget.depth + 1, read: budget.read })
        if (refused) return refused
      }
    }
    for (const code of codeOf(c)) {
      budget.read += code.length
      if (budget.read > 1024 * 1024) return unreadable('it holds more than 1 MiB of shell code, counted at every level')
      const inner = parseShell(code)
      if (inner.problem) return unreadable(inner.problem)
      const refused = walk(place, inner, { ...at }, { depth: budget.depth + 1, read: budget.read })
      if (refused) return refused
    }
    const p = programOf(c)
    if (p.name === 'cd' || p.name === 'pushd') {
      follow(at, p.args)
      continue
    }
    if (p.wrappers.includes('xargs') && writes(p.name, p.args)) {
      return { allow: false, reason: `this rule cannot tell which files xargs hands to '${p.name}' (they come from its input), so the command is refused; name the files in the command` }
    }
    if (p.name === 'popd') {
      at.dir = undefined
      at.why = "after 'popd'"
      continue
    }
    for (const target of targets(c, p.name, p.args)) {
      const refused = checkWord(place, at, target)
      if (refused) return refused
    }
  }
  return undefined
}

/** Moves `at` where `cd ARGS` goes, or to unknown. */
function follow(/** @type {At} */ at, /** @type {Word[]} */ args) {
  const operands = args.filter((a) => !/^-[LPe@]*$/.test(a.text) || a.text === '-')
  const to = operands[0]
  if (at.cdpath && to !== undefined && !/^(\/|\.\.?(\/|$))/.test(to.text)) {
    at.dir = undefined
    at.why = `after 'cd ${to.text}' with CDPATH set`
  } else if (to === undefined || (to.literal && to.text.startsWith('~'))) {
    at.dir = undefined
    at.why = "after 'cd' to the home folder"
  } else if (!to.literal || to.text === '-') {
    at.dir = undefined
    at.why = `after 'cd ${to.text}', which this rule cannot follow`
  } else if (to.text.startsWith('/')) {
    at.dir = resolvePath('/', to.text)
  } else if (at.dir !== undefined) {
    at.dir = resolvePath(at.dir, to.text)
  }
}

/** The commands whose file operands this rule checks. */
const WRITERS = new Set(['rm', 'rmdir', 'unlink', 'shred', 'mv', 'cp', 'install', 'ln', 'rsync', 'touch', 'mkdir', 'truncate', 'tee', 'chmod', 'chown', 'chgrp', 'sed', 'perl', 'dd', 'find'])

/** Whether a command of WRITERS writes files: sed and perl only in place (-i), find only with -delete or -exec. */
function writes(/** @type {string | undefined} */ name, /** @type {Word[]} */ args) {
  if (name === undefined || !WRITERS.has(name)) return false
  if (name === 'sed' || name === 'perl') return args.some((a) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith('--in-place'))
  if (name === 'find') return args.some((a) => ['-delete', '-exec', '-execdir', '-ok', '-okdir'].includes(a.text))
  return true
}

/** Options that take a value as the next word, by program (so the value is not read as a file). */
const VALUES = /** @type {Record<string, string[]>} */ ({
  touch: ['-d', '-t', '-r', '--date', '--reference'],
  mkdir: ['-m', '--mode', '--context'],
  truncate: ['-s', '-r', '--size', '--reference'],
  cp: ['-S', '--suffix', '--backup'],
  mv: ['-S', '--suffix'],
  install: ['-m', '-o', '-g', '-S', '--mode', '--owner', '--group', '--suffix'],
  ln: ['-S', '--suffix'],
  shred: ['-n', '-s', '--iterations', '--size', '--random-source'],
  sed: ['-e', '-f', '-l', '--expression', '--file', '--line-length'],
  perl: ['-e', '-E', '-I', '-M'],
  chmod: ['--reference'],
  chown: ['--reference', '--from'],
  chgrp: ['--reference'],
  tee: [],
})

/** The files a command writes or deletes. */
function targets(/** @type {Command} */ c, /** @type {string | undefined} */ name, /** @type {Word[]} */ args) {
  /** @type {Target[]} */
  const out = []
  for (const r of c.redirects) {
    if (!r.target || r.heredoc || r.op === '<' || r.op === '<<<' || r.op === '<&') continue
    if (r.op === '>&' && /^(\d+|-)$/.test(r.target.text)) continue
    out.push({ word: r.target, delete: false })
  }
  if (name === undefined) return out
  const { operands, options } = split(args, VALUES[name] ?? [])
  /** The value of -t DIR / --target-directory=DIR. */
  const targetDir = options.find((o) => o.option === '-t' || o.option === '--target-directory')?.value
  switch (name) {
    case 'rm':
    case 'rmdir':
    case 'unlink':
    case 'shred':
      for (const w of operands) out.push({ word: w, delete: true })
      break
    case 'mv':
      if (targetDir) out.push({ word: targetDir, delete: false })
      operands.forEach((w, i) => out.push({ word: w, delete: targetDir !== undefined || i < operands.length - 1 }))
      break
    case 'cp':
    case 'install':
    case 'ln':
    case 'rsync':
      if (targetDir) out.push({ word: targetDir, delete: false })
      else if (operands.length >= 2) out.push({ word: /** @type {Word} */ (operands[operands.length - 1]), delete: false })
      else if (name === 'ln' && operands.length === 1) out.push({ word: { ...(/** @type {Word} */ (operands[0])), text: '.', literal: true, subs: [] }, delete: false })
      break
    case 'touch':
    case 'mkdir':
    case 'truncate':
    case 'tee':
      for (const w of operands) out.push({ word: w, delete: false })
      break
    case 'chmod':
    case 'chown':
    case 'chgrp':
      for (const w of options.some((o) => o.option === '--reference') ? operands : operands.slice(1)) out.push({ word: w, delete: false })
      break
    case 'sed':
    case 'perl': {
      const inPlace = args.some((a) => /^-[a-zA-Z]*i/.test(a.text) || a.text.startsWith('--in-place'))
      if (!inPlace) break
      const scripted = options.some((o) => o.option === '-e' || o.option === '-E' || o.option === '-f' || o.option === '--expression' || o.option === '--file')
      for (const w of scripted ? operands : operands.slice(1)) out.push({ word: w, delete: false })
      break
    }
    case 'dd':
      for (const w of args) if (w.text.startsWith('of=')) out.push({ word: { ...w, text: w.text.slice(3) }, delete: false })
      break
    case 'find': {
      if (!args.some((a) => ['-delete', '-exec', '-execdir', '-ok', '-okdir'].includes(a.text))) break
      const first = args.findIndex((a) => a.text.startsWith('-') || a.text === '(' || a.text === '!')
      const starts = first < 0 ? args : args.slice(0, first)
      for (const w of starts.length > 0 ? starts : [{ ...(/** @type {Word} */ (args[0])), text: '.', literal: true, subs: [] }]) out.push({ word: w, delete: true })
      break
    }
    default:
      break
  }
  return out
}

/**
 * A command's operands (what is not an option) and its options with their values, given which
 * options take one.
 */
function split(/** @type {Word[]} */ args, /** @type {string[]} */ valued) {
  /** @type {Word[]} */
  const operands = []
  /** @type {Array<{ option: string, value: Word | undefined }>} */
  const options = []
  let ended = false
  for (let i = 0; i < args.length; i++) {
    const w = /** @type {Word} */ (args[i])
    const t = w.text
    if (ended || t === '-' || !t.startsWith('-')) operands.push(w)
    else if (t === '--') ended = true
    else if (t.includes('=') && t.startsWith('--')) options.push({ option: t.slice(0, t.indexOf('=')), value: { ...w, text: t.slice(t.indexOf('=') + 1) } })
    else if (t === '-t' || t === '--target-directory' || valued.includes(t)) {
      options.push({ option: t, value: args[i + 1] })
      i += 1
    } else if (/^-t./.test(t) && !t.startsWith('--')) options.push({ option: '-t', value: { ...w, text: t.slice(2) } })
    else options.push({ option: t, value: undefined })
  }
  return { operands, options }
}

/** @returns {Refusal | undefined} */
function checkWord(/** @type {Place} */ place, /** @type {At} */ at, /** @type {Target} */ target) {
  const { word } = target
  if (!word.literal) return { allow: false, reason: `this rule cannot tell where '${word.text}' leads (the shell fills it in when the command runs), so the command is refused; write the path out` }
  if (word.text.startsWith('~')) return refuse(place, word.text, 'in the home folder')
  if (!word.text.startsWith('/') && at.dir === undefined) {
    return { allow: false, reason: `this rule cannot tell where '${word.text}' is ${at.why}, so the command is refused; write the path out from the project` }
  }
  return checkPath(place, at.dir ?? place.root, word.text, target.delete)
}

/** @returns {Refusal | undefined} */
function checkPath(/** @type {Place} */ place, /** @type {string} */ base, /** @type {string} */ path, /** @type {boolean} */ deletes) {
  if (path === '') return undefined
  const full = resolvePath(base, path)
  if (DEVICES.test(full)) return undefined
  if (full === place.root) {
    return deletes ? { allow: false, reason: `'${path}' is the workdir itself: this rule refuses deleting or moving it` } : undefined
  }
  if (within(full, place.root) || place.writable.some((w) => full === w || within(full, w))) return undefined
  return refuse(place, path, full)
}

function refuse(/** @type {Place} */ place, /** @type {string} */ path, /** @type {string} */ full) {
  // Where a relative path leads: from the workdir when it is beside it (`../x`), else absolute.
  const near = fromRoot(place.root, full)
  const where = !path.startsWith('/') && !near.startsWith('../../') ? near : full
  const shown = where === path ? `'${path}'` : `'${path}' (${where})`
  return {
    allow: /** @type {const} */ (false),
    reason: `${shown} is outside the workdir: this rule refuses writes and deletes there. Work inside the project, or ask the user to do it`,
  }
}

/** `full` as a path from the workdir `root`: `../x`. */
function fromRoot(/** @type {string} */ root, /** @type {string} */ full) {
  const a = root.split('/').filter(Boolean)
  const b = full.split('/').filter(Boolean)
  let same = 0
  while (same < a.length && same < b.length && a[same] === b[same]) same += 1
  return [...a.slice(same).map(() => '..'), ...b.slice(same)].join('/') || '.'
}

function within(/** @type {string} */ path, /** @type {string} */ folder) {
  return folder === '/' || path.startsWith(`${folder}/`)
}

/** `path` resolved against the absolute folder `base`, `.` and `..` taken out, as the shell's kernel walks it (links aside). */
function resolvePath(/** @type {string} */ base, /** @type {string} */ path) {
  const parts = path.startsWith('/') ? [] : base.split('/')
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue
    if (part === '..') parts.pop()
    else parts.push(part)
  }
  const joined = parts.filter((p) => p !== '').join('/')
  return `/${joined}`
}
