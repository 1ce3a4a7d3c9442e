/** The `hookd` program: runs the command its arguments name and exits with its status. */
import { main } from './main.js'

process.exitCode = await main(process.argv.slice(2))
