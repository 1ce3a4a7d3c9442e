/**
 * The machine as an agent's own setup code sees it (src/agents/settings/settings-port.ts): files read
 * as setup reads them (setup-files.ts: no link on the way, no FIFO waited on), git as setup runs it
 * (safe-git.ts), and the command's usage error.
 */
import type { SettingsPort } from '../../agents/settings/settings-port.js'
import { readRegularFile } from '../../sidecar/hooks/read-regular-file.js'
import { UsageError } from '../common/args.js'
import type { CliIo } from '../common/io.js'
import { git, gitRoot } from './safe-git.js'
import { readConfig } from './setup-files.js'

export function settingsIo(io: CliIo): SettingsPort {
  return {
    env: io.env,
    readSettings: readConfig,
    readRegular: async (file, maxBytes, follow) => {
      const read = await readRegularFile(file, maxBytes, follow)
      return read.ok ? read.text : undefined
    },
    git,
    gitRoot,
    usage: (message) => new UsageError(message),
  }
}
