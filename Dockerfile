# syntax=docker/dockerfile:1
# hookd as a container image. Two stages: `build` compiles the TypeScript, packs the package as npm
# publishes it and installs that tarball as users install it; `runtime` holds only that install and the
# example hooks, as an unprivileged numeric user.
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
# isolated-vm 5.0.4 has no prebuilt binary for Node 20: its install compiles it with node-gyp.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The build's tools first (TypeScript, esbuild), so that a source edit does not reinstall them. Nothing
# of this install reaches the image, so its install scripts (isolated-vm's compile) are skipped.
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json README.md ./
COPY src src
COPY proto proto
COPY bin bin
COPY types types
COPY native native
COPY scripts/build-shim.sh scripts/build-shim.sh
RUN npm run build
# The package exactly as npm would publish it (dist/ is built: --ignore-scripts skips prepack's build).
RUN npm pack --ignore-scripts --pack-destination /tmp
# Installed from that tarball as users install it: npm's default layout, its install scripts run
# (isolated-vm compiles, ~90 s), no dev dependencies. npm writes the folder's package.json.
WORKDIR /opt/hookd
RUN npm install --omit=dev --no-audit --no-fund /tmp/hookd-sandbox-*.tgz

FROM node:20.20.2-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /opt/hookd
# The install: package.json, package-lock.json and node_modules (hookd-sandbox and its dependencies).
COPY --from=build /opt/hookd /opt/hookd
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
  CMD ["node", "/opt/hookd/node_modules/hookd-sandbox/bin/hookd.js", "health", "--addr", "127.0.0.1:8081", "--timeout-ms", "4000"]
ENTRYPOINT ["node", "/opt/hookd/node_modules/hookd-sandbox/bin/hookd.js"]
CMD ["serve", "--hooks", "/opt/hookd/hooks", "--listen", "unix:/run/hookd/hookd.sock", "--health-listen", "0.0.0.0:8081"]
