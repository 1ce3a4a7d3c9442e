/**
 * `hookd test --watch`: calls back once a hooks folder has been quiet for a moment after a change (an
 * editor's save is several events; a run per event would be wasted). node_modules and .git are not
 * watched: there are too many files, and an install also changes package.json, which is.
 */
import { watch } from 'chokidar'

/** Quiet time after the last event before the callback. */
const QUIET_MS = 250

/** Starts watching `folder`; resolves once it is watched, with the function that stops it. */
export async function watchChanges(folder: string, onChange: (path: string) => void): Promise<() => Promise<void>> {
  const fsw = watch(folder, {
    ignoreInitial: true,
    ignorePermissionErrors: true,
    ignored: (path: string) => /(^|[\\/])(node_modules|\.git)([\\/]|$)/.test(path),
  })
  await new Promise<void>((resolve, reject) => {
    fsw.once('ready', resolve)
    fsw.once('error', reject)
  })
  let timer: NodeJS.Timeout | undefined
  fsw.on('all', (_event, path) => {
    clearTimeout(timer)
    timer = setTimeout(() => onChange(path), QUIET_MS)
  })
  return async () => {
    clearTimeout(timer)
    await fsw.close()
  }
}
