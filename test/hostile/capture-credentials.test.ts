/**
 * What `hookd serve --capture` writes of an agent's event must hold no credential the redactor says it
 * catches (src/testing/credential-redactor.ts: an authorization value keeps its scheme and loses its
 * credential; a value under a name that says it is a secret goes whole). Each case is text an agent's
 * event carries (a Bash command, a tool's output, a config file it read), through the same redactor
 * every captured case passes through (capture.ts, agent-case.ts); each asserts the secret is gone.
 */
import { describe, expect, it } from 'vitest'
import { credentialRedactor } from '../../src/testing/credential-redactor.js'

const SECRET = '0a1b2c3d4e5f60718293a4b5c6d7e8f9'
const redact = (value: unknown): string => JSON.stringify(credentialRedactor([]).redact(value))

describe('an authorization header with a scheme other than Bearer or Basic', () => {
  it('a Token scheme (Django REST, Netlify, many APIs) loses its credential, not its scheme', () => {
    const out = redact({ command: `curl -H "Authorization: Token ${SECRET}" https://api.example/x` })
    // Got: `Authorization: <redacted> 0a1b...`: the scheme is taken for the value, the credential stays.
    expect(out).not.toContain(SECRET)
  })

  it('an ApiKey scheme loses its credential', () => {
    const out = redact({ output: `authorization: ApiKey ${SECRET}` })
    expect(out).not.toContain(SECRET)
  })

  it('the Bearer control: its credential goes', () => {
    expect(redact({ command: `curl -H "Authorization: Bearer ${SECRET}"` })).not.toContain(SECRET)
  })
})

describe('a value under a secret-named key that is not one string', () => {
  it('a list of secrets under "secrets" goes', () => {
    const out = redact({ tool_response: { file: { content: JSON.parse(`{"secrets": ["${SECRET}"]}`) } } })
    expect(out).not.toContain(SECRET)
  })

  it('a numeric PIN or key under "password" goes', () => {
    const out = redact({ tool_input: { password: 8_675_309_112_233 } })
    expect(out).not.toContain('8675309112233')
  })
})

describe('a secret given to a command-line flag that names it', () => {
  it.each([
    ['--password VALUE', `mysql -u root --password ${SECRET} db`],
    ['--token VALUE', `gh auth login --token ${SECRET}`],
    ['curl -u USER:PASSWORD', `curl -u admin:${SECRET} https://api.example/x`],
  ])('%s', (_what, command) => {
    expect(redact({ tool_input: { command } })).not.toContain(SECRET)
  })

  it('the NAME=value control: its value goes', () => {
    expect(redact({ tool_input: { command: `DB_PASSWORD=${SECRET} ./run` } })).not.toContain(SECRET)
  })
})
