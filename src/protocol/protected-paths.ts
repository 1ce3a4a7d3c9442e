/**
 * Where hooks never write, and where they never read: the one table of protected names and the rule
 * that matches a path against it. A file a hook writes is code if anything outside the sandbox later
 * runs it (git's hooks, an agent's settings, package scripts, the other hooks), so whatever a host's
 * policy allows, file capabilities refuse writes under these names; and hookd's own token and state
 * are not for hooks to read. docs/containment.md ("The agents' path") shows the same table
 * (test/unit/protected-paths.test.ts checks that the two agree).
 *
 * Enforced twice: by the sidecar's policy on the normalised path (src/sidecar/session/policy.ts), for
 * every session of every host, and by the host library's default file handlers on the real path,
 * after symbolic links (src/host/workdir-files.ts). Shared by both, so it imports nothing of hookd's.
 *
 * A name matches at any depth of the absolute path (a nested package's `package.json`, `sub/.git`,
 * a workdir that is itself inside `.git/`), and so does everything under it. Components are compared
 * the way the file systems hookd meets may treat two names as one: after Unicode NFKC and case
 * folding (macOS and Windows file systems ignore case), without the characters HFS+ ignores
 * (zero-width joiners and the like: `.g\u200cit` is `.git` there), without trailing dots and spaces
 * (Windows drops them) and without an NTFS stream suffix (`.git::$INDEX_ALLOCATION`). A name that
 * only looks alike elsewhere is refused too: refusing a write too many is the safe side.
 */
import { homedir } from 'node:os'
import { isAbsolute, join, resolve } from 'node:path'

/** What a protected name refuses: writes (`write`, `append`), or reads (`read`, `exists`, `list`) as well. */
export type Refuses = 'write' | 'read-write'

/** What a file capability needs: `file.write` and `file.append` write; the others read. */
export type FileNeed = 'read' | 'write'

export type ProtectedGroup = 'hookd' | 'version control' | 'agents and editors' | 'tools'

export interface ProtectedName {
  /** As written in the table: a trailing `/` for a folder (`.git/`), none for a file (`package.json`). */
  readonly name: string
  readonly refuses: Refuses
  /** Why, in a few words, shown in the refusal: "git runs hooks and reads its config from there". */
  readonly why: string
  readonly group: ProtectedGroup
}

const name = (group: ProtectedGroup, refuses: Refuses, entries: ReadonlyArray<readonly [string, string]>): ProtectedName[] =>
  entries.map(([n, why]) => ({ name: n, refuses, why, group }))

