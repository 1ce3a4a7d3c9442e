/** The hookd release, reported to hosts and to hooks as `ctx.system.hookdVersion`. */
export const HOOKD_VERSION = '0.1.0'

/** The version of proto/hookd/v1 this build speaks. */
export const PROTOCOL_VERSION = 1
