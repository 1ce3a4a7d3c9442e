// @ts-check
// egress-allowlist, a starter rule of hookd: refuses web fetches and `curl`/`wget` commands to hosts
// that are not on the allowlist in hook.json (`example.com` is that host alone, `*.example.com` its
// subdomains). Its cases are in tests/ (run them: hookd test).
//
// What it sees: web_fetch's URL, and the URLs, proxies and options of every curl and wget in a shell
// command (in pipes, substitutions and `sh -c '...'`; long options abbreviated as wget allows), and
// any proxy the line sets (`export https_proxy=...`). A URL it cannot read as the client would (a
// `$VAR` in it, a percent-encoded or non-ASCII host, a curl glob) is refused, and so are the options
// and settings that send a request somewhere the URL does not say (`--resolve`, `--connect-to`, `-K`
// config files, wget's `-e` and `-i`, CURL_HOME, WGETRC). What it cannot see: where an allowed host
// redirects to (`curl -L`; wget follows redirects by default), any other program that talks to the
// network (git, ssh, nc, pip, npm, a script), a proxy or a ~/.curlrc set before the agent started, or
// a name that DNS points somewhere you did not expect. It is a rule for an agent's ordinary requests,
// not a network wall: for that, run the agent where the network itself allows only these hosts.
const { commandsOf, programOf } = require('./lib/commands.js')

/** @typedef {{ hosts: string[], schemes: string[] }} Config */
/** @typedef {import('./lib/shell.js').Word} Word */
/** @typedef {{ allow: false, reason: string }} Refusal */

/** @type {import('hookd-sandbox/hook').Hook<Config>} */
const hook = {
  beforeToolExecute(ctx, call) {
    const policy = { hosts: (ctx.config.hosts ?? []).map(cleanHost), schemes: (ctx.config.schemes ?? ['http', 'https']).map((s) => s.toLowerCase()) }
    if (call.name === 'web_fetch') return checkUrl(policy, String(call.arguments.url ?? ''), 'the fetch')
    if (call.name !== 'shell') return
    const read = commandsOf(String(call.arguments.command ?? ''))
    if (read.problem) return { allow: false, reason: `this rule could not read the whole command (${read.problem}), so it is refused; run it in smaller steps` }
    for (const { command } of read.commands) {
      // A proxy or a client config set anywhere in the line (`export https_proxy=...; curl ...`).
      for (const w of command.words) {
        const proxy = /^((?:https?|ftp|all)_proxy)=(.*)$/is.exec(w.text)
        if (proxy) {
          const refused = checkTarget(policy, w, proxy[2] ?? '', `the proxy ${proxy[1]}`)
          if (refused) return refused
        }
        const config = /^(CURL_HOME|WGETRC|XDG_CONFIG_HOME)=/.exec(w.text)
        if (config) return { allow: false, reason: `${config[1]} makes curl or wget read a config file this rule cannot see (it can name a proxy or more URLs), so the command is refused` }
      }
      const p = programOf(command)
      const tool = p.name === undefined ? undefined : CLIENTS[p.name]
      if (!tool || !Object.hasOwn(CLIENTS, /** @type {string} */ (p.name))) continue
      const refused = checkClient(policy, tool, /** @type {string} */ (p.name), p.args)
      if (refused) return refused
    }
  },
}

module.exports = hook

/**
 * @typedef {{ hosts: string[], schemes: string[] }} Policy
 * @typedef {{ values: string, long: Set<string>, hosts: Set<string>, refused: Record<string, string> }} Client
 */

