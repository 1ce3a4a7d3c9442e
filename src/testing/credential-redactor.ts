/**
 * Keeps what looks like a credential out of a captured case (capture.ts, front-door-capture.ts), beside
 * the session's env values (env-redactor.ts): an agent's event carries whatever the agent saw (a tool's
 * output that printed a key, a command with a token in it, a file it wrote), and a case file is meant to
 * be read, shared and committed.
 *
 * Every string of the case (object keys too) is searched for the shapes below, each replaced by
 * `<redacted KIND>` (a key/value pair keeps its name: `API_KEY=<redacted>`); a string value under a key
 * that names a secret (`password`, `api_key`, `authorization`, ...) is replaced whole; and the literal
 * values given (the front door's HTTP token) are replaced wherever they appear, as themselves, escaped
 * in a JSON string or URL-encoded. What is not caught: a secret of no known shape under a name that
 * says nothing (`x = "..."`), one split up, encoded (base64) or reversed. Case files stay 0600 for that
 * reason, and are worth a read before they are committed.
 *
 * Linear in the text: each pattern can only start where the run of characters it matches starts (a
 * lookbehind), and its repeats are bounded or end at a character the run cannot hold, so no input makes
 * a pattern backtrack over what it already read. The case is walked recursively; its depth is bounded by
 * the bounded JSON parser that read each part of it.
 */

/** Marks a placeholder already written (this redactor's, env-redactor.ts's): never redacted again. */
const PLACEHOLDER = /<(?:env [A-Za-z_][A-Za-z0-9_]*|redacted(?: [a-z-]+)?|hookd token)>/

/** Names that say their value is a secret (in keys, `NAME=value`, `"name": "value"`). */
const SECRET_NAME = /(?:api[_-]?key|apikey|secret|token(?!s)|passw(?:or)?d|passphrase|credential|private[_-]?key|access[_-]?key|authorization|auth[_-]?token|session[_-]?key|cookie)/i

interface Shape {
  kind: string
  pattern: RegExp
  /** The replacement; default `<redacted KIND>` for the whole match. */
  replace?: (match: string, ...groups: string[]) => string
}

/** Characters of a token-like run (keys, ids, base64url). */
const RUN = 'A-Za-z0-9_-'
const startOfRun = `(?<![${RUN}])`