/** The table. Order matters only for which rule a refusal names when two match. */
export const PROTECTED_NAMES: readonly ProtectedName[] = [
  ...name('hookd', 'read-write', [['.hookd/', 'hookd keeps its HTTP token, sockets and state there']]),
  ...name('version control', 'write', [
    ['.git/', 'git runs hooks and reads its config from there'],
    ['.gitmodules', 'git clones the submodules it names'],
  ]),
  ...name('agents and editors', 'write', [
    ['.claude/', 'Claude Code runs the commands its settings name'],
  ]),
  // Reads too: a write is refused by `.claude/` above already.
  ...name('agents and editors', 'read-write', [['.claude/settings.local.json', 'Claude Code runs its hooks, and hookd setup writes the HTTP token there']]),
  ...name('agents and editors', 'write', [
    ['.mcp.json', 'Claude Code starts the MCP servers it names'],
    ['CLAUDE.md', 'Claude Code reads it as instructions'],
    ['CLAUDE.local.md', 'Claude Code reads it as instructions'],
    ['.codex/', 'Codex runs the hooks and MCP servers its config names'],
    ['AGENTS.md', 'Codex and other agents read it as instructions'],
    ['AGENTS.override.md', "Codex reads it as instructions in AGENTS.md's place"],
    ['.agents/', 'Codex lists the skills there to the model'],
    ['.gemini/', 'Gemini CLI runs the hooks and MCP servers its settings name'],
    ['GEMINI.md', 'Gemini CLI reads it as instructions'],
    ['.cursor/', 'Cursor runs the hooks and MCP servers it names'],
    ['.cursorrules', 'Cursor reads it as instructions'],
    ['.github/', 'GitHub runs its workflows, Copilot its hooks and instructions'],
    ['.vscode/', 'VS Code runs its tasks and reads its settings'],
    ['.idea/', 'JetBrains IDEs run its run configurations'],
    ['.devcontainer/', 'dev containers run the commands it names'],
    ['.opencode/', 'OpenCode loads its plugins and commands'],
    ['opencode.json', 'OpenCode loads the plugins (hookd setup opencode writes its own there) and runs the commands and MCP servers it names'],
    ['opencode.jsonc', 'OpenCode reads it as opencode.json'],
    ['.cline/', 'Cline runs the hook scripts of .cline/hooks/ (hookd setup cline writes its own there) and reads its skills and agents'],
    ['.clinerules', 'Cline reads its rules and runs its hooks (a folder or a file)'],
    ['.windsurf/', 'Windsurf reads its rules and workflows'],
    ['.windsurfrules', 'Windsurf reads it as instructions'],
    ['.roo/', 'Roo Code reads its rules and MCP servers'],
    ['.kiro/', 'Kiro runs its hooks'],
    ['.continue/', 'Continue runs the MCP servers it names'],
    ['.zed/', 'Zed runs its tasks'],
    ['.aider.conf.yml', 'aider runs the lint and test commands it names'],
  ]),
  ...name('tools', 'write', [
    ['.envrc', 'direnv runs it when a shell enters the folder'],
    ['mise.toml', 'mise runs its hooks and tasks when a shell enters the folder'],
    ['.mise.toml', 'mise runs its hooks and tasks when a shell enters the folder'],
    ['.husky/', 'husky runs git hooks from there'],
    ['.pre-commit-config.yaml', 'pre-commit runs the hooks it names'],
    ['lefthook.yml', 'lefthook runs the commands it names from git hooks'],
    ['.lefthook.yml', 'lefthook runs the commands it names from git hooks'],
    ['lefthook.yaml', 'lefthook runs the commands it names from git hooks'],
    ['.lefthook.yaml', 'lefthook runs the commands it names from git hooks'],
    ['package.json', 'npm runs its scripts on install and test'],
    ['.npmrc', 'npm runs what its settings name (node-options, script-shell)'],
    ['.yarnrc', 'yarn runs the yarn-path it names'],
    ['.yarnrc.yml', 'yarn runs the yarnPath and plugins it names'],
    ['.pnpmfile.cjs', 'pnpm runs it on install'],
    ['bunfig.toml', 'bun runs the preload scripts it names'],
    ['composer.json', 'composer runs its scripts on install and update'],
    ['pyproject.toml', 'pip runs the build backend it names on install'],
    ['setup.py', 'pip runs it on install'],
    ['.cargo/', 'cargo runs the wrappers and aliases its config names'],
  ]),
]

/**
 * An absolute folder or file hooks must not touch, wherever it is: the session's hooks folder, hookd's
 * state folders, the HTTP token's file. Given by the sidecar (or a host), not matched by name.
 */
export interface ProtectedRoot {
  readonly path: string
  readonly refuses: Refuses
  /** How the refusal names it: "the hooks folder", "hookd's HTTP token". */
  readonly what: string
  readonly why: string
  /** A file (named as it is) or a folder (everything under it). Default folder. */
  readonly file?: boolean | undefined
}

/** The hooks folder of a session: hooks may read it, never write it. */
export function hooksRoot(path: string): ProtectedRoot {
  return { path, refuses: 'write', what: 'the hooks folder', why: 'hookd serves hooks from there and reloads them when they change' }
}

/**
 * hookd's per-user folders: its state (`$HOOKD_STATE_DIR`, else `~/.local/state/hookd`) and its
 * configuration (`~/.config/hookd`, where `hookd setup` keeps tenants' tokens). `env` and `home` are
 * whose folders they are: the sidecar's own by default.
 */
