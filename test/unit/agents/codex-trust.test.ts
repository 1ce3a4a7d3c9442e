import { describe, expect, it } from 'vitest'
import { CODEX_TRUST } from '../../../src/agents/codex/trust.js'
import { trustHash, withTrust } from '../../../src/agents/codex/trust-toml.js'
import type { SettingsPort } from '../../../src/agents/settings/settings-port.js'

const hook = (event: string, command: string) => ({ event, position: { group: 0, handler: 0 }, command, timeoutS: 35 })

describe("Codex's trust in config.toml", () => {
  it("keeps one block per hooks file: a user's setup and a project's init do not undo each other", () => {
    const user = withTrust('model = "m"\n', '/home/u/.codex/hooks.json', [hook('PreToolUse', 'shim a')]).text
    const both = withTrust(user, '/p/.codex/hooks.json', [hook('PreToolUse', 'shim b')], '/p').text
    expect(both).toContain('[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]')
    expect(both).toContain(`[hooks.state."/p/.codex/hooks.json:pre_tool_use:0:0"]\ntrusted_hash = "${trustHash('PreToolUse', 'shim b', 35)}"`)
    expect(both).toContain('[projects."/p"]\ntrust_level = "trusted"')
    // Removing the project's leaves the user's.
    const removed = withTrust(both, '/p/.codex/hooks.json', []).text
    expect(removed).toBe(user)
  })

  it("regroups an older hookd's one block into blocks per file, and does not trust a project twice", () => {
    const old = [
      'model = "m"',
      '',
      '# hookd setup codex: the hooks it wrote, trusted (hookd setup codex --remove takes this block out)',
      '[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]',
      'trusted_hash = "sha256:abc"',
      '# hookd setup codex: end',
      '',
      '[projects."/p"]',
      'trust_level = "trusted"',
      '',
    ].join('\n')
    const next = withTrust(old, '/p/.codex/hooks.json', [hook('Stop', 'shim')], '/p').text
    expect(next).not.toContain('# hookd setup codex: end')
    expect(next).toContain('# hookd: the hooks in /home/u/.codex/hooks.json, trusted')
    expect(next).toContain('[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "sha256:abc"')
    expect(next.match(/\[projects\."\/p"\]/g)).toHaveLength(1)
  })

  it("setup trusts an entry in a group with a matcher under the hash that holds it, as Codex hashes it (a hash without it is skipped)", async () => {
    const port = { env: { HOME: '/home/u' }, readSettings: async () => '' } as unknown as SettingsPort
    const entry = { type: 'command', command: 'shim', timeout: 35 }
    const placed = [
      { event: 'PreToolUse', entry, matcher: 'Bash', position: { group: 0, handler: 0 } },
      { event: 'Stop', entry, position: { group: 0, handler: 0 } },
    ]
    const { changes } = await CODEX_TRUST.setup(port, '/home/u/.codex/hooks.json', placed)
    const after = changes[0]?.after ?? ''
    expect(after).toContain(`[hooks.state."/home/u/.codex/hooks.json:pre_tool_use:0:0"]\ntrusted_hash = "${trustHash('PreToolUse', 'shim', 35, 'Bash')}"`)
    expect(after).toContain(`[hooks.state."/home/u/.codex/hooks.json:stop:0:0"]\ntrusted_hash = "${trustHash('Stop', 'shim', 35)}"`)
    expect(trustHash('PreToolUse', 'shim', 35, 'Bash')).not.toBe(trustHash('PreToolUse', 'shim', 35))
  })
})