const SHAPES: readonly Shape[] = [
  // A PEM private key: to its END line, or to the end of the text when it has none.
  { kind: 'private-key', pattern: /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----|[\s\S]*)/g },
  // An authorization value in text: the scheme stays, the credential goes.
  { kind: 'bearer', pattern: /\b(Bearer|Basic)([ \t]+)[A-Za-z0-9._~+/=-]{8,}/g, replace: (_m, scheme, gap) => `${scheme}${gap}<redacted bearer>` },
  { kind: 'hookd-hmac', pattern: /\bhookd-hmac[ \t]+[^\s"']+/g, replace: () => 'hookd-hmac <redacted>' },
  { kind: 'anthropic-key', pattern: new RegExp(`${startOfRun}sk-ant-[${RUN}]{20,}`, 'g') },
  { kind: 'openai-key', pattern: new RegExp(`${startOfRun}sk-[${RUN}]{20,}`, 'g') },
  { kind: 'github-token', pattern: new RegExp(`${startOfRun}(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})`, 'g') },
  { kind: 'gitlab-token', pattern: new RegExp(`${startOfRun}glpat-[${RUN}]{20,}`, 'g') },
  { kind: 'slack-token', pattern: new RegExp(`${startOfRun}xox[abposr]-[A-Za-z0-9-]{10,}`, 'g') },
  { kind: 'aws-key-id', pattern: new RegExp(`${startOfRun}(?:AKIA|ASIA)[0-9A-Z]{16}(?![${RUN}])`, 'g') },
  { kind: 'google-api-key', pattern: new RegExp(`${startOfRun}AIza[${RUN}]{35}`, 'g') },
  { kind: 'stripe-key', pattern: new RegExp(`${startOfRun}[rs]k_(?:live|test)_[A-Za-z0-9]{16,}`, 'g') },
  { kind: 'npm-token', pattern: new RegExp(`${startOfRun}npm_[A-Za-z0-9]{36}(?![${RUN}])`, 'g') },
  { kind: 'hookd-token', pattern: new RegExp(`${startOfRun}hkd_[${RUN}]{20,}`, 'g') },
  { kind: 'jwt', pattern: new RegExp(`${startOfRun}eyJ[${RUN}]{8,}\\.eyJ[${RUN}]{8,}\\.[${RUN}]{8,}`, 'g') },
  // A password in a URL's user part: scheme://user:PASSWORD@host.
  {
    kind: 'url-password',
    pattern: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}:\/\/[^\s/?#@:]{1,256}:)[^\s/?#@]{1,256}@/gi,
    replace: (_m, head) => `${head}<redacted password>@`,
  },
  // An authorization header of any scheme (Token, ApiKey, Digest, ...): its credential goes. Bearer's
  // and Basic's went above, and a placeholder is never matched again.
  {
    kind: 'authorization',
    pattern: /\b((?:proxy-)?authorization["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)([A-Za-z][A-Za-z0-9_-]{0,30})([ \t]+)([^\s"',;<>]{4,})/gi,
    replace: (_m, head, scheme, gap) => `${head}${scheme}${gap}<redacted credential>`,
  },
  // A command-line flag that names a secret, with its value: --password VALUE, --token=VALUE, --api-key VALUE.
  {
    kind: 'flag',
    pattern: /(?<![A-Za-z0-9_-])(--?[A-Za-z0-9-]{0,40}(?:passw(?:or)?d|passphrase|token|secret|api-?key|credential)[A-Za-z0-9-]{0,40})([ \t]+|=)([^\s"'<>-][^\s"'<>]{3,})/gi,
    replace: (_m, flag, sep) => `${flag}${sep}<redacted>`,
  },
  // curl's -u / --user USER:PASSWORD.
  {
    kind: 'user-password',
    pattern: /(?<![A-Za-z0-9_-])(-u|--user)([ \t]+|=)([^\s:"'<>]{1,128}):([^\s"'<>]{1,256})/g,
    replace: (_m, flag, sep, user) => `${flag}${sep}${user}:<redacted password>`,
  },
  // NAME=value, NAME: value, "name": "value" where the name says it is a secret.
  {
    kind: 'assignment',
    pattern: /(?<![A-Za-z0-9_.-])([A-Za-z0-9_.-]{1,128})(["']?[ \t]{0,8}[:=][ \t]{0,8}["']?)([^\s"',;&)\]}<>][^\s"',;&)\]}<>]{3,})/g,
    // `Authorization: Bearer <redacted bearer>`: the scheme is no secret, and its credential went above.
    replace: (match, name, sep, value) => (SECRET_NAME.test(name) && !/^(?:Bearer|Basic|hookd-hmac)$/i.test(value) ? `${name}${sep}<redacted>` : match),
  },
]

export interface CredentialRedactor {
  /** A copy of `value` with every credential found replaced. */
  redact(value: unknown): unknown
  /** The kinds replaced so far, in the order first met. */
  readonly replaced: ReadonlySet<string>
}

/**
 * A redactor of credential shapes and, given `literals` (a label for each: `hookd token`), of those
 * values wherever they appear. Literals shorter than 8 characters are ignored: no token is that short.
 */
export function credentialRedactor(literals: ReadonlyArray<{ label: string; value: string }> = []): CredentialRedactor {
  const replaced = new Set<string>()
  const forms = new Map<string, string>()
  for (const { label, value } of [...literals].sort((a, b) => b.value.length - a.value.length)) {
    if (value.length < 8) continue
    for (const form of [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]) if (!forms.has(form)) forms.set(form, label)
  }
  const literal = forms.size
    ? new RegExp(
        [...forms.keys()]
          .sort((a, b) => b.length - a.length)
          .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
          .join('|'),
        'g',
      )
    : undefined
  const text = (s: string): string => {
    let out = s
    if (literal) {
      out = out.replace(literal, (form) => {
        const label = forms.get(form) as string
        replaced.add(label)
        return `<${label}>`
      })
    }
    for (const shape of SHAPES) {
      out = out.replace(shape.pattern, (match: string, ...groups: unknown[]) => {
        const strings = groups.filter((g): g is string => typeof g === 'string')
        const next = shape.replace ? shape.replace(match, ...strings) : `<redacted ${shape.kind}>`
        if (next !== match) replaced.add(shape.kind)
        return next
      })
    }
    return out
  }
  // `secret`: under a key whose name says its value is a secret, every string and number in it goes
  // whole (a list of keys under "secrets", a numeric PIN under "password", an object under "credentials").
  const walk = (value: unknown, secret: boolean): unknown => {
    if (typeof value === 'string') {
      // A secret's name says what its value is: the whole value goes, unless it is a placeholder already.
      if (secret && value !== '' && !PLACEHOLDER.test(value)) {
        replaced.add('named')
        return '<redacted>'
      }
      return text(value)
    }
    if (typeof value === 'number' || typeof value === 'bigint') {
      if (!secret) return value
      replaced.add('named')
      return '<redacted>'
    }
    if (Array.isArray(value)) return value.map((item) => walk(item, secret))
    if (value !== null && typeof value === 'object') {
      const out: Record<string, unknown> = {}
      // defineProperty: a key "__proto__" (JSON.parse makes it an own key) stays a key, not a prototype.
      for (const [k, item] of Object.entries(value)) Object.defineProperty(out, text(k), { value: walk(item, secret || SECRET_NAME.test(k)), enumerable: true, writable: true, configurable: true })
      return out
    }
    return value
  }
  return { redact: (value) => walk(value, false), replaced }
}

/**
 * The values of this process's environment whose names say they are secrets (`ANTHROPIC_API_KEY`,
 * `GITHUB_TOKEN`, ...): an agent on the same machine often has them too, and a tool's output may print
 * them. At most `max`, of 8 characters or more.
 */
export function secretEnv(env: NodeJS.ProcessEnv, max = 32): Record<string, string> {
  const out: Record<string, string> = {}
  let n = 0
  for (const [name, value] of Object.entries(env)) {
    if (n >= max) break
    if (value === undefined || value.length < 8 || value.length > 4096 || !SECRET_NAME.test(name)) continue
    out[name] = value
    n += 1
  }
  return out
}