export function hookdStateRoots(env: Readonly<Record<string, string | undefined>> = process.env, home: string | undefined = homedir()): ProtectedRoot[] {
  const roots: ProtectedRoot[] = []
  const why = 'hookd keeps its tokens and state there'
  const state = env.HOOKD_STATE_DIR && isAbsolute(env.HOOKD_STATE_DIR) ? resolve(env.HOOKD_STATE_DIR) : undefined
  if (state) roots.push({ path: state, refuses: 'read-write', what: "hookd's state folder", why })
  if (home && isAbsolute(home)) {
    if (!state) roots.push({ path: join(home, '.local', 'state', 'hookd'), refuses: 'read-write', what: "hookd's state folder", why })
    roots.push({ path: join(home, '.config', 'hookd'), refuses: 'read-write', what: "hookd's configuration folder", why })
  }
  return roots
}

/** The rule a path falls under, for one need. */
export interface Protection {
  /** How the refusal names what is protected: "under .git/", "package.json", "under the hooks folder /p/hooks/". */
  rule: string
  refuses: Refuses
  why: string
}

/** Characters some file systems ignore in names (HFS+ among them): never part of a compared name. */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu

/** One path component as the file systems hookd meets may see it: the form every comparison uses. */
export function foldName(component: string): string {
  const folded = component.normalize('NFKC').replace(IGNORABLE, '').toUpperCase().toLowerCase().normalize('NFKC')
  // An NTFS stream suffix (`name:stream`, `name::$DATA`), then trailing dots and spaces.
  return folded.replace(/:.*$/s, '').replace(/[. ]+$/, '')
}

/** A path's components, folded. Both separators count: a Windows host reads `\` as one. */
function folded(path: string): string[] {
  return path
    .split(/[\\/]+/)
    .filter((part) => part !== '' && part !== '.')
    .map(foldName)
}

const TABLE = PROTECTED_NAMES.map((entry) => ({ entry, parts: folded(entry.name) }))

function covers(refuses: Refuses, need: FileNeed): boolean {
  return need === 'write' || refuses === 'read-write'
}

function nameRule(entry: ProtectedName): string {
  return entry.name.endsWith('/') ? `under ${entry.name}` : entry.name
}

/**
 * The protection `path` falls under for `need`, or undefined when hooks may do that there. `path` is
 * absolute (normalised: no `..`) or relative to a folder the caller knows; names match at any depth,
 * roots only an absolute path. Names come first, so that both enforcements word one refusal alike
 * (the sidecar's lexical check knows no token file, the host's may).
 */
export function protectionOf(path: string, need: FileNeed, roots: readonly ProtectedRoot[] = []): Protection | undefined {
  const parts = folded(path)
  for (const { entry, parts: wanted } of TABLE) {
    if (!covers(entry.refuses, need)) continue
    for (let i = 0; i + wanted.length <= parts.length; i++) {
      if (wanted.every((p, j) => parts[i + j] === p)) return { rule: nameRule(entry), refuses: entry.refuses, why: entry.why }
    }
  }
  for (const root of roots) {
    if (!covers(root.refuses, need) || !isAbsolute(root.path) || !isAbsolute(path)) continue
    const rootParts = folded(root.path)
    if (rootParts.length > parts.length || !rootParts.every((p, i) => parts[i] === p)) continue
    const shown = root.path.replace(/\/+$/, '')
    return { rule: root.file ? `${root.what} ${shown}` : `under ${root.what} ${shown}/`, refuses: root.refuses, why: root.why }
  }
  return undefined
}

/**
 * The refusal's words after "ctx.file.write('x') refused: ": what hookd never lets hooks do, why, and
 * what to do instead.
 */
export function protectedReason(p: Protection, need: FileNeed): string {
  const verb = p.refuses === 'read-write' ? 'read or write' : 'write'
  const instead = need === 'write' ? 'write somewhere else in the project' : 'a hook that needs a secret gets it through ctx.env'
  return `hookd never lets hooks ${verb} ${p.rule} (${p.why}); ${instead}`
}
