/** A path below the hooks folder as the user sees it: "hooks/guard/index.ts", or "guard/index.ts" from inside it. */
export function shownPath(hooksShown: string, path: string): string {
  return hooksShown === '.' ? path : `${hooksShown}/${path}`
}
