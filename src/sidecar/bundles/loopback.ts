/** Whether a URL's host is this machine's loopback (127.0.0.0/8, ::1, localhost): where plain HTTP is taken. */
import { isIP } from 'node:net'

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '')
  if (bare === 'localhost' || bare === '::1') return true
  return isIP(bare) === 4 && bare.startsWith('127.')
}
