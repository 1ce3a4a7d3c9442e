/*
 * hookd-hook, compiled: the same command shim as bin/hookd-hook, for the common case of a front door
 * on this machine. An agent with command hooks starts a process per hook call; on a small VM a bare
 * process costs a few milliseconds to start, bash about 5 more and curl 25-30 more, so the shim that
 * `hookd setup` writes is this program when the install could compile it (scripts/build-shim.sh).
 *
 * It speaks plain HTTP/1.0 to a loopback address only (127.0.0.0/8, localhost, [::1]), where a
 * connection cannot hang on the network. Any other URL is handed, untouched, to bin/hookd-hook, which
 * uses curl. Everything it prints and every exit code are bin/hookd-hook's: the same tests run both
 * (test/agents/command-agents.test.ts). Fail closed in the agent's own way unless --fail-open.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* An event or an answer over this is refused rather than held: the front door's own limit is lower. */
#define MAX_BYTES (64u << 20)
#define MAX_TOKEN 4096

/* SHA-256 (FIPS 180-4) and HMAC (RFC 2104): the proofs of src/sidecar/http/request-proof.ts. The
 * token never crosses the connection; hookd proves its answer with the same key, so whatever else
 * listens on the port while hookd is down can neither learn the token nor answer in its place. */
struct sha256 {
  uint32_t h[8];
  uint64_t bytes;
  unsigned char block[64];
  size_t used;
};

static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
    0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
    0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
    0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
    0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
    0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_block(struct sha256 *s, const unsigned char *p) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++) w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5], g = s->h[6], h = s->h[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  s->h[0] += a, s->h[1] += b, s->h[2] += c, s->h[3] += d, s->h[4] += e, s->h[5] += f, s->h[6] += g, s->h[7] += h;
}

static void sha256_init(struct sha256 *s) {
  static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(s->h, h0, sizeof h0);
  s->bytes = 0;
  s->used = 0;
}

static void sha256_update(struct sha256 *s, const void *data, size_t len) {
  const unsigned char *p = data;
  s->bytes += len;
  while (len > 0) {
    size_t take = 64 - s->used < len ? 64 - s->used : len;
    memcpy(s->block + s->used, p, take);
    s->used += take;
    p += take;
    len -= take;
    if (s->used == 64) {
      sha256_block(s, s->block);
      s->used = 0;
    }
  }
}

static void sha256_final(struct sha256 *s, unsigned char out[32]) {
  uint64_t bits = s->bytes * 8;
  unsigned char pad = 0x80, zero = 0, len[8];
  sha256_update(s, &pad, 1);
  while (s->used != 56) sha256_update(s, &zero, 1);
  for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
  sha256_update(s, len, 8);
  for (int i = 0; i < 8; i++) out[4 * i] = (unsigned char)(s->h[i] >> 24), out[4 * i + 1] = (unsigned char)(s->h[i] >> 16), out[4 * i + 2] = (unsigned char)(s->h[i] >> 8), out[4 * i + 3] = (unsigned char)s->h[i];
}

static void hex(const unsigned char *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) out[2 * i] = digits[bytes[i] >> 4], out[2 * i + 1] = digits[bytes[i] & 15];
  out[2 * n] = '\0';
}

/* The hex SHA-256 of data. */
static void sha256_hex(const void *data, size_t len, char out[65]) {
  struct sha256 s;
  unsigned char digest[32];
  sha256_init(&s);
  sha256_update(&s, data, len);
  sha256_final(&s, digest);
  hex(digest, 32, out);
}

/* HMAC-SHA256 of text under a 32-byte key, as hex. */
static void hmac_hex(const unsigned char key[32], const char *text, char out[65]) {
  unsigned char pad[64], inner[32], outer[32];
  struct sha256 s;
  for (int i = 0; i < 64; i++) pad[i] = (unsigned char)((i < 32 ? key[i] : 0) ^ 0x36);
  sha256_init(&s);
  sha256_update(&s, pad, 64);
  sha256_update(&s, text, strlen(text));
  sha256_final(&s, inner);
  for (int i = 0; i < 64; i++) pad[i] = (unsigned char)((i < 32 ? key[i] : 0) ^ 0x5c);
  sha256_init(&s);
  sha256_update(&s, pad, 64);
  sha256_update(&s, inner, 32);
  sha256_final(&s, outer);
  hex(outer, 32, out);
}

