/**
 * The file capability calls that must be refused, with the reason the hook reads and who refuses: the
 * sidecar's policy (lexical: `..`, absolute paths) or the host's default handlers (where symbolic links
 * lead). The same table runs through the real sandbox (test/integration/capabilities/capabilities.test.ts)
 * and through the Session stream in memory (test/unit/session/session-stream-capabilities.test.ts); the
 * workdir each builds holds `escape-file`, `escape-dir` and `dangling`, links that lead out of it.
 */

/** [capability, args, the refusal's reason, who refuses] */
export const FILE_REFUSALS: ReadonlyArray<[string, unknown[], string, 'sidecar' | 'host']> = [
  ['file.read', ['../escape.txt'], 'the path leads outside the workdir', 'sidecar'],
  ['file.read', ['sub/../../escape.txt'], 'the path leads outside the workdir', 'sidecar'],
  ['file.write', ['..', 'x'], 'the path leads outside the workdir', 'sidecar'],
  ['file.read', ['/etc/hostname'], 'absolute paths are refused; use a path relative to the workdir', 'sidecar'],
  ['file.exists', ['/'], 'absolute paths are refused; use a path relative to the workdir', 'sidecar'],
  ['file.read', ['escape-file'], 'the path leads outside the workdir through a symbolic link', 'host'],
  ['file.read', ['escape-dir/secret.txt'], 'the path leads outside the workdir through a symbolic link', 'host'],
  ['file.list', ['escape-dir'], 'the path leads outside the workdir through a symbolic link', 'host'],
  ['file.exists', ['escape-file'], 'the path leads outside the workdir through a symbolic link', 'host'],
  ['file.write', ['escape-dir/planted.txt', 'x'], 'the path leads outside the workdir through a symbolic link', 'host'],
  ['file.write', ['dangling', 'x'], 'the path leads outside the workdir through a symbolic link', 'host'],
]
