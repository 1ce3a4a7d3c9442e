/**
 * `hookd serve --capture DIR` and its bounds: one folder, one bounded sink (src/testing/capture-sink.ts)
 * shared by the gRPC sessions' tap (capture-tap.ts) and the front door's capture (front-door-capture.ts).
 */
import { resolve } from 'node:path'
import { inert } from '../../protocol/text.js'
import type { StreamTap } from '../../sidecar/grpc/session-stream.js'
import { CaptureSink, DEFAULT_CAPTURE_LIMITS } from '../../testing/capture-sink.js'
import { captureTap } from '../../testing/capture-tap.js'
import { FrontDoorCapture } from '../../testing/front-door-capture.js'
import { UsageError, positiveInt } from '../common/args.js'
import type { CliIo } from '../common/io.js'

const MIB = 1024 * 1024

export const CAPTURE_FLAGS = {
  capture: { type: 'string' },
  'capture-max-files': { type: 'string' },
  'capture-max-mb': { type: 'string' },
} as const

export const CAPTURE_HELP = `  --capture DIR            write every point call of every gRPC session, and every event an agent
                           posts to the HTTP front door with each point call it made, to DIR as
                           ready-to-edit \`hookd test\` cases (DIR/AGENT/ROUTE/ for the front door's):
                           payload or raw event, what the hooks read, the answer it got. Env values,
                           the HTTP token and what looks like a credential are redacted (docs/agents.md,
                           "Recording real traffic"); files 0600 in folders 0700 (not with --tenants)
  --capture-max-files N    case files --capture writes at most; later ones are counted, not written
                           (default: ${DEFAULT_CAPTURE_LIMITS.maxFiles})
  --capture-max-mb N       megabytes --capture writes at most (default: ${DEFAULT_CAPTURE_LIMITS.maxBytes / MIB})`

export interface CaptureValues {
  capture?: string | undefined
  'capture-max-files'?: string | undefined
  'capture-max-mb'?: string | undefined
}

export interface Capturing {
  tap: () => StreamTap
  door: FrontDoorCapture
  /** Waits for the writes under way and says what was not written. */
  close(): Promise<void>
}

/** The capture the flags ask for; undefined without --capture. */
export function captureSettings(values: CaptureValues, io: CliIo): Capturing | undefined {
  const maxFiles = positiveInt('capture-max-files', values['capture-max-files'])
  const maxMb = positiveInt('capture-max-mb', values['capture-max-mb'])
  if (values.capture === undefined) {
    if (maxFiles !== undefined || maxMb !== undefined) throw new UsageError('--capture-max-files and --capture-max-mb apply to --capture DIR')
    return undefined
  }
  if (values.capture === '') throw new UsageError('--capture needs a folder, e.g. --capture captured')
  const sink = new CaptureSink(resolve(io.cwd, values.capture), (line) => void io.stderr.write(`hookd: ${inert(line)}\n`), {
    ...(maxFiles !== undefined ? { maxFiles } : {}),
    ...(maxMb !== undefined ? { maxBytes: maxMb * MIB } : {}),
  })
  return { tap: captureTap(sink, io.stderr), door: new FrontDoorCapture(sink), close: () => sink.close() }
}