static int fail_open = 0;
static int consumed = 0;
static char agent[64] = "";

static void usage(void) {
  fputs("usage: hookd-hook [--fail-open] [--token-file FILE] [--timeout SECONDS] URL\n"
        "       hookd-hook [--fail-open] [--project DIR] [--hooks-dir DIR] [--timeout SECONDS] /AGENT/HOOKS\n"
        "  e.g. hookd-hook --token-file .hookd/http-token http://127.0.0.1:7390/codex/guard < event.json\n"
        "       hookd-hook --hooks-dir hooks /claude-code/guard < event.json   (the user's hookd: 'hookd up')\n",
        stderr);
}

/* A header value as the front door reads it: bytes outside a plain set percent-encoded (a path may
 * hold spaces or UTF-8; a header line may not hold a newline). */
static void percent_encode(const char *in, char *out, size_t cap) {
  static const char digits[] = "0123456789ABCDEF";
  size_t o = 0;
  for (const unsigned char *c = (const unsigned char *)in; *c && o + 4 < cap; c++) {
    if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '/' || *c == '.' || *c == '_' || *c == '-' || *c == '~') out[o++] = (char)*c;
    else out[o++] = '%', out[o++] = digits[*c >> 4], out[o++] = digits[*c & 15];
  }
  out[o] = '\0';
}

/* An agent that names no project folder (Codex) may run hooks in a folder below the project, where it
 * reads the project's settings from above (Codex: .codex/hooks.json at the git root): the project is
 * the nearest folder, from the working one up, that holds the agent's marker file. Returns 1 with
 * `dir` cut to that folder, or 0 when no folder above holds one (`dir` is then left cut short: the
 * caller keeps the working folder). */
static int marked_project(char *dir, const char *marker) {
  char probe[2 * PATH_MAX];
  for (;;) {
    struct stat st;
    if ((size_t)snprintf(probe, sizeof probe, "%s/%s", dir, marker) < sizeof probe && stat(probe, &st) == 0) return 1;
    char *cut = strrchr(dir, '/');
    if (!cut || cut == dir) return 0;
    *cut = '\0';
  }
}

static void write_all(int fd, const char *data, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, data, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    data += n;
    len -= (size_t)n;
  }
}

/* A JSON string's content: the reason is hookd-hook's own text, which may quote a URL or a path. */
static void json_string(FILE *out, const char *s) {
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
    else if (c < 0x20) fputc(' ', out);
    else fputc(c, out);
  }
}

/* Blanks what a terminal could act on, the set hookd's own src/protocol/text.ts keeps off one: C0
 * controls and DEL, and in UTF-8 the C1 controls (U+0080-009F), the line and paragraph separators
 * (U+2028-2029) and the bidirectional overrides and isolates (U+202A-202E, U+2066-2069). */
static void blank_controls(char *text) {
  unsigned char *c = (unsigned char *)text;
  for (; *c; c++) {
    if (*c < 0x20 || *c == 0x7f) {
      *c = ' ';
    } else if (c[0] == 0xc2 && c[1] >= 0x80 && c[1] <= 0x9f) {
      c[0] = c[1] = ' ';
      c++;
    } else if (c[0] == 0xe2 && ((c[1] == 0x80 && c[2] >= 0xa8 && c[2] <= 0xae) || (c[1] == 0x81 && c[2] >= 0xa6 && c[2] <= 0xa9))) {
      c[0] = c[1] = c[2] = ' ';
      c += 2;
    }
  }
}

/* hookd:agents begin: written from src/agents/registry.ts by 'npm run shim-forms'; test/unit/shim-forms.test.ts checks it. */

