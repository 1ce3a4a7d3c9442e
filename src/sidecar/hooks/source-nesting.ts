/**
 * How deep a source file nests, measured before esbuild sees it: esbuild's parser recurses once per
 * level, and on this machine its service process overflowed its stack and died at ~172,000 nested `[`
 * or `{`, ~265,000 `(`, ~170,000 template `${` (0.28.2; docs/containment.md#bundling has the figures).
 * Nested functions cost it time before that: 1,000 nested functions took 2 s, 10,000 over a minute.
 * A file nested deeper than the limit is refused (bundle-confine.ts), so no tenant's file can kill or
 * stall the bundler that every tenant shares.
 *
 * The measure is the number of open brackets (`(`, `[`, `{` and a template's `${`) plus the arrow
 * functions with an expression body still open at each of those levels (`a => b => c` nests functions
 * with no bracket at all). It is a scan, not a parser, and is generous where it guesses: strings,
 * template literals, comments and regular expressions are skipped (a `/` is a regular expression where
 * an expression may start: after an operator, a `(`, or a keyword such as `return`); an arrow's body
 * ends at a `,`, a `;`, the close of its bracket, or the end of a line that does not end in `=>`.
 * A guess that goes wrong costs a level or two on one line, far below any limit worth setting.
 *
 * Linear in the text, one pass, no recursion, memory bounded by the limit (the scan stops there).
 */

/** What `nesting` found: the deepest level seen, and the line where it first passed the limit. */
export interface Nesting {
  deepest: number
  /** 1-based; set only when the file nests deeper than the limit (the scan stopped there). */
  passedAt?: number
}

// Character codes.
const TAB = 9
const NEWLINE = 10
const CARRIAGE_RETURN = 13
const SPACE = 32
const BANG = 33
const DOUBLE = 34
const HASH = 35
const DOLLAR = 36
const SINGLE = 39
const OPEN_PAREN = 40
const CLOSE_PAREN = 41
const STAR = 42
const COMMA = 44
const DOT = 46
const SLASH = 47
const ZERO = 48
const NINE = 57
const SEMICOLON = 59
const EQUALS = 61
const GREATER = 62
const OPEN_BRACKET = 91
const BACKSLASH = 92
const CLOSE_BRACKET = 93
const UNDERSCORE = 95
const BACKTICK = 96
const OPEN_BRACE = 123
const CLOSE_BRACE = 125

/** Words after which a `/` starts a regular expression, not a division. */
const BEFORE_EXPRESSION = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await'])

/** What an open level is: a bracket, or a template's `${` (whose `}` goes back into the template). */
const BRACKET = 0
const TEMPLATE = 1

function isIdentifierChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= ZERO && c <= NINE) || c === DOLLAR || c === UNDERSCORE || c === BACKSLASH || c >= 128
}

function isSpace(c: number): boolean {
  return c === SPACE || c === TAB || c === CARRIAGE_RETURN || c === 11 || c === 12 || c === 0xa0 || c === 0xfeff
}

