/**
 * Posting an agent's event to the front door as its http hook does: JSON with the bearer token.
 * The answer's body is parsed, or undefined for an empty one (a 204: no opinion).
 */
export async function postEvent(url: string, token: string, path: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, json: text === '' ? undefined : JSON.parse(text) }
}
