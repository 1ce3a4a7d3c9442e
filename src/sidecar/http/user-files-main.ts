/**
 * The file helper's process: started by the front door as the agent's user (user-files.ts, through
 * `setpriv`), it serves that user's runs' file capabilities with the host library's own default
 * handlers (workdirFiles: confined to the run's pinned folder, protected paths refused by real path),
 * so that a hook reads and writes what the agent's user could, never what the sidecar's user could.
 * Frames on stdin and stdout (user-files-wire.ts); it ends when stdin does.
 */
import { CapabilityError, type FileHandlers, workdirFiles } from '../../host/capabilities.js'
import { type FileCall, type FromHelper, FrameReader, frame, toHelperWire } from './user-files-wire.js'

/** Handlers per run (each with its own write budget), the most recent first to stay. */
const MAX_RUNS = 256
const runs = new Map<number, FileHandlers>()

function handlersOf(call: FileCall): FileHandlers {
  let files = runs.get(call.run)
  if (files) {
    runs.delete(call.run)
  } else {
    files = workdirFiles(call.workdir, { pinned: call.pin, protectedRoots: call.roots })
    if (runs.size >= MAX_RUNS) runs.delete(runs.keys().next().value as number)
  }
  runs.set(call.run, files)
  return files
}

async function serve(call: FileCall): Promise<FromHelper> {
  const files = handlersOf(call)
  const text = Buffer.from(call.text ?? '', 'base64').toString('utf8')
  try {
    switch (call.op) {
      case 'read':
        return { kind: 'reply', id: call.id, ok: true, value: { text: Buffer.from(await files.read(call.path, call.origin), 'utf8').toString('base64') } }
      case 'write':
        await files.write(call.path, text, call.origin)
        return { kind: 'reply', id: call.id, ok: true, value: null }
      case 'append':
        await files.append(call.path, text, call.origin)
        return { kind: 'reply', id: call.id, ok: true, value: null }
      case 'exists':
        return { kind: 'reply', id: call.id, ok: true, value: await files.exists(call.path, call.origin) }
      case 'list':
        return { kind: 'reply', id: call.id, ok: true, value: await files.list(call.path, call.origin) }
    }
  } catch (err) {
    const code = err instanceof CapabilityError ? err.code : 'failed'
    return { kind: 'reply', id: call.id, ok: false, code, message: err instanceof Error ? err.message : String(err) }
  }
}

const reader = new FrameReader()
const send = (message: FromHelper): void => void process.stdout.write(frame(message))

process.stdin.on('data', (chunk: Buffer) => {
  let messages: unknown[]
  try {
    messages = reader.push(chunk)
  } catch (err) {
    process.stderr.write(`hookd file helper: ${(err as Error).message}\n`)
    process.exit(2)
  }
  for (const raw of messages) {
    const parsed = toHelperWire.safeParse(raw)
    if (!parsed.success) {
      process.stderr.write('hookd file helper: a message it does not understand\n')
      process.exit(2)
    }
    const message = parsed.data
    if (message.kind === 'forget') runs.delete(message.run)
    else void serve(message).then(send)
  }
})
process.stdin.on('end', () => process.exit(0))
send({ kind: 'ready' })