/* The agent's own variable naming the project it runs in, where it sets one for its hooks. */
static const char *project_variable(void) {
  if (strcmp(agent, "claude-code") == 0) return "CLAUDE_PROJECT_DIR";
  if (strcmp(agent, "gemini") == 0) return "GEMINI_PROJECT_DIR";
  if (strcmp(agent, "copilot") == 0) return "COPILOT_PROJECT_DIR";
  if (strcmp(agent, "cursor") == 0) return "CURSOR_PROJECT_DIR";
  return NULL;
}

/* For an agent that names no project: the file whose nearest folder up from the working one is the project's. */
static const char *project_marker(void) {
  if (strcmp(agent, "codex") == 0) return ".codex/hooks.json";
  return NULL;
}

/* Says `reason` the way the agent reads a refusal, and returns the exit code that goes with it. */
static int agent_refusal(const char *reason) {
  /* Copilot blocks on any non-zero exit too, but then the model reads only `hook exited with code 2`; preToolUse reads permissionDecision, permissionRequest behavior. */
  if (strcmp(agent, "copilot") == 0) {
    fputs("{\"permissionDecision\":\"deny\",\"permissionDecisionReason\":\"", stdout);
    json_string(stdout, reason);
    fputs("\",\"behavior\":\"deny\",\"message\":\"", stdout);
    json_string(stdout, reason);
    fputs("\"}\n", stdout);
    return 0;
  }
  /* Cursor documents exit 2 as a refusal and `permission` as the answer (not measured). */
  if (strcmp(agent, "cursor") == 0) {
    fputs("{\"continue\":false,\"permission\":\"deny\",\"user_message\":\"", stdout);
    json_string(stdout, reason);
    fputs("\",\"agent_message\":\"", stdout);
    json_string(stdout, reason);
    fputs("\"}\n", stdout);
    return 2;
  }
  /* Cline ignores the exit code and runs the tool unless stdout cancels it (cancel stops the task). */
  if (strcmp(agent, "cline") == 0) {
    fputs("{\"cancel\":true,\"errorMessage\":\"", stdout);
    json_string(stdout, reason);
    fputs("\"}\n", stdout);
    return 0;
  }
  fprintf(stderr, "%s\n", reason);
  return 2;
}
/* hookd:agents end */

/* Refuses the call the way this agent reads a refusal (docs/agents.md), or lets it through with
 * --fail-open. Never returns. */
