/**
 * A hook's name: its folder's name (letters, digits, ".", "_", "-", not starting with a dot or a
 * dash). The hooks folder reads folders by it, a session declares hooks by it, and the agents' routes
 * (/AGENT/guard,audit) list them by it.
 */
export const HOOK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/
