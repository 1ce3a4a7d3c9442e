// Rewrites http:// URLs in tool arguments to https://, for any argument named `url`.
module.exports = {
  beforeToolExecute: function (ctx, call) {
    const url = call.arguments.url
    if (typeof url !== 'string' || !url.startsWith('http://')) return
    return { arguments: { ...call.arguments, url: 'https://' + url.slice('http://'.length) } }
  },
}
