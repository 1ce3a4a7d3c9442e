/**
 * `hookd setup` for an agent whose hooks are one script per event in a folder (Cline's): the folder's
 * files of the agent's events, read (as setup reads any file: no link on the way) into the flat
 * hooks.json shape its format merges (src/agents/settings/script-folder.ts), and the merged settings
 * turned back into the files to write or remove. A file of an event's name that hookd did not write
 * is another's: it is left as it is, and setup refuses to put hookd's script in its place.
 */
import { join } from 'node:path'
import type { AgentDefinition } from '../../agents/agent-definition.js'
import type { Config } from '../../agents/settings/settings-format.js'
import type { ScriptFolder } from '../../agents/settings/script-folder.js'
import { CommandError } from '../common/args.js'
import { type FileChange, readConfig } from './setup-files.js'

export interface ReadFolder {
  /** The folder's files as the format's settings text ('' when hookd's events have no file there). */
  text: string
  /** The files to write and remove for the merged settings. */
  changes(config: Config): FileChange[]
}

const isItem = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v)

/** The folder `folder` of `agent`'s scripts, read below `base`. */
export async function readScriptFolder(agent: AgentDefinition, scripts: ScriptFolder, folder: string, base: string): Promise<ReadFolder> {
  const format = agent.settings.format
  const files = new Map<string, { file: string; text: string }>()
  const hooks: Record<string, unknown[]> = {}
  for (const event of agent.dialect.events) {
    const file = join(folder, scripts.fileOf(event))
    const text = await readConfig(file, base)
    if (text === '') continue
    files.set(event, { file, text })
    const command = scripts.commandOf(text, event)
    const entry = command !== undefined ? format.entry(command, 1) : undefined
    hooks[event] = [entry !== undefined && format.isHookd(entry, event) ? entry : { file }]
  }
  return {
    text: Object.keys(hooks).length ? JSON.stringify({ hooks }) : '',
    changes(config) {
      const after = isItem(config.hooks) ? config.hooks : {}
      const changes: FileChange[] = []
      for (const event of agent.dialect.events) {
        const file = join(folder, scripts.fileOf(event))
        const was = files.get(event)
        const list = Array.isArray(after[event]) ? (after[event] as unknown[]) : []
        const ours = list.find((e) => format.isHookd(e, event))
        const another = list.some((e) => !format.isHookd(e, event))
        if (ours !== undefined && another) {
          throw new CommandError(`${file} is not a script hookd wrote, and ${agent.title} runs ${event} hooks from that name; rename it (${agent.title} runs ${scripts.fileOf(event)}.sh beside it too) and run setup again`)
        }
        if (ours !== undefined) {
          const command = (ours as Record<string, unknown>).command as string
          changes.push({ file, base, before: was?.text ?? '', after: scripts.script(command, event) })
        } else if (was !== undefined && !another) {
          changes.push({ file, base, before: was.text, after: '', remove: true })
        }
      }
      return changes
    },
  }
}