static void refuse(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void refuse(const char *fmt, ...) {
  char why[4096];
  va_list args;
  va_start(args, fmt);
  vsnprintf(why, sizeof why, fmt, args);
  va_end(args);
  /* It may quote hookd's answer: nothing in it may drive the agent's terminal. */
  blank_controls(why);
  if (!consumed) {
    /* An agent may still be writing the event: read it to the end, so its write never fails. */
    char sink[65536];
    while (read(0, sink, sizeof sink) > 0) {}
  }
  if (fail_open) {
    fprintf(stderr, "hookd-hook: %s; letting the call through (--fail-open)\n", why);
    exit(0);
  }
  char reason[4400];
  snprintf(reason, sizeof reason, "hookd-hook: %s; the call is refused (hookd-hook fails closed)", why);
  exit(agent_refusal(reason));
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Milliseconds left before the deadline, for poll; 0 when it has passed. */
static int left_ms(double deadline) {
  double left = deadline - now();
  if (left <= 0) return 0;
  return left > 2e9 / 1000 ? 2000000000 : (int)(left * 1000) + 1;
}

/* Waits until fd is ready for `events`; 0 when the deadline passed first. */
static int wait_for(int fd, short events, double deadline) {
  for (;;) {
    struct pollfd p = {.fd = fd, .events = events};
    int ms = left_ms(deadline);
    if (ms == 0) return 0;
    int r = poll(&p, 1, ms);
    if (r > 0) return 1;
    if (r == 0) return 0;
    if (errno != EINTR) return 0;
  }
}

struct buffer {
  char *data;
  size_t len, cap;
};

static int grow(struct buffer *b, size_t want) {
  if (b->cap - b->len >= want) return 1;
  size_t cap = b->cap ? b->cap : 65536;
  while (cap - b->len < want) cap *= 2;
  char *data = realloc(b->data, cap);
  if (!data) return 0;
  b->data = data;
  b->cap = cap;
  return 1;
}

int main(int argc, char **argv) {
  const char *token_file = getenv("HOOKD_TOKEN_FILE");
  if (token_file && !*token_file) token_file = NULL;
  const char *timeout_text = "30";
  const char *url = NULL;
  const char *project = NULL;
  const char *hooks_dir = "hooks";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--fail-open") == 0) fail_open = 1;
    else if (strcmp(a, "--fail-closed") == 0) fail_open = 0;
    else if (strcmp(a, "--token-file") == 0 || strcmp(a, "--timeout") == 0 || strcmp(a, "--project") == 0 || strcmp(a, "--hooks-dir") == 0) {
      if (i + 1 >= argc) {
        fprintf(stderr, "hookd-hook: %s needs a value\n", a);
        usage();
        return 2;
      }
      if (strcmp(a, "--timeout") == 0) timeout_text = argv[++i];
      else if (strcmp(a, "--project") == 0) project = argv[++i];
      else if (strcmp(a, "--hooks-dir") == 0) hooks_dir = argv[++i];
      else token_file = argv[++i];
    } else if (strncmp(a, "--token-file=", 13) == 0) token_file = a + 13;
    else if (strncmp(a, "--timeout=", 10) == 0) timeout_text = a + 10;
    else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage();
      return 0;
    } else if (a[0] == '-') {
      fprintf(stderr, "hookd-hook: unknown option %s\n", a);
      usage();
      return 2;
    } else url = a;
  }

  /* The agent is the route's first path segment: it says how to refuse when hookd cannot answer. */
  const char *rest = url ? strstr(url, "://") : NULL;
  rest = rest ? rest + 3 : (url ? url : "");
  const char *slash = strchr(rest, '/');
  const char *seg = slash ? slash + 1 : rest;
  size_t seg_len = strcspn(seg, "/");
  if (seg_len < sizeof agent) {
    memcpy(agent, seg, seg_len);
    agent[seg_len] = '\0';
  }

  if (!url || !*url) refuse("no URL: pass the front door route, e.g. http://127.0.0.1:7390/codex/guard");

  /* A route is one line of printable text: it goes into the request line as it is. */
  for (const char *c = url; *c; c++) {
    if ((unsigned char)*c <= 0x20 || *c == 0x7f) refuse("the URL holds a space or a control character; write http://HOST:PORT/AGENT/HOOKS");
  }

  /* Plain http to a loopback address, with a route of two segments at least; else the script. A bare
   * route (/AGENT/HOOKS) goes to the user's own hookd ('hookd up'), on the socket in the user's state
   * folder, which only the user can enter. */
  int family = 0;
  unsigned char addr[16];
  char host[256] = "";
  int port = 80;
  const char *path = NULL;
  char socket_path[sizeof(((struct sockaddr_un *)0)->sun_path)] = "";
  char state_token[PATH_MAX + 16] = "";
  char project_header[6 * PATH_MAX + 64] = "";
  if (url[0] == '/') {
    char state[PATH_MAX];
    const char *given = getenv("HOOKD_STATE_DIR");
    const char *home = getenv("HOME");
    if (given && *given) snprintf(state, sizeof state, "%s", given);
    else if (home && *home) snprintf(state, sizeof state, "%s/.local/state/hookd", home);
    else refuse("neither HOOKD_STATE_DIR nor HOME is set: cannot find the user's hookd");
    struct stat folder;
    if (lstat(state, &folder) != 0) refuse("hookd is not set up for this user (no %s): run 'npx hookd-sandbox up'", state);
    if (!S_ISDIR(folder.st_mode) || folder.st_uid != geteuid() || (folder.st_mode & 077))
      refuse("%s is not this user's hookd state folder (it must be a folder of yours, mode 0700); remove it and run 'npx hookd-sandbox up'", state);
    if ((size_t)snprintf(socket_path, sizeof socket_path, "%s/front.sock", state) >= sizeof socket_path)
      refuse("the socket path %s/front.sock is too long for a Unix socket; set HOOKD_STATE_DIR to a shorter folder", state);
    if ((size_t)snprintf(state_token, sizeof state_token, "%s/http-token", state) >= sizeof state_token) refuse("the state folder's path is too long");
    if (!token_file) token_file = state_token;
    const char *variable = project_variable();
    const char *from_env = variable ? getenv(variable) : NULL;
    static char cwd[PATH_MAX];
    if ((!project || !*project) && !(from_env && *from_env) && getcwd(cwd, sizeof cwd)) {
      char top[PATH_MAX];
      strcpy(top, cwd);
      const char *marker = project_marker();
      if (marker && marked_project(top, marker) && strcmp(top, "/") != 0 && strchr(top, '/')) strcpy(cwd, top);
    }
    if (!project || !*project) project = from_env && *from_env ? from_env : cwd;
    if (!project || project[0] != '/') refuse("cannot tell which project this is: pass --project DIR");
    char encoded_project[3 * PATH_MAX], encoded_hooks[3 * PATH_MAX];
    percent_encode(project, encoded_project, sizeof encoded_project);
    percent_encode(hooks_dir, encoded_hooks, sizeof encoded_hooks);
    snprintf(project_header, sizeof project_header, "X-Hookd-Project: %s\r\nX-Hookd-Hooks: %s\r\n", encoded_project, encoded_hooks);
    family = AF_UNIX;
    path = url;
    strcpy(host, "localhost");
  } else if (strncmp(url, "http://", 7) == 0) {
    const char *hp = url + 7;
    const char *end = strchr(hp, '/');
    size_t hp_len = end ? (size_t)(end - hp) : strlen(hp);
    if (end && hp_len > 0 && hp_len < sizeof host) {
      memcpy(host, hp, hp_len);
      host[hp_len] = '\0';
      path = end;
      char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
      char name[256];
      if (colon) {
        char *colon_at = host[0] == '[' ? colon + 1 : colon;
        char *digits_end;
        long p = strtol(colon_at + 1, &digits_end, 10);
        if (*digits_end || p <= 0 || p > 65535) path = NULL;
        port = (int)p;
        size_t name_len = (size_t)(colon_at - host);
        memcpy(name, host, name_len);
        name[name_len] = '\0';
      } else {
        strcpy(name, host);
      }
      if (strcmp(name, "localhost") == 0) strcpy(name, "127.0.0.1");
      if (strcmp(name, "[::1]") == 0) {
        family = AF_INET6;
        inet_pton(AF_INET6, "::1", addr);
      } else if (strncmp(name, "127.", 4) == 0 && inet_pton(AF_INET, name, addr) == 1) {
        family = AF_INET;
      }
    }
  }
  /* A route names the agent and the hooks: http://HOST:PORT/AGENT/HOOKS. */
  const char *second = path ? strchr(path + 1, '/') : NULL;
  if (!family || !path || !second || !second[1]) {
    if (strstr(url, "://") && strchr(rest, '/') && strchr(strchr(rest, '/') + 1, '/')) {
      /* https, another host, or something this program does not parse: the script decides. */
      char self[PATH_MAX];
      ssize_t n = readlink("/proc/self/exe", self, sizeof self - 32);
      if (n > 0) {
        self[n] = '\0';
        char *cut = strrchr(self, '/');
        if (cut) {
          *cut = '\0';
          cut = strrchr(self, '/');
          if (cut) {
            strcpy(cut, "/bin/hookd-hook");
            argv[0] = self;
            execv(self, argv);
          }
        }
      }
      refuse("cannot start bin/hookd-hook for %s (%s)", url, strerror(errno));
    }
    refuse("'%s' is not a front door route; write http://HOST:PORT/AGENT/HOOKS", url);
  }

  char *timeout_end;
  double timeout = strtod(timeout_text, &timeout_end);
  if (*timeout_end || !(timeout > 0) || timeout > 86400) {
    fprintf(stderr, "hookd-hook: --timeout needs a number of seconds, not '%s'\n", timeout_text);
    usage();
    return 2;
  }

  char token[MAX_TOKEN + 1];
  size_t token_len = 0;
  if (token_file) {
    /* Non-blocking, and a regular file only: a FIFO nobody writes to would hold the shim until the
     * agent's own hook timeout, which lets the call through. */
    int fd = open(token_file, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    /* hookd's rule for its state files: opened without following a link (a link could point the shim
     * at another secret of the user's, to prove requests with). */
    if (fd < 0 && errno == ELOOP) refuse("the token file %s is a symbolic link; name the file itself (hookd's state files are never links)", token_file);
    struct stat info;
    if (fd >= 0 && (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))) {
      close(fd);
      refuse("cannot read the token file %s (not a regular file)", token_file);
    }
    /* hookd's own rule for its state files: this user's, closed to everyone else. */
    if (fd >= 0 && info.st_uid != geteuid()) {
      close(fd);
      refuse("the token file %s belongs to another user (uid %u); use the token file hookd made for you", token_file, (unsigned)info.st_uid);
    }
    if (fd >= 0 && (info.st_mode & 077)) {
      close(fd);
      refuse("the token file %s can be read by other users (mode %03o); run 'chmod 600 %s'", token_file, (unsigned)(info.st_mode & 0777), token_file);
    }
    ssize_t n = fd < 0 ? -1 : read(fd, token, MAX_TOKEN);
    if (fd >= 0) close(fd);
    /* The first line, as bin/hookd-hook's `read` takes it. */
    char *newline = n > 0 ? memchr(token, '\n', (size_t)n) : NULL;
    token_len = newline ? (size_t)(newline - token) : n > 0 ? (size_t)n : 0;
    token[token_len] = '\0';
    if (n < 0 || token_len == 0) refuse("cannot read the token file %s", token_file);
  } else {
    const char *env = getenv("HOOKD_TOKEN");
    if (!env || !*env)
      refuse("no token: pass --token-file FILE (hookd serve --http keeps it in .hookd/http-token), or set HOOKD_TOKEN_FILE or HOOKD_TOKEN");
    token_len = strlen(env);
    if (token_len > MAX_TOKEN) refuse("the token in HOOKD_TOKEN is longer than %d bytes", MAX_TOKEN);
    memcpy(token, env, token_len + 1);
  }
  for (size_t i = 0; i < token_len; i++) {
    /* The token goes into a header line: a control character would end it early. */
    if ((unsigned char)token[i] < 0x20 || token[i] == 0x7f) refuse("the token holds a control character; write it on one line");
  }

  /* The whole event is read before connecting: the front door wants its length up front. */
  struct buffer event = {0};
  for (;;) {
    if (!grow(&event, 65536)) refuse("out of memory reading the event");
    ssize_t n = read(0, event.data + event.len, event.cap - event.len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    event.len += (size_t)n;
    if (event.len > MAX_BYTES) refuse("the event is over %u MiB", MAX_BYTES >> 20);
  }
  consumed = 1;

  double deadline = now() + timeout;
  signal(SIGPIPE, SIG_IGN);
  int sock = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (sock < 0) refuse("cannot reach hookd at %s (%s)", url, strerror(errno));
  int r;
  if (family == AF_UNIX) {
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    memcpy(sa.sun_path, socket_path, strlen(socket_path) + 1);
    r = connect(sock, (struct sockaddr *)&sa, sizeof sa);
    if (r < 0 && (errno == ENOENT || errno == ECONNREFUSED)) refuse("hookd is not running for this user (nothing answers on %s): start it with 'npx hookd-sandbox up'", socket_path);
  } else if (family == AF_INET) {
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((unsigned short)port)};
    memcpy(&sa.sin_addr, addr, 4);
    r = connect(sock, (struct sockaddr *)&sa, sizeof sa);
  } else {
    struct sockaddr_in6 sa = {.sin6_family = AF_INET6, .sin6_port = htons((unsigned short)port)};
    memcpy(&sa.sin6_addr, addr, 16);
    r = connect(sock, (struct sockaddr *)&sa, sizeof sa);
  }
  if (r < 0 && errno == EINPROGRESS) {
    if (!wait_for(sock, POLLOUT, deadline)) refuse("cannot reach hookd at %s (no answer within %s s)", url, timeout_text);
    int err = 0;
    socklen_t err_len = sizeof err;
    getsockopt(sock, SOL_SOCKET, SO_ERROR, &err, &err_len);
    errno = err;
    r = err ? -1 : 0;
  }
  if (r < 0) {
    if (errno == ECONNREFUSED) refuse("cannot reach hookd at %s (connection refused: is 'hookd serve --http' running?)", url);
    refuse("cannot reach hookd at %s (%s)", url, strerror(errno));
  }

  /* HTTP/1.0: the answer is never chunked and ends when hookd closes the connection. The route is as
   * long as the agent's settings make it: the request head is sized to it. */
  /* The token proves the request without crossing the connection (hookd-hmac, request-proof.ts), and the
   * answer must prove it came from hookd with the same key. */
  unsigned char key[32];
  {
    struct sha256 k;
    sha256_init(&k);
    sha256_update(&k, token, token_len);
    sha256_final(&k, key);
    memset(token, 0, sizeof token);
  }
  unsigned char nonce_bytes[16];
  if (getrandom(nonce_bytes, sizeof nonce_bytes, 0) != (ssize_t)sizeof nonce_bytes) refuse("cannot make a nonce (%s)", strerror(errno));
  char nonce[33], body_hash[65], mac[65];
  hex(nonce_bytes, sizeof nonce_bytes, nonce);
  sha256_hex(event.data ? event.data : "", event.len, body_hash);
  long ts = (long)time(NULL);
  size_t signed_len = strlen(path) + 256;
  char *to_sign = malloc(signed_len);
  if (!to_sign) refuse("out of memory writing the request");
  snprintf(to_sign, signed_len, "hookd-request/1\n%ld\n%s\nPOST\n%s\n%s", ts, nonce, path, body_hash);
  hmac_hex(key, to_sign, mac);
  static const char head_format[] =
      "POST %s HTTP/1.0\r\nHost: %s\r\nAuthorization: hookd-hmac ts=%ld,nonce=%s,body=%s,mac=%s\r\n%sContent-Type: application/json\r\nContent-Length: %zu\r\n\r\n";
  int head_len = snprintf(NULL, 0, head_format, path, host, ts, nonce, body_hash, mac, project_header, event.len);
  char *head = head_len < 0 ? NULL : malloc((size_t)head_len + 1);
  if (!head) refuse("out of memory writing the request");
  snprintf(head, (size_t)head_len + 1, head_format, path, host, ts, nonce, body_hash, mac, project_header, event.len);
  const char *parts[2] = {head, event.data ? event.data : ""};
  size_t sizes[2] = {(size_t)head_len, event.len};
  /* hookd may answer before it has read the whole body (a refusal: a full byte budget) and close the
   * connection: then the send fails, and the answer already sent is read all the same. */
  int cut_short = 0;
  for (int part = 0; part < 2 && !cut_short; part++) {
    size_t sent = 0;
    while (sent < sizes[part]) {
      ssize_t n = send(sock, parts[part] + sent, sizes[part] - sent, MSG_NOSIGNAL);
      if (n > 0) sent += (size_t)n;
      else if (n < 0 && errno == EINTR) continue;
      else if (n < 0 && errno == EAGAIN) {
        if (!wait_for(sock, POLLOUT, deadline)) refuse("cannot reach hookd at %s (no answer within %s s)", url, timeout_text);
      } else {
        cut_short = 1;
        break;
      }
    }
  }

  struct buffer answer = {0};
  for (;;) {
    if (!grow(&answer, 65536)) refuse("out of memory reading hookd's answer");
    ssize_t n = recv(sock, answer.data + answer.len, answer.cap - answer.len - 1, 0);
    if (n > 0) {
      answer.len += (size_t)n;
      if (answer.len > MAX_BYTES) refuse("hookd's answer is over %u MiB", MAX_BYTES >> 20);
    } else if (n == 0) break;
    else if (errno == EINTR) continue;
    else if (errno == EAGAIN) {
      if (!wait_for(sock, POLLIN, deadline)) refuse("cannot reach hookd at %s (no answer within %s s)", url, timeout_text);
    } else if (errno == ECONNRESET && answer.len > 0) break;
    else if (cut_short) refuse("cannot reach hookd at %s (it closed the connection)", url);
    else refuse("cannot reach hookd at %s (%s)", url, strerror(errno));
  }
  if (cut_short && answer.len == 0) refuse("cannot reach hookd at %s (it closed the connection)", url);
  close(sock);
  answer.data[answer.len] = '\0';

  /* "HTTP/1.1 200 OK", headers, a blank line, the body. */
  int status = 0;
  char *body = strstr(answer.data, "\r\n\r\n");
  if (strncmp(answer.data, "HTTP/1.", 7) != 0 || !body || sscanf(answer.data + 8, " %3d", &status) != 1)
    refuse("cannot reach hookd at %s (the answer is not HTTP)", url);
  *body = '\0';
  body += 4;
  size_t body_len = answer.len - (size_t)(body - answer.data);
  char proof[65] = "";
  for (char *line = strstr(answer.data, "\r\n"); line; line = strstr(line + 2, "\r\n")) {
    if (strncasecmp(line + 2, "content-length:", 15) == 0) {
      unsigned long declared = strtoul(line + 17, NULL, 10);
      if (declared > body_len) refuse("cannot reach hookd at %s (the answer was cut short)", url);
      body_len = declared;
      body[body_len] = '\0';
    } else if (strncasecmp(line + 2, "x-hookd-proof:", 14) == 0) {
      const char *v = line + 16;
      while (*v == ' ' || *v == '\t') v++;
      size_t n = strspn(v, "0123456789abcdef");
      if (n == 64) {
        memcpy(proof, v, 64);
        proof[64] = '\0';
      }
    }
  }
  /* The answer is hookd's only when it proves it: HMAC(key, "hookd-answer/1\n" nonce "\n" status "\n"
   * hex(SHA-256(body))). A stranger's 204, {} or allow would otherwise let the call through. */
  char answer_hash[65], expected[65], answer_text[160];
  sha256_hex(body, body_len, answer_hash);
  snprintf(answer_text, sizeof answer_text, "hookd-answer/1\n%s\n%d\n%s", nonce, status, answer_hash);
  hmac_hex(key, answer_text, expected);
  unsigned char differ = proof[0] ? 0 : 1;
  for (int i = 0; i < 64; i++) differ |= (unsigned char)(proof[i] ^ expected[i]);
  if (differ) {
    if (status == 401) refuse("hookd at %s refused the token (HTTP 401): check the --token-file this entry names (the sidecar's is .hookd/http-token where it runs)", url);
    refuse("the answer from %s does not prove it came from hookd (HTTP %d): something other than hookd may be listening on that port", url, status);
  }
  if (status == 200) {
    write_all(1, body, body_len);
    write_all(1, "\n", 1);
    return 0;
  }
  if (status == 204) return 0;
  /* hookd's errors are {"error": "..."}: show the message itself when it is there. */
  char *message = body;
  char *error = strstr(body, "\"error\":\"");
  if (error) {
    message = error + 9;
    char *last = strrchr(message, '"');
    if (last) *last = '\0';
    char *to = message;
    for (char *from = message; *from; from++) {
      if (from[0] == '\\' && from[1] == '"') from++;
      *to++ = *from;
    }
    *to = '\0';
  }
  refuse("hookd answered HTTP %d: %s", status, message);
}
