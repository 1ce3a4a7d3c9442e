/**
 * Codex's trust in hookd's entries, the step of its own that `hookd setup codex` and `hookd init codex
 * --trust` run (reached through its definition, codex-agent.ts; the TOML is trust-toml.ts).
 *
 * `hookd setup codex` records the entries it wrote in the user's hooks file as trusted in
 * `$CODEX_HOME/config.toml` (setting hookd up is the user's decision to trust them), and `--remove`
 * takes that out.
 *
 * `hookd init codex --trust`: records in the user's own `$CODEX_HOME/config.toml` that Codex may run
 * hookd's entries in a project's committed `.codex/hooks.json`, which Codex does only for a trusted
 * project and hooks whose hash is trusted (measured with Codex 0.169.0: a hook's trusted hash without
 * the project trusted runs nothing, and neither does the project trusted without the hash;
 * test/agents/codex-project-trust.test.ts).
 *
 * What it trusts, and what it refuses:
 * - Entries: only the ones `hookd init` writes for Codex, exactly (../settings/hookd-command.ts), each under the
 *   hash Codex computes for it where it is (its group's matcher included). Every other entry is
 *   refused and listed with why: its hash is never recorded, so Codex never runs it.
 * - The project: trusting it makes Codex read everything its `.codex/` folders hold (project-reads.ts),
 *   so init trusts it only when they hold nothing but this hooks.json. Otherwise it refuses, writing
 *   nothing, and lists what Codex would read. Where the user trusts the project already (their own
 *   `[projects."ROOT"]` in config.toml), hookd grants nothing new there, records the hashes, and says
 *   what Codex reads as it stands.
 */
import { join } from 'node:path'
import { HookdError } from '../../protocol/status.js'
import { quoted } from '../../protocol/text.js'
import type { AgentTrust, Placed } from '../agent-definition.js'
import type { Config, FoundEntry, SettingsFormat } from '../settings/settings-format.js'
import type { FileChange, SettingsPort } from '../settings/settings-port.js'
import { codexReadsOnTrust } from './project-reads.js'
import { type TrustedHook, projectTrustLevel, trustHash, withTrust } from './trust-toml.js'

/** What init does with each entry of the committed hooks file: trust it, or refuse it and why. */
export function trustChoices(config: Config, format: SettingsFormat): { trusted: TrustedHook[]; refused: Array<{ found: FoundEntry; why: string }> } {
  const trusted: TrustedHook[] = []
  const refused: Array<{ found: FoundEntry; why: string }> = []
  for (const found of format.entries(config)) {
    const { hookd, matcher } = found
    if (hookd?.by === 'init' && (matcher === undefined || typeof matcher === 'string')) {
      const entry = found.entry as Record<string, unknown>
      trusted.push({ event: found.event, position: found.position, command: String(entry.command), timeoutS: Number(entry.timeout), ...(matcher !== undefined ? { matcher } : {}) })
    } else {
      const why = !hookd
        ? 'not an entry hookd writes'
        : hookd.by === 'setup'
          ? "an entry 'hookd setup --dir' writes, which names one machine's paths: --trust trusts only the entries 'hookd init' writes"
          : 'in a group whose matcher is not text'
      refused.push({ found, why })
    }
  }
  return { trusted, refused }
}

const where = (f: { event: string; position: { group: number; handler: number } }): string => `${f.event}[${f.position.group}][${f.position.handler}]`

/**
 * The user's config.toml with Codex's trust for hookd's entries in `hooksFile` (of `project`) and the
 * project, or (`config` undefined) without it, and the lines to show: what was trusted, with each
 * hash, what was refused and why. A HookdError when the project cannot be trusted.
 */
