/**
 * The command blocks of a markdown doc, as tests that run them read them: a section (a `## ` heading up
 * to the next one), its fenced blocks in order, each block's shell commands (a line, with its `\`
 * continuations and its here-document, its trailing comment left out), the backticked snippets of the
 * section's prose, and a comparison of a JSON answer with the JSON a doc shows, whose `...` elides.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './processes.js'

export interface DocBlock {
  /** The doc's path in the repository (`README.md`, `docs/agents.md`). */
  doc: string
  /** The section's heading, without the `## `. */
  section: string
  /** 1-based, within the section. */
  index: number
  /** The line of the opening fence, in the doc. */
  line: number
  /** The fence's info string (`sh`, `json`, or ''). */
  lang: string
  text: string
}

export interface DocCommand {
  block: DocBlock
  /** The command as bash runs it: continuation lines and here-document included, comment left out. */
  text: string
  /** Its first line, comment left out, continuations joined with single spaces: what a step matches. */
  head: string
  /** It ends in `&`: the user runs it in the background (`text` and `head` are without the `&`). */
  background: boolean
}

/** How a block is named in a failure message: the doc, the section, the block's number and line. */
export function blockName(block: DocBlock): string {
  return `${block.doc} "${block.section}" block ${block.index} (line ${block.line})`
}

/** The doc's text, read now: a test that runs it runs the doc as it is. */
export function readDoc(doc: string): string {
  return readFileSync(join(ROOT, doc), 'utf8')
}

/** The section under `## heading` (up to the next `## `), with the line its heading is on; throws when there is none. */
export function section(doc: string, heading: string): { text: string; line: number } {
  const lines = readDoc(doc).split('\n')
  const start = lines.findIndex((l) => l === `## ${heading}`)
  if (start < 0) throw new Error(`${doc} has no section "## ${heading}": a test runs its blocks; rename the section in the test too`)
  const end = lines.findIndex((l, i) => i > start && /^## /.test(l))
  return { text: lines.slice(start, end < 0 ? undefined : end).join('\n'), line: start + 1 }
}

/** The fenced blocks of a section, in order. */
export function blocks(doc: string, heading: string): DocBlock[] {
  const { text, line } = section(doc, heading)
  const out: DocBlock[] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)$/.exec(lines[i] as string)
    if (!open) continue
    const close = lines.findIndex((l, j) => j > i && l === '```')
    if (close < 0) throw new Error(`${doc} line ${line + i}: a fenced block that never closes`)
    out.push({ doc, section: heading, index: out.length + 1, line: line + i, lang: open[1] as string, text: lines.slice(i + 1, close).join('\n') })
    i = close
  }
  return out
}

/** The section's prose (fenced blocks left out): where a doc says what the user sees. */
export function prose(doc: string, heading: string): string {
  return section(doc, heading).text.replace(/^```\S*\n[\s\S]*?^```$/gm, '')
}

/**
 * The backticked snippet of a section's prose that `pattern` matches (its line breaks read as spaces);
 * throws, naming the doc and section, when the prose quotes none: the test checks what that snippet says.
 */
export function quoted(doc: string, heading: string, pattern: RegExp): string {
  for (const found of prose(doc, heading).matchAll(/`([^`]+)`/g)) {
    const snippet = (found[1] as string).replace(/\s*\n\s*/g, ' ')
    if (pattern.test(snippet)) return snippet
  }
  throw new Error(`${doc} "${heading}" no longer quotes a snippet like ${pattern}: the test checks what the user sees against it; update the test with the doc`)
}

/** `line` without a trailing `# comment` (a `#` after a blank, outside quotes). */
function withoutComment(line: string): string {
  let quote: string | undefined
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string
    if (quote) {
      if (c === quote) quote = undefined
    } else if (c === "'" || c === '"') quote = c
    else if (c === '#' && (i === 0 || /\s/.test(line[i - 1] as string))) return line.slice(0, i).trimEnd()
  }
  return line.trimEnd()
}