/** curl's and wget's options: the letters and long names that take a value, those whose value is a host, those refused. */
/** @type {Record<string, Client>} */
const CLIENTS = {
  curl: {
    values: 'AbcCdDeEFHKmoPQrTtuUwXxyYz',
    long: new Set(
      (
        'abstract-unix-socket alt-svc aws-sigv4 cacert capath cert cert-type ciphers config connect-timeout connect-to continue-at cookie cookie-jar ' +
        'create-file-mode crlfile curves data data-ascii data-binary data-raw data-urlencode delegation dns-interface dns-ipv4-addr dns-ipv6-addr ' +
        'dns-servers doh-url dump-header ech egd-file engine etag-compare etag-save expect100-timeout form form-string ftp-account ' +
        'ftp-alternative-to-user ftp-method ftp-port ftp-ssl-ccc-mode happy-eyeballs-timeout-ms haproxy-clientip header hostpubmd5 hostpubsha256 ' +
        'hsts interface ip-tos ipfs-gateway json keepalive-time key key-type krb libcurl limit-rate local-port login-options mail-auth mail-from ' +
        'mail-rcpt max-filesize max-redirs max-time netrc-file noproxy oauth2-bearer output output-dir parallel-max pass pinnedpubkey preproxy ' +
        'proto proto-default proto-redir proxy proxy-cacert proxy-capath proxy-cert proxy-cert-type proxy-ciphers proxy-crlfile proxy-header ' +
        'proxy-key proxy-key-type proxy-pass proxy-pinnedpubkey proxy-service-name proxy-tls13-ciphers proxy-tlsauthtype proxy-tlspassword ' +
        'proxy-tlsuser proxy-user pubkey quote random-file range rate referer request request-target resolve retry retry-delay retry-max-time ' +
        'sasl-authzid service-name socks4 socks4a socks5 socks5-gssapi-service socks5-hostname speed-limit speed-time stderr telnet-option ' +
        'tftp-blksize time-cond tls-max tls13-ciphers tlsauthtype tlspassword tlsuser trace trace-ascii trace-config unix-socket upload-file url ' +
        'url-query user user-agent variable write-out'
      )
        .split(' ')
        .map((o) => `--${o}`),
    ),
    hosts: new Set(['-x', '--proxy', '--preproxy', '--socks4', '--socks4a', '--socks5', '--socks5-hostname', '--doh-url', '--url']),
    refused: {
      '--resolve': 'can send the request for one host to another address',
      '--connect-to': 'can send the request for one host to another',
      '-K': 'reads more options and URLs from a file this rule cannot see',
      '--config': 'reads more options and URLs from a file this rule cannot see',
      '--variable': "sets variables that --expand-* options put into URLs this rule cannot see",
      '--proto-default': 'changes the scheme of URLs written without one',
    },
  },
  wget: {
    values: 'OoaiBetTwQPlARDXIU',
    long: new Set(
      (
        'output-document output-file append-output input-file base execute tries timeout dns-timeout connect-timeout read-timeout wait waitretry ' +
        'quota bind-address limit-rate directory-prefix level accept reject domains exclude-domains include-directories exclude-directories ' +
        'user-agent user password header referer post-data post-file body-data body-file method load-cookies save-cookies certificate private-key ' +
        'ca-certificate ca-directory http-user http-password proxy-user proxy-password default-page cut-dirs restrict-file-names progress ' +
        'local-encoding remote-encoding config rejected-log ftp-user ftp-password secure-protocol ciphers crl-file pinnedpubkey random-file egd-file ' +
        'hsts-file warc-file warc-header warc-max-size accept-regex reject-regex regex-type prefer-family report-speed'
      )
        .split(' ')
        .map((o) => `--${o}`),
    ),
    hosts: new Set(),
    refused: {
      '-i': 'reads the URLs from a file this rule cannot see',
      '--input-file': 'reads the URLs from a file this rule cannot see',
      '-e': 'runs wgetrc commands, which can set a proxy',
      '--execute': 'runs wgetrc commands, which can set a proxy',
      '--config': 'reads a wgetrc file, which can set a proxy',
    },
  },
}

/** Checks one curl or wget command's URLs, proxies and options. */
function checkClient(/** @type {Policy} */ policy, /** @type {Client} */ tool, /** @type {string} */ name, /** @type {Word[]} */ args) {
  let options = true
  for (let i = 0; i < args.length; i++) {
    const w = /** @type {Word} */ (args[i])
    const t = w.text
    if (options && t === '--') {
      options = false
      continue
    }
    if (options && t.startsWith('--')) {
      const eq = t.indexOf('=')
      const option = longOption(tool, eq < 0 ? t : t.slice(0, eq))
      if (Object.hasOwn(tool.refused, option) || option.startsWith('--expand-')) {
        return { allow: false, reason: `${name}'s ${option} ${tool.refused[option] ?? 'puts variables into URLs this rule cannot see'}, so this rule refuses it; write the request out with its URL` }
      }
      const takes = tool.long.has(option)
      const value = eq >= 0 ? t.slice(eq + 1) : takes ? args[i + 1]?.text : undefined
      if (takes && eq < 0) i += 1
      if (tool.hosts.has(option) && value !== undefined) {
        const refused = checkTarget(policy, eq >= 0 ? w : args[i], value, option === '--url' ? 'the request' : `the ${option} proxy`)
        if (refused) return refused
      }
      continue
    }
    if (options && t.startsWith('-') && t.length > 1) {
      const letters = t.slice(1)
      for (let k = 0; k < letters.length; k++) {
        const letter = /** @type {string} */ (letters[k])
        const option = `-${letter}`
        if (Object.hasOwn(tool.refused, option)) {
          return { allow: false, reason: `${name}'s ${option} ${tool.refused[option]}, so this rule refuses it; write the request out with its URL` }
        }
        if (!tool.values.includes(letter)) continue
        const attached = letters.slice(k + 1)
        const value = attached !== '' ? attached : args[i + 1]?.text
        if (attached === '') i += 1
        if (tool.hosts.has(option) && value !== undefined) {
          const refused = checkTarget(policy, attached !== '' ? w : args[i], value, 'the proxy')
          if (refused) return refused
        }
        break
      }
      continue
    }
    const refused = checkTarget(policy, w, t, 'the request')
    if (refused) return refused
  }
  return undefined
}

