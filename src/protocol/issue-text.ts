/**
 * What zod found wrong, as one line a user can act on: where (`tenants[2].limits.cpuMs`) and what. Every
 * place that validates outside input words its errors through these two functions.
 */

interface Issue {
  readonly path: readonly PropertyKey[]
  readonly message: string
}

/** `["tenants", 2, "limits"]` -> `tenants[2].limits`; '' for the top level. */
export function issuePath(path: readonly PropertyKey[]): string {
  let out = ''
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `${out ? '.' : ''}${String(part)}`
  return out
}

/**
 * The first issue, as "<subject>.<path>: <message>" (the subject alone when the path is empty, the path
 * alone when there is no subject, the message alone when there is neither).
 */
export function issueText(error: { readonly issues: readonly Issue[] }, subject = ''): string {
  const issue = error.issues[0]
  if (!issue) return `${subject || 'the value'}: invalid`
  const path = issuePath(issue.path)
  const where = subject && path ? (path.startsWith('[') ? `${subject}${path}` : `${subject}.${path}`) : subject || path
  return where ? `${where}: ${issue.message}` : issue.message
}
