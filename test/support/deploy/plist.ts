/**
 * A reader for XML property lists (Apple's plist DTD 1.0), enough to check a launchd job on machines
 * without macOS: the XML declaration, DOCTYPE and comments; `plist` holding one value; `dict` (key,
 * value pairs), `array`, `string`, `integer`, `real`, `true`, `false`, `date` and `data`; the five
 * predefined XML entities and character references. Anything else is an error naming where it is.
 */

export type PlistValue = string | number | boolean | Date | Uint8Array | PlistValue[] | { [key: string]: PlistValue }

interface Element {
  name: string
  attributes: Record<string, string>
  children: Array<Element | string>
  /** Offset in the text, for messages. */
  at: number
}

export class PlistError extends Error {}

export function parsePlist(text: string): PlistValue {
  const root = parseXml(text)
  if (root.name !== 'plist') throw new PlistError(`the root element is <${root.name}>, not <plist>`)
  if (root.attributes.version !== '1.0') throw new PlistError(`<plist version="${root.attributes.version}">: expected version="1.0"`)
  const values = elements(root)
  if (values.length !== 1) throw new PlistError(`<plist> must hold exactly one value; it holds ${values.length}`)
  return value(values[0] as Element)
}

function elements(e: Element): Element[] {
  for (const c of e.children) {
    if (typeof c === 'string' && c.trim() !== '') throw new PlistError(`unexpected text '${c.trim().slice(0, 30)}' in <${e.name}> at offset ${e.at}`)
  }
  return e.children.filter((c): c is Element => typeof c !== 'string')
}

function textOf(e: Element): string {
  if (e.children.some((c) => typeof c !== 'string')) throw new PlistError(`<${e.name}> at offset ${e.at} must hold text only`)
  return e.children.join('')
}

function value(e: Element): PlistValue {
  switch (e.name) {
    case 'dict': {
      const out: Record<string, PlistValue> = {}
      const items = elements(e)
      for (let i = 0; i < items.length; i += 2) {
        const key = items[i] as Element
        const v = items[i + 1]
        if (key.name !== 'key') throw new PlistError(`<dict> at offset ${e.at}: expected <key>, found <${key.name}> at offset ${key.at}`)
        if (!v) throw new PlistError(`<dict> at offset ${e.at}: key '${textOf(key)}' has no value`)
        const k = textOf(key)
        if (k in out) throw new PlistError(`<dict> at offset ${e.at}: key '${k}' appears twice`)
        out[k] = value(v)
      }
      return out
    }
    case 'array':
      return elements(e).map(value)
    case 'string':
      return textOf(e)
    case 'integer': {
      const t = textOf(e).trim()
      if (!/^[+-]?\d+$/.test(t)) throw new PlistError(`<integer>${t}</integer> at offset ${e.at} is not a whole number`)
      return Number(t)
    }
    case 'real': {
      const n = Number(textOf(e).trim())
      if (Number.isNaN(n)) throw new PlistError(`<real> at offset ${e.at} is not a number`)
      return n
    }
    case 'true':
    case 'false':
      if (e.children.length > 0) throw new PlistError(`<${e.name}/> at offset ${e.at} must be empty`)
      return e.name === 'true'
    case 'date':
      return new Date(textOf(e).trim())
    case 'data':
      return Uint8Array.from(Buffer.from(textOf(e).replace(/\s+/g, ''), 'base64'))
    default:
      throw new PlistError(`<${e.name}> at offset ${e.at} is not a plist value`)
  }
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

function decode(text: string, at: number): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);|&/g, (m, ref: string | undefined) => {
    if (ref === undefined) throw new PlistError(`a bare '&' at offset ${at}; write &amp;`)
    if (ref.startsWith('#x')) return String.fromCodePoint(parseInt(ref.slice(2), 16))
    if (ref.startsWith('#')) return String.fromCodePoint(Number(ref.slice(1)))
    const e = ENTITIES[ref]
    if (e === undefined) throw new PlistError(`unknown entity ${m} at offset ${at}`)
    return e
  })
}

/** A small, strict XML reader: one root element; no CDATA sections, no processing instructions past the declaration. */
function parseXml(text: string): Element {
  let i = 0
  const skipProlog = (): void => {
    for (;;) {
      const rest = text.slice(i)
      const m = /^\s*(<\?xml[^?]*\?>|<!DOCTYPE[^>]*>|<!--([\s\S]*?)-->)/.exec(rest)
      if (!m) return
      if (m[2]?.includes('--')) throw new PlistError(`the comment at offset ${i + m[0].indexOf('<!--')} contains '--', which XML does not allow in comments`)
      i += m[0].length
    }
  }
  skipProlog()
  const stack: Element[] = []
  let root: Element | undefined
  while (i < text.length) {
    if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i)
      if (end < 0) throw new PlistError(`a comment at offset ${i} never ends`)
      if (text.slice(i + 4, end).includes('--')) throw new PlistError(`the comment at offset ${i} contains '--', which XML does not allow in comments`)
      i = end + 3
      continue
    }
    if (text[i] === '<') {
      const end = text.indexOf('>', i)
      if (end < 0) throw new PlistError(`a tag at offset ${i} never ends`)
      const tag = text.slice(i + 1, end)
      if (tag.startsWith('/')) {
        const open = stack.pop()
        if (!open || open.name !== tag.slice(1).trim()) throw new PlistError(`</${tag.slice(1)}> at offset ${i} closes ${open ? `<${open.name}>` : 'nothing'}`)
        if (stack.length === 0) root = open
      } else {
        const m = /^([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)$/.exec(tag)
        if (!m) throw new PlistError(`cannot read the tag <${tag}> at offset ${i}`)
        const attributes: Record<string, string> = {}
        for (const a of (m[2] as string).matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attributes[a[1] as string] = decode(a[2] ?? a[3] ?? '', i)
        const e: Element = { name: m[1] as string, attributes, children: [], at: i }
        const parent = stack.at(-1)
        if (parent) parent.children.push(e)
        else if (root || stack.length > 0) throw new PlistError(`a second root element <${e.name}> at offset ${i}`)
        if (m[3] === '/') {
          if (!parent) root = e
        } else stack.push(e)
      }
      i = end + 1
      continue
    }
    const next = text.indexOf('<', i)
    const chunk = text.slice(i, next < 0 ? text.length : next)
    const parent = stack.at(-1)
    if (parent) parent.children.push(decode(chunk, i))
    else if (chunk.trim() !== '') throw new PlistError(`text outside the root element at offset ${i}`)
    i = next < 0 ? text.length : next
  }
  if (stack.length > 0) throw new PlistError(`<${(stack.at(-1) as Element).name}> at offset ${(stack.at(-1) as Element).at} is never closed`)
  if (!root) throw new PlistError('no root element')
  return root
}