/** The shell commands of a block, in order; blank and comment-only lines are not commands. */
export function commands(block: DocBlock): DocCommand[] {
  const lines = block.text.split('\n')
  const out: DocCommand[] = []
  for (let i = 0; i < lines.length; i++) {
    let first = withoutComment(lines[i] as string)
    if (first === '') continue
    const parts = [first]
    while (first.endsWith('\\') && i + 1 < lines.length) {
      first = withoutComment(lines[++i] as string)
      parts.push(first)
    }
    let text = parts.join('\n')
    const head = parts.map((p) => p.replace(/\\$/, '').trim()).join(' ')
    const heredoc = /<<-?'?(\w+)'?/.exec(head)
    if (heredoc) {
      const end = lines.findIndex((l, j) => j > i && l === heredoc[1])
      if (end < 0) throw new Error(`${blockName(block)}: the here-document ${heredoc[1]} never ends`)
      text = [text, ...lines.slice(i + 1, end + 1)].join('\n')
      i = end
    }
    const background = /\s&$/.test(head)
    out.push({ block, text: background ? text.replace(/\s*&$/, '') : text, head: background ? head.replace(/\s*&$/, '') : head, background })
  }
  return out
}

/** The words bash would pass for `head`'s simple command, for steps that need an argument of it. */
export function words(head: string): string[] {
  const out: string[] = []
  for (const found of head.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) out.push(found[1] ?? found[2] ?? (found[3] as string))
  return out
}

/** Marks the places where a doc's JSON elides (`...`): an object's other fields, an array's other elements. */
const ELIDED = '\u2026hookd-doc-elided'

/** The JSON a doc shows, parsed, its `...` read as "and more here". */
export function shownJson(text: string): unknown {
  const marked = text
    .replace(/\{\s*\.\.\.\s*\}/g, `{"${ELIDED}":true}`)
    .replace(/,\s*\.\.\.\s*(?=([}\]]))/g, (_match, closer: string) => (closer === '}' ? `,"${ELIDED}":true` : `,"${ELIDED}"`))
  return JSON.parse(marked) as unknown
}

/**
 * Where `actual` differs from what the doc shows (`shown`, from shownJson): every field shown must be
 * there with the value shown, and an object or array without `...` must have nothing more. Each
 * difference names its path.
 */
export function differences(shown: unknown, actual: unknown, path = '$'): string[] {
  if (Array.isArray(shown)) {
    if (!Array.isArray(actual)) return [`${path}: the doc shows an array, hookd printed ${JSON.stringify(actual)}`]
    const open = shown.at(-1) === ELIDED
    const items = open ? shown.slice(0, -1) : shown
    const out = open
      ? actual.length < items.length ? [`${path}: the doc shows at least ${items.length} elements, hookd printed ${actual.length}`] : []
      : actual.length !== items.length ? [`${path}: the doc shows ${items.length} elements, hookd printed ${actual.length}`] : []
    items.forEach((item, i) => out.push(...differences(item, actual[i], `${path}[${i}]`)))
    return out
  }
  if (shown !== null && typeof shown === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return [`${path}: the doc shows an object, hookd printed ${JSON.stringify(actual)}`]
    const fields = Object.entries(shown).filter(([key]) => key !== ELIDED)
    const out: string[] = []
    if (!(ELIDED in shown)) {
      for (const key of Object.keys(actual)) if (!(key in shown)) out.push(`${path}.${key}: hookd printed it, the doc does not show it (nor "...")`)
    }
    for (const [key, value] of fields) {
      if (!(key in actual)) out.push(`${path}.${key}: the doc shows it, hookd did not print it`)
      else out.push(...differences(value, (actual as Record<string, unknown>)[key], `${path}.${key}`))
    }
    return out
  }
  return Object.is(shown, actual) ? [] : [`${path}: the doc shows ${JSON.stringify(shown)}, hookd printed ${JSON.stringify(actual)}`]
}