/**
 * A long option as the client reads it: wget (and curl before 7.x) take any unambiguous prefix of a
 * long option (`--exec` is `--execute`). A prefix of several known options that takes in a refused
 * one is read as the refused one; the client itself refuses an ambiguous prefix, so nothing runs.
 */
function longOption(/** @type {Client} */ tool, /** @type {string} */ option) {
  const known = [...tool.long, ...tool.hosts, ...Object.keys(tool.refused)]
  if (known.includes(option) || option.startsWith('--expand-') || option === '--') return option
  const matches = [...new Set(known.filter((o) => o.startsWith(option)))]
  return matches.find((o) => Object.hasOwn(tool.refused, o)) ?? (matches.length === 1 ? /** @type {string} */ (matches[0]) : option)
}

/** Checks a URL the shell passes: refused when the shell builds part of it as the command runs. */
function checkTarget(/** @type {Policy} */ policy, /** @type {Word | undefined} */ word, /** @type {string} */ url, /** @type {string} */ what) {
  if (word && !word.literal) {
    return { allow: false, reason: `this rule cannot tell where '${url}' goes (the shell fills part of it in when the command runs), so ${what} is refused; write the URL out in full` }
  }
  return checkUrl(policy, url, what)
}

/** @returns {Refusal | undefined} */
function checkUrl(/** @type {Policy} */ policy, /** @type {string} */ url, /** @type {string} */ what) {
  const read = hostOf(url)
  if (read.scheme !== undefined && !policy.schemes.includes(read.scheme)) {
    return { allow: false, reason: `'${url}' uses ${read.scheme}:, and this rule allows only ${policy.schemes.map((s) => `${s}:`).join(', ')}, so ${what} is refused` }
  }
  if (read.problem !== undefined || read.host === undefined) {
    return { allow: false, reason: `this rule cannot tell where '${url}' goes (${read.problem ?? 'no host'}), so ${what} is refused; write the URL out in full` }
  }
  const host = read.host
  if (policy.hosts.some((h) => h === host || (h.startsWith('*.') && host.endsWith(h.slice(1)) && host.length > h.length - 1))) return undefined
  return {
    allow: false,
    reason: `'${host}' is not on this rule's allowlist (${policy.hosts.join(', ') || 'no hosts'}), so ${what} is refused. If it should be reached, ask the user to add it to the hosts in the rule's hook.json`,
  }
}

/**
 * The scheme and host of a URL as curl, wget and browsers read it: the scheme defaults to http, the
 * host ends at the first `/`, `?` or `#` and starts after the last `@` before it. Anything this does
 * not read the same way for every client is a problem, not a host.
 * @returns {{ scheme?: string, host?: string, problem?: string }}
 */
function hostOf(/** @type {string} */ url) {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url)
  const scheme = m ? (m[1] ?? '').toLowerCase() : 'http'
  const rest = m ? url.slice(m[0].length) : url
  if (!m && /^[A-Za-z][A-Za-z0-9+.-]*:(?!\d)/.test(rest)) return { problem: 'it is no http URL' }
  const end = rest.search(/[/?#]/)
  const authority = end < 0 ? rest : rest.slice(0, end)
  if (authority.includes('\\')) return { scheme, problem: 'a backslash in the host, which clients read differently' }
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1)
  let host
  let port
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']')
    host = close < 0 ? hostPort : hostPort.slice(0, close + 1)
    if (!/^\[[0-9a-f:.]+\]$/i.test(host)) return { scheme, problem: 'a bracketed host that is not an IPv6 address (a curl glob?)' }
    port = hostPort.slice(host.length)
  } else {
    const colon = hostPort.indexOf(':')
    host = colon < 0 ? hostPort : hostPort.slice(0, colon)
    port = colon < 0 ? '' : hostPort.slice(colon)
  }
  if (port !== '' && !/^:\d*$/.test(port)) return { scheme, problem: 'a port that is not a number' }
  host = cleanHost(host)
  if (host === '') return { scheme, problem: 'no host' }
  if (!host.startsWith('[') && !/^[a-z0-9._-]+$/.test(host)) return { scheme, problem: 'a host with characters other than letters, digits, dots and hyphens (percent-encoded, non-ASCII, a glob)' }
  return { scheme, host }
}

/** A host as compared: lower case, without a trailing dot. */
function cleanHost(/** @type {string} */ host) {
  const lower = host.toLowerCase()
  return lower.endsWith('.') ? lower.slice(0, -1) : lower
}
