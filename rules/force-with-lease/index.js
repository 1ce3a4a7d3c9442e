// @ts-check
// force-with-lease, a starter rule of hookd: rewrites a force push (`git push --force`, `-f`, a
// `+branch` refspec) to `git push --force-with-lease`, which refuses to overwrite commits on the
// remote that the local repository has not seen. It changes the command, it does not refuse it;
// `--force-with-lease` alone is left as it is. Its cases are in tests/ (run them: hookd test).
//
// A `+` refspec forces its branch even beside --force-with-lease (git 2.39, measured), so the `+` is
// taken off too. What it cannot rewrite it refuses: a force push inside `sh -c '...'`, `eval` or a
// substitution (the rewritten text would have to be quoted again inside another string). What it
// cannot see: a git alias (`git pf`), a force push in a script file, push.default settings,
// `--mirror` (which force-updates every ref), or options the shell builds when it runs (`$FLAGS`).
const { scriptsOf, programOf } = require('./lib/commands.js')

/** @typedef {import('./lib/shell.js').Command} Command */
/** @typedef {import('./lib/shell.js').Word} Word */
/** @typedef {{ start: number, end: number, text: string }} Edit */

/** @type {import('hookd-sandbox/hook').Hook} */
const hook = {
  beforeToolExecute(ctx, call) {
    if (call.name !== 'shell') return
    const command = String(call.arguments.command ?? '')
    const read = scriptsOf(command)
    if (read.problem) return { allow: false, reason: `this rule could not read the whole command (${read.problem}), so it is refused; run it in smaller steps` }
    const [top, ...inner] = read.scripts
    for (const { script } of inner) {
      if (script.commands.some((c) => forcePush(c) !== undefined)) {
        return {
          allow: false,
          reason: "a force push inside sh -c, eval or $(...) cannot be rewritten to --force-with-lease here: run it as a command of its own, as 'git push --force-with-lease ...'",
        }
      }
    }
    /** @type {Edit[]} */
    const edits = []
    for (const c of top?.script.commands ?? []) edits.push(...(forcePush(c, command) ?? []))
    if (edits.length === 0) return
    let rewritten = command
    for (const e of edits.sort((a, b) => b.start - a.start)) rewritten = rewritten.slice(0, e.start) + e.text + rewritten.slice(e.end)
    ctx.log('rewrote a force push:', rewritten)
    return { arguments: { ...call.arguments, command: rewritten } }
  },
}

module.exports = hook

/** git's own options before the command that take a value as the next word. */
const GIT_VALUES = new Set(['-C', '-c', '--git-dir', '--work-tree', '--namespace', '--super-prefix', '--config-env', '--exec-path', '--list-cmds'])
/** git push's options that take a value as the next word. */
const PUSH_VALUES = new Set(['-o', '--push-option', '--repo', '--receive-pack', '--exec', '--signed'])

/**
 * The edits that turn this command's force push into one with a lease (`text` is the whole command
 * line, for the spaces around a word it removes), or undefined when it is no force push.
 * @returns {Edit[] | undefined}
 */
function forcePush(/** @type {Command} */ c, text = '') {
  const p = programOf(c)
  if (p.name !== 'git') return undefined
  let i = 0
  while (i < p.args.length && /** @type {Word} */ (p.args[i]).text.startsWith('-')) i += GIT_VALUES.has(/** @type {Word} */ (p.args[i]).text) ? 2 : 1
  const push = p.args[i]
  if (!push || push.text !== 'push') return undefined
  /** @type {Edit[]} */
  const edits = []
  /** @type {Word[]} `--force` and `-f` */
  const forces = []
  let forced = false
  let lease = false
  let positionals = 0
  let options = true
  for (let j = i + 1; j < p.args.length; j++) {
    const w = /** @type {Word} */ (p.args[j])
    const t = w.text
    if (options && t === '--') options = false
    else if (options && (t === '--force-with-lease' || t.startsWith('--force-with-lease='))) lease = true
    else if (options && (t === '--force' || t === '-f')) forces.push(w)
    else if (options && /^-[a-zA-Z46]+$/.test(t) && t.includes('f')) {
      // -fu: the f goes, the other flags stay.
      edits.push({ start: w.start, end: w.end, text: t.replace(/f/g, '') })
      forced = true
    } else if (options && PUSH_VALUES.has(t)) j += 1
    else if (options && t.startsWith('-')) continue
    else {
      positionals += 1
      // The first is the remote; a refspec after it that starts with + forces its branch.
      if (positionals > 1 && t.startsWith('+')) {
        edits.push({ start: w.start, end: w.end, text: shellWord(t.slice(1)) })
        forced = true
      }
    }
  }
  if (forces.length === 0 && !forced) return undefined
  forces.forEach((w, n) => {
    if (n === 0 && !lease) edits.push({ start: w.start, end: w.end, text: '--force-with-lease' })
    else edits.push({ start: /[ \t]/.test(text[w.start - 1] ?? '') ? w.start - 1 : w.start, end: w.end, text: '' })
  })
  if (forces.length === 0 && !lease) edits.push({ start: push.end, end: push.end, text: ' --force-with-lease' })
  return edits
}

/** A ref name as a shell word: bare when it holds nothing the shell reads, else single-quoted. */
function shellWord(/** @type {string} */ text) {
  return /^[A-Za-z0-9._/:@^~{}-]+$/.test(text) ? text : `'${text.replace(/'/g, "'\\''")}'`
}