async function initTrust(port: SettingsPort, project: string, hooksFile: string, config: Config | undefined, format: SettingsFormat): Promise<{ changes: FileChange[]; lines: string[]; warnings: string[] }> {
  const home = port.env.HOME
  const codexHome = port.env.CODEX_HOME || (home ? join(home, '.codex') : undefined)
  if (!codexHome) throw port.usage('Codex keeps its trust in $CODEX_HOME/config.toml (~/.codex), and neither CODEX_HOME nor HOME is set')
  const file = join(codexHome, 'config.toml')
  const base = port.env.CODEX_HOME || (home as string)
  const before = await port.readSettings(file, base)
  if (config === undefined) {
    return { changes: [{ file, base, before, after: withTrust(before, hooksFile, []).text }], lines: [`hookd's trust for ${hooksFile} taken out of ${file}`], warnings: [] }
  }
  // Codex keys a project's trust by its git root (measured).
  const inGit = await port.gitRoot(project)
  const root = inGit ?? project
  const { trusted, refused } = trustChoices(config, format)
  const lines: string[] = []
  const warnings: string[] = []
  for (const t of trusted) lines.push(`trusted ${where(t)}: ${quoted(t.command, 1000)} (${trustHash(t.event, t.command, t.timeoutS, t.matcher)})`)
  for (const r of refused) {
    const entry = r.found.entry as Record<string, unknown> | undefined
    const command = typeof entry?.command === 'string' ? quoted(entry.command) : 'an entry with no command'
    lines.push(`refused ${where(r.found)}: ${command}: ${r.why}`)
  }
  if (trusted.length) {
    const level = projectTrustLevel(before, hooksFile, root)
    const reads = await codexReadsOnTrust(port, root, hooksFile, inGit !== undefined)
    const listed = 'findings' in reads ? reads.findings.map((f) => `  ${f.path}: ${f.what}`) : []
    if (level === 'trusted') {
      if (listed.length) warnings.push(`you trust ${root} in ${file} already, so Codex reads these as they stand:\n${listed.join('\n')}`)
    } else if (level !== undefined) {
      warnings.push(`${file} marks ${root} as trust_level = "${level}": Codex runs none of its hooks until you mark it "trusted"`)
    } else if ('why' in reads) {
      throw new HookdError('failed-precondition', `hookd cannot tell what else Codex would read from ${root} once trusted: ${reads.why}. Nothing was written. Review its .codex folders, and trust it in Codex yourself if you accept them`)
    } else if (listed.length) {
      throw new HookdError(
        'failed-precondition',
        [
          `hookd does not trust ${root}: trusting a project makes Codex read what its .codex folders hold, and besides hookd's ${hooksFile} they hold:`,
          ...listed.slice(0, 20),
          ...(listed.length > 20 ? [`  ... and ${listed.length - 20} more`] : []),
          "Nothing was written. Remove these from the repository (or move what is yours into your own ~/.codex/config.toml) and run 'hookd init codex --trust' again;",
          "or, if you have reviewed them and accept what they run, trust the project in Codex yourself (its trust prompt, or 'codex exec --trust') and run 'hookd init codex --trust' again to trust hookd's entries",
        ].join('\n'),
      )
    }
  }
  const { text, projectAdded } = withTrust(before, hooksFile, trusted, trusted.length ? root : undefined)
  const hooks = `${trusted.length} hook${trusted.length > 1 ? 's' : ''}`
  lines.push(!trusted.length ? `no entry to trust: hookd's trust for ${hooksFile} taken out of ${file}` : projectAdded ? `${hooks} and the project ${root} recorded as trusted in ${file}` : `${hooks} recorded as trusted in ${file} (it says how Codex trusts the project ${root} already)`)
  return { changes: [{ file, base, before, after: text }], lines, warnings }
}

/**
 * `hookd setup codex`: the user's config.toml trusting hookd's entries as `placed` in `hooksFile` (none:
 * the trust taken out), and what to say. Nothing where neither $CODEX_HOME nor $HOME says where it is.
 */
async function setupTrust(port: SettingsPort, hooksFile: string, placed: readonly Placed[]): Promise<{ changes: FileChange[]; lines: string[] }> {
  const home = port.env.HOME
  const codexHome = port.env.CODEX_HOME || (home ? join(home, '.codex') : undefined)
  if (!codexHome) return { changes: [], lines: [] }
  const config = join(codexHome, 'config.toml')
  const base = port.env.CODEX_HOME || (home as string)
  const before = await port.readSettings(config, base)
  // Under the hash of the entry where it is, its group's matcher included (trust-toml.ts).
  const trusted = placed.map((p) => ({ event: p.event, position: p.position, command: String(p.entry.command), timeoutS: Number(p.entry.timeout), ...(p.matcher !== undefined ? { matcher: p.matcher } : {}) }))
  const { text, dropped } = withTrust(before, hooksFile, trusted)
  const lines: string[] = []
  if (trusted.length) lines.push(`${trusted.length} hook${trusted.length > 1 ? 's' : ''} recorded as trusted in ${config}`)
  for (const key of dropped) lines.push(`stale trust for ${key} taken out of ${config}`)
  return { changes: [{ file: config, base, before, after: text }], lines }
}

export const CODEX_TRUST: AgentTrust = {
  help: {
    setup: 'the entries are also recorded as trusted in $CODEX_HOME/config.toml, which Codex needs to run them',
    init: "record in your own $CODEX_HOME/config.toml that Codex may run the entries 'hookd init' wrote in the committed .codex/hooks.json (each listed with its hash; any other entry is refused, and listed with why), and trust the project, which Codex needs to run a project's hooks at all. Refused when the project's .codex folders hold anything else Codex reads in a trusted project (config.toml, rules, ...): it lists them. Each user runs it once in their clone; without --hooks it reads the committed file as it is",
  },
  setup: setupTrust,
  moved: (file, events) => `other hooks of ${events.join(', ')} in ${file} moved; Codex trusts hooks by their place, so review them in Codex (/hooks) or they are skipped`,
  init: initTrust,
}
