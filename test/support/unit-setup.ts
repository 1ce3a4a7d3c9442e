/**
 * Before `npm run test:unit` (vitest.unit.config.ts): the whole suite's temp folder (a tmpfs when
 * there is one) and per-user state folder, so that no in-memory test writes to the user's own; none of
 * global-setup.ts's build, which the in-memory tests do not need.
 */
import { runFolders } from './global-setup.js'

export default function setup(): () => void {
  return runFolders()
}
