/**
 * Patch headers that do not say plainly which file they touch. A header (`*** Add File: `, `*** Update
 * File: `, `*** Delete File: `, `*** Move to: `) whose line holds a control character, an invisible
 * format character (bidi overrides, zero-width characters, the BOM) or whitespace other than a space
 * names a file that is not the one it shows: Codex trims U+0085 off the end of a path where JavaScript
 * keeps it, keeps a BOM JavaScript would trim, and a bidi override shows `evil<U+202E>txt.sh` as
 * `evilhs.txt`. hookd refuses such a patch at the gate instead of guessing which reading the agent
 * takes (apply-patch.ts).
 */
import { quoted } from '../../protocol/text.js'

// Unicode White_Space (as Rust's trim, patch-parser.ts) but the ASCII space; then Cf, Cc and lone surrogates.
const WHITESPACE = /[\t\n\v\f\r\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/u
const FORMAT = /\p{Cf}/u
const CONTROL = /\p{Cc}/u
const SURROGATE = /\p{Cs}/u
const UNPLAIN = /[\t\n\v\f\r\u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\p{Cf}\p{Cc}\p{Cs}]/gu

function kind(c: string): string {
  if (WHITESPACE.test(c)) return 'whitespace other than a space'
  if (FORMAT.test(c)) return 'an invisible format character'
  if (CONTROL.test(c)) return 'a control character'
  if (SURROGATE.test(c)) return 'a lone surrogate'
  return 'an unusual character'
}

const codePoint = (c: string): string => `U+${(c.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`

/** What is wrong with a header line, naming the header and its first such character; undefined when it is plain. */
export function headerProblem(line: string): string | undefined {
  UNPLAIN.lastIndex = 0
  const found = UNPLAIN.exec(line)
  if (!found) return undefined
  const c = found[0]
  const shown = quoted(line.replace(UNPLAIN, (u) => `<${codePoint(u)}>`))
  return `the patch header ${shown} holds ${codePoint(c)} (${kind(c)}); a patch header must name its file in plain characters`
}
