# syntax=docker/dockerfile:1
# hookd as a container image. Two stages: `build` compiles isolated-vm and the TypeScript, then drops
# the dev dependencies; `runtime` holds only what runs, as an unprivileged numeric user.
#
#   docker build -t hookd:0.1.0 .
#   docker run --rm -v "$PWD/hooks:/opt/hookd/hooks:ro" -v hookd-run:/run/hookd hookd:0.1.0
#
# test/deploy/dockerfile.test.ts checks these rules and runs the runtime stage's command here, without
# Docker; docs/operations.md explains the choices. The base images are pinned to the exact Node
# release the test suite runs on (node --version), on Debian 12: isolated-vm is a native addon, so
# the build and runtime stages must share Node's ABI and glibc. Pin the digests too when you mirror
# the images into your own registry (`node:20.20.2-bookworm@sha256:...`).

FROM node:20.20.2-bookworm AS build
# isolated-vm 5.0.4 has no prebuilt binary for Node 20: npm ci compiles it with node-gyp.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# Dependencies first, so that a source edit does not rebuild isolated-vm.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src src
COPY proto proto
RUN npm run build
# The runtime needs the production dependencies only (isolated-vm stays, already built).
RUN npm prune --omit=dev --no-audit --no-fund

FROM node:20.20.2-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /opt/hookd
# package.json makes dist/ and bin/ ES modules ("type": "module") and carries the version.
COPY --from=build /src/package.json package.json
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY bin bin
COPY proto proto
COPY types types
# The example hooks (their tests are left out by .dockerignore): mount your own folder over them.
COPY hooks hooks
# The socket folder, shared with the agent container through a volume. The root filesystem can be
# read-only: hookd writes nothing else unless given --audit FILE.
RUN mkdir -p /run/hookd && chown 1000:1000 /run/hookd && chmod 0700 /run/hookd
# The image's `node` user, by number, so that Kubernetes' runAsNonRoot can verify it.
USER 1000:1000
# The health-only port of --health-listen, for probes; the hook service itself is on the Unix socket.
EXPOSE 8081
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "/opt/hookd/bin/hookd.js", "health", "--addr", "127.0.0.1:8081", "--timeout-ms", "4000"]
ENTRYPOINT ["node", "/opt/hookd/bin/hookd.js"]
CMD ["serve", "--hooks", "/opt/hookd/hooks", "--listen", "unix:/run/hookd/hookd.sock", "--health-listen", "0.0.0.0:8081"]
