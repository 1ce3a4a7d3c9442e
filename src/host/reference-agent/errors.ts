/**
 * The one error type of the agent, with a closed set of kinds, and every message about the model in
 * one table, so each says what went wrong and what to do about it.
 */
import * as sdk from '@anthropic-ai/sdk'

export type AgentErrorKind =
  | 'no-key'
  | 'auth'
  | 'permission'
  | 'model-not-found'
  | 'bad-request'
  | 'rate-limit'
  | 'overloaded'
  | 'server'
  | 'network'
  | 'timeout'
  | 'script'
  | 'max-turns'
  | 'interrupted'
  | 'internal'

export class AgentError extends Error {
  constructor(
    readonly kind: AgentErrorKind,
    message: string,
  ) {
    super(message)
    this.name = 'AgentError'
  }
}

export const NO_KEY_MESSAGE =
  'ANTHROPIC_API_KEY is not set. Set it to your Anthropic API key (export ANTHROPIC_API_KEY=sk-ant-...), ' +
  'and ANTHROPIC_BASE_URL too if you reach the API through a proxy; or replay a recorded run without a key: --model scripted:FILE'

/** What the API said, without the SDK's "401 {...}" JSON dump. */
function said(err: sdk.APIError): string {
  const body = err.error as { error?: { type?: unknown; message?: unknown } } | undefined
  const type = typeof body?.error?.type === 'string' ? body.error.type : undefined
  const message = typeof body?.error?.message === 'string' ? body.error.message : undefined
  const detail = [type, message].filter(Boolean).join(': ')
  return detail ? `${err.status} ${detail}` : `${err.status ?? 'no status'}${err.message ? ` ${err.message}` : ''}`
}

function causeOf(err: Error): string {
  let cause: unknown = err.cause
  let text = ''
  while (cause instanceof Error) {
    text = cause.message
    cause = cause.cause
  }
  return text || err.message
}

/** Turns whatever the SDK threw into an AgentError that tells the person at the terminal what to do. */
export function fromSdkError(err: unknown, context: { model: string; baseURL: string }): AgentError {
  if (err instanceof AgentError) return err
  if (err instanceof sdk.APIUserAbortError) return new AgentError('interrupted', 'interrupted while the model was answering')
  if (err instanceof sdk.APIConnectionTimeoutError) {
    return new AgentError('timeout', `the Anthropic API at ${context.baseURL} did not answer in time; check the network (or ANTHROPIC_BASE_URL) and run again`)
  }
  if (err instanceof sdk.APIConnectionError) {
    return new AgentError(
      'network',
      `cannot reach the Anthropic API at ${context.baseURL} (${causeOf(err)}); check the network connection, or ANTHROPIC_BASE_URL if you set it`,
    )
  }
  if (err instanceof sdk.AuthenticationError) {
    return new AgentError('auth', `the Anthropic API refused the key (${said(err)}); check that ANTHROPIC_API_KEY holds a valid, active API key`)
  }
  if (err instanceof sdk.PermissionDeniedError) {
    return new AgentError('permission', `the API key may not do this (${said(err)}); check the key's workspace and its access to model '${context.model}'`)
  }
  if (err instanceof sdk.NotFoundError) {
    return new AgentError('model-not-found', `the Anthropic API does not know model '${context.model}' (${said(err)}); pass a model name your key can use with --model`)
  }
  if (err instanceof sdk.RateLimitError) {
    const after = err.headers?.get('retry-after')
    return new AgentError(
      'rate-limit',
      `the Anthropic API is rate-limiting this key (${said(err)})${after ? `; it asks to wait ${after} s` : ''}; wait a little and run again, or raise the key's limits`,
    )
  }
  if (err instanceof sdk.APIError && (err.status === 529 || err.status === 503)) {
    return new AgentError('overloaded', `the Anthropic API is overloaded (${said(err)}); run again in a moment`)
  }
  if (err instanceof sdk.APIError && typeof err.status === 'number' && err.status >= 500) {
    return new AgentError('server', `the Anthropic API failed (${said(err)}); run again, it is usually temporary`)
  }
  if (err instanceof sdk.APIError && typeof err.status === 'number') {
    return new AgentError('bad-request', `the Anthropic API rejected the request (${said(err)})`)
  }
  if (err instanceof sdk.AnthropicError) return new AgentError('internal', `the Anthropic SDK failed: ${err.message}`)
  if (err instanceof Error && err.name === 'AbortError') return new AgentError('interrupted', 'interrupted')
  return new AgentError('internal', err instanceof Error ? err.message : String(err))
}
