/**
 * What Codex reads from a repository once the user trusts the project, besides the hooks.json hookd
 * trusts, so that `hookd init codex --trust` can refuse to trust a project that would hand Codex more
 * than hookd's entries.
 *
 * Codex (0.169.0, measured offline; openai/codex codex-rs/config/src/loader/mod.rs) keys a project's
 * trust by its git root and, in a trusted project, reads the `.codex/` folder of every folder from that
 * root down to where it runs as layers of its own config: `config.toml` (its settings, less a few keys
 * it ignores there such as `notify`: MCP servers it starts, `[hooks]`, sandbox and approval policy, the
 * shell's environment, ...), `hooks.json` (hooks, each still needing a trusted hash), and `rules/`
 * (exec policies: commands they allow run unasked). Untrusted, it reads none of them ("Project-local
 * config, hooks, and exec policies are disabled ... until the project is trusted, but skills still
 * load"). Measured (test/agents/codex-project-trust.test.ts): an MCP server named in
 * `sub/.codex/config.toml` starts when Codex runs in `sub/` of a trusted repository.
 *
 * So hookd trusts a project only when its `.codex/` folders hold nothing but the hooks.json it trusts
 * (an empty or comment-only config.toml aside): every other entry is listed, with what Codex does
 * with it. The folders are found on disk (the root's and the hooks file's) and through git (every
 * `.codex` path git tracks or would add), so that one deep in the tree is not missed.
 */
import { lstat, readdir } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import type { SettingsPort } from '../settings/settings-port.js'

/** One thing in a project's `.codex/` folders that Codex would read once the project is trusted. */
export interface Finding {
  /** Its path (a folder's ends in /). */
  path: string
  /** What Codex does with it there. */
  what: string
}

const MAX_CONFIG_BYTES = 1024 * 1024

/** The tables and keys a config.toml sets (its first few), or none when it holds only comments. */
async function configKeys(port: SettingsPort, file: string): Promise<string[] | undefined> {
  const text = await port.readRegular(file, MAX_CONFIG_BYTES)
  if (text === undefined) return undefined
  const keys: string[] = []
  let inTable = false
  for (const raw of text.split('\n')) {
    const line = raw.trim()
    if (line === '' || line.startsWith('#')) continue
    const table = /^\[\[?\s*([^\]]{1,80}?)\s*\]\]?/.exec(line)
    if (table) {
      inTable = true
      keys.push(table[1] as string)
    } else if (!inTable) {
      keys.push(/^([^=\s]{1,80})\s*=/.exec(line)?.[1] ?? line.slice(0, 40))
    }
  }
  return [...new Set(keys)]
}

async function describe(port: SettingsPort, path: string, isFolder: boolean, name: string): Promise<string | undefined> {
  if (name === 'config.toml' && !isFolder) {
    const keys = await configKeys(port, path)
    if (keys && keys.length === 0) return undefined
    const shown = keys ? ` (here: ${keys.slice(0, 6).join(', ')}${keys.length > 6 ? ', ...' : ''})` : ''
    return `Codex applies it as the project's settings${shown}: MCP servers it starts, hooks, sandbox and approval policy, the shell's environment`
  }
  if (name === 'rules' || name.endsWith('.rules')) return 'exec-policy rules: the commands they allow run without asking'
  if (name === 'hooks.json') return "another hooks file: its hooks run once trusted in Codex's /hooks, with the project's trust hookd would give"
  return "in a trusted project Codex reads what its .codex folders hold; hookd trusts a project only when they hold nothing but hookd's hooks.json"
}

/** The entries of the `.codex` folder `folder` other than `hooksFile`, with what each is. */
async function onDisk(port: SettingsPort, folder: string, hooksFile: string): Promise<Finding[]> {
  const info = await lstat(folder).catch(() => undefined)
  if (!info) return []
  if (info.isSymbolicLink()) return [{ path: folder, what: 'a link: Codex reads the folder it names as the project\'s .codex' }]
  if (!info.isDirectory()) return []
  const found: Finding[] = []
  for (const entry of await readdir(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name)
    if (path === hooksFile && entry.isFile()) continue
    const what = await describe(port, path, entry.isDirectory(), entry.name)
    if (what) found.push({ path: `${path}${entry.isDirectory() ? sep : ''}`, what })
  }
  return found
}

/**
 * What Codex would read from the project at `root` (its git root, when `inGit`) once trusted, other
 * than `hooksFile`; or why that cannot be told.
 */
export async function codexReadsOnTrust(port: SettingsPort, root: string, hooksFile: string, inGit: boolean): Promise<{ findings: Finding[] } | { why: string }> {
  const folders = [...new Set([join(root, '.codex'), dirname(hooksFile)])]
  const findings: Finding[] = []
  for (const folder of folders) findings.push(...(await onDisk(port, folder, hooksFile)))
  if (!inGit) return { findings }
  // Every .codex path git tracks, or would add, anywhere in the tree.
  const listed = await port.git(root, ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ':(glob)**/.codex', ':(glob)**/.codex/**'], 4 * 1024 * 1024)
  if (!listed.ok) return { why: `git ls-files in ${root} failed (${listed.why})` }
  const deeper = new Map<string, string[]>()
  for (const path of listed.stdout.split('\0')) {
    if (path === '') continue
    const parts = path.split('/')
    const folder = join(root, ...parts.slice(0, parts.indexOf('.codex') + 1))
    if (folders.includes(folder)) continue
    const names = deeper.get(folder) ?? deeper.set(folder, []).get(folder)
    names?.push(parts.slice(parts.indexOf('.codex') + 1).join('/'))
  }
  for (const [folder, names] of deeper) {
    const shown = names.filter(Boolean)
    findings.push({
      path: `${folder}${sep}`,
      what: `Codex reads it as the project's .codex when it runs in ${relative(root, dirname(folder))}${shown.length ? ` (it holds ${shown.slice(0, 3).join(', ')}${shown.length > 3 ? ', ...' : ''})` : ''}`,
    })
  }
  return { findings }
}