/** Scans `text`; stops at the first place where it nests deeper than `limit`. */
export function nesting(text: string, limit: number): Nesting {
  const n = text.length
  /** The kind of each open level, innermost last. */
  const kinds: number[] = []
  /** Open expression-bodied arrows at each level: index 0 is outside any bracket. */
  const arrows: number[] = [0]
  let depth = 0
  let deepest = 0
  let line = 1
  let regexAllowed = true
  /** Where the word just before is, when the last token was one: looked up only if a `/` follows. */
  let wordStart = -1
  let wordEnd = -1
  let afterArrow = false
  let i = 0
  // A hashbang line.
  if (text.charCodeAt(0) === HASH && text.charCodeAt(1) === BANG) i = skipLine(text, 0)

  const deeper = (): boolean => {
    if (depth > deepest) deepest = depth
    return depth > limit
  }
  const endArrows = (): void => {
    const level = kinds.length
    depth -= arrows[level] as number
    arrows[level] = 0
  }
  const close = (): void => {
    endArrows()
    kinds.pop()
    arrows.pop()
    depth -= 1
  }
  /** Scans a template literal's text from `i` (after its backtick or a `}`); true at a `${`. */
  const template = (): boolean => {
    while (i < n) {
      const c = text.charCodeAt(i)
      if (c === BACKSLASH) {
        if (text.charCodeAt(i + 1) === NEWLINE) line += 1
        i += 2
      } else if (c === BACKTICK) {
        i += 1
        return false
      } else if (c === DOLLAR && text.charCodeAt(i + 1) === OPEN_BRACE) {
        i += 2
        return true
      } else {
        if (c === NEWLINE) line += 1
        i += 1
      }
    }
    return false
  }
  /** Past a string's closing quote; an unterminated string ends at its line's end. */
  const skipString = (from: number, quote: number): number => {
    let at = from
    while (at < n) {
      const c = text.charCodeAt(at)
      if (c === quote) return at + 1
      if (c === NEWLINE) return at
      if (c === BACKSLASH) {
        // An escape, or a line continuation.
        if (text.charCodeAt(at + 1) === NEWLINE) line += 1
        at += 2
      } else at += 1
    }
    return at
  }
  const open = (kind: number): boolean => {
    kinds.push(kind)
    arrows.push(0)
    depth += 1
    regexAllowed = true
    return deeper()
  }

  while (i < n) {
    const c = text.charCodeAt(i)
    if (c === NEWLINE) {
      line += 1
      i += 1
      if (!afterArrow) endArrows()
      continue
    }
    if (isSpace(c)) {
      i += 1
      continue
    }
    const wasArrow: boolean = afterArrow
    afterArrow = false
    const word = wordStart
    wordStart = -1
    if (c === SLASH) {
      const next = text.charCodeAt(i + 1)
      if (next === SLASH || next === STAR) {
        // A comment is no token: what came before it still counts.
        afterArrow = wasArrow
        wordStart = word
        if (next === SLASH) {
          i = skipLine(text, i)
          continue
        }
        const end = text.indexOf('*/', i + 2)
        const stop = end < 0 ? n : end + 2
        for (; i < stop; i += 1) if (text.charCodeAt(i) === NEWLINE) line += 1
        continue
      }
      if (regexAllowed || (word >= 0 && wordEnd - word <= 10 && BEFORE_EXPRESSION.has(text.slice(word, wordEnd)))) {
        i = skipRegex(text, i + 1)
        regexAllowed = false
        continue
      }
      i += 1
      regexAllowed = true
      continue
    }
    if (c === SINGLE || c === DOUBLE) {
      i = skipString(i + 1, c)
      regexAllowed = false
      continue
    }
    if (c === BACKTICK) {
      i += 1
      if (template() && open(TEMPLATE)) return { deepest, passedAt: line }
      regexAllowed = false
      continue
    }
    if (c === OPEN_PAREN || c === OPEN_BRACKET || c === OPEN_BRACE) {
      i += 1
      if (open(BRACKET)) return { deepest, passedAt: line }
      continue
    }
    if (c === CLOSE_PAREN || c === CLOSE_BRACKET || c === CLOSE_BRACE) {
      i += 1
      const kind = kinds.at(-1)
      if (kind === undefined) continue
      if (c === CLOSE_BRACE && kind === TEMPLATE) {
        close()
        if (template() && open(TEMPLATE)) return { deepest, passedAt: line }
      } else if (kind === BRACKET) {
        close()
      }
      regexAllowed = false
      continue
    }
    if (c === EQUALS && text.charCodeAt(i + 1) === GREATER) {
      i += 2
      regexAllowed = true
      afterArrow = true
      if (text.charCodeAt(skipSpace(text, i)) !== OPEN_BRACE) {
        arrows[kinds.length] = (arrows[kinds.length] as number) + 1
        depth += 1
        if (deeper()) return { deepest, passedAt: line }
      }
      continue
    }
    if (c === COMMA || c === SEMICOLON) {
      i += 1
      endArrows()
      regexAllowed = true
      continue
    }
    if (c >= ZERO && c <= NINE) {
      i += 1
      while (i < n && (isIdentifierChar(text.charCodeAt(i)) || text.charCodeAt(i) === DOT)) i += 1
      regexAllowed = false
      continue
    }
    if (isIdentifierChar(c) || c === HASH) {
      const start = i
      i += 1
      while (i < n && isIdentifierChar(text.charCodeAt(i))) i += 1
      regexAllowed = false
      wordStart = start
      wordEnd = i
      continue
    }
    // Any other punctuator: an expression may follow.
    i += 1
    regexAllowed = true
  }
  return { deepest }
}

/** The index of the newline that ends the line `from` is on (or the end). */
function skipLine(text: string, from: number): number {
  const end = text.indexOf('\n', from)
  return end < 0 ? text.length : end
}

function skipSpace(text: string, from: number): number {
  let i = from
  while (i < text.length && (isSpace(text.charCodeAt(i)) || text.charCodeAt(i) === NEWLINE)) i += 1
  return i
}

/** Past a regular expression's closing slash (classes and escapes skipped); at most to its line's end. */
function skipRegex(text: string, from: number): number {
  let i = from
  let inClass = false
  while (i < text.length) {
    const c = text.charCodeAt(i)
    if (c === NEWLINE) return i
    if (c === BACKSLASH) i += 2
    else {
      if (c === OPEN_BRACKET) inClass = true
      else if (c === CLOSE_BRACKET) inClass = false
      else if (c === SLASH && !inClass) return i + 1
      i += 1
    }
  }
  return i
}
