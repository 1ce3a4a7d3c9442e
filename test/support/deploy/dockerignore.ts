/**
 * `.dockerignore` as Docker reads it, enough to replay a build context: one pattern per line, `#`
 * comments, `!` re-includes, `*` and `?` within one path segment, `**` across segments; the last pattern
 * that matches a path or one of its parent folders decides.
 */

interface Rule {
  negate: boolean
  pattern: RegExp
}

export class DockerIgnore {
  private readonly rules: Rule[]

  constructor(text: string) {
    this.rules = text
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter((l) => l !== '' && !l.startsWith('#'))
      .map((l) => {
        const negate = l.startsWith('!')
        const body = (negate ? l.slice(1) : l).trim().replace(/^\/+|\/+$/g, '').replace(/^\.\//, '')
        return { negate, pattern: toRegExp(body) }
      })
  }

  /** Whether the context path (relative, `/`-separated) is left out of the build context. */
  ignores(path: string): boolean {
    const parts = path.split('/').filter(Boolean)
    let ignored = false
    for (const rule of this.rules) {
      // A rule that matches a folder matches everything inside it.
      const hit = parts.some((_, i) => rule.pattern.test(parts.slice(0, i + 1).join('/')))
      if (hit) ignored = !rule.negate
    }
    return ignored
  }
}

function toRegExp(glob: string): RegExp {
  let out = ''
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string
    if (c === '*' && glob[i + 1] === '*') {
      // `**/` matches zero or more folders; a trailing `**` matches the rest.
      if (glob[i + 2] === '/') {
        out += '(?:.*/)?'
        i += 2
      } else {
        out += '.*'
        i += 1
      }
    } else if (c === '*') out += '[^/]*'
    else if (c === '?') out += '[^/]'
    else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&')
  }
  return new RegExp(`^${out}$`)
}
