# hookd: `make run` starts the sidecar on ./hooks, `make test` runs the whole suite.
# Both install what they need on first use.

SHELL := /bin/bash
NODE_OPTIONS_ISOLATES := --no-node-snapshot
ADDR ?= unix:.hookd/hookd.sock
HOOKS ?= hooks
TRY_PAYLOAD := {"id":"c1","name":"shell","arguments":{"command":"rm -rf /tmp/x"}}
# The Python that runs the Python host, remote hooks and conformance runner: Debian's, which sees
# python3-grpcio and python3-grpc-tools (a pyenv or venv `python3` on PATH may not).
export HOOKD_PYTHON ?= /usr/bin/python3

.PHONY: all install build run test typecheck bench soak clean help python-deps python-stubs deploy-deps image

all: build

help:
	@echo "make run        install (first time), build, start the sidecar on $(ADDR) serving ./$(HOOKS)"
	@echo "make test       typecheck and run the whole test suite"
	@echo "make build      compile TypeScript to dist/"
	@echo "make typecheck  type-check sources, tests and benchmarks"
	@echo "make bench      run the benchmarks (BENCH_SMOKE=1 for a tiny run); writes bench/out/results.json"
	@echo "make soak       run hookd under load with faults injected (SOAK_MINUTES=3); writes bench/out/soak.json"
	@echo "make clean      remove dist/ and node_modules/"
	@echo "make python-deps   install python3-grpcio and python3-grpc-tools (apt) unless $(HOOKD_PYTHON) has them"
	@echo "make python-stubs  generate the Python stubs of proto/ into examples/python/gen/"
	@echo "make deploy-deps   install systemd-analyze and setpriv (apt) for the tests in test/deploy/ unless present"
	@echo "make image         build the container image hookd:VERSION with docker (needs a Docker engine)"

# npm ci builds isolated-vm from source on first install (about 90 s).
node_modules/.installed: package.json package-lock.json
	@command -v node >/dev/null || { echo "hookd needs Node.js 20.19 or newer"; exit 1; }
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

dist/.built: node_modules/.installed tsconfig.json tsconfig.build.json $(shell find src proto -type f 2>/dev/null)
	npm run build
	@touch $@

# The command shim's compiled form (scripts/build-shim.sh; npm install builds it too).
build/hookd-hook: native/hookd-hook.c scripts/build-shim.sh
	sh scripts/build-shim.sh

build: dist/.built build/hookd-hook

run: build
	@echo "hookd: starting the sidecar for ./$(HOOKS) on $(ADDR)"
	@echo "hookd: in another terminal, try:"
	@printf "  npx hookd-sandbox invoke --addr %s --hook guard,https-only --point beforeToolExecute --payload '%s'\n" '$(ADDR)' '$(TRY_PAYLOAD)'
	@exec node bin/hookd.js serve --hooks $(HOOKS) --listen $(ADDR)

typecheck: node_modules/.installed
	npx tsc -p tsconfig.json
	npx tsc -p tsconfig.prelude.json

python-deps:
	scripts/python-deps.sh

python-stubs: python-deps
	scripts/python-stubs.sh

deploy-deps:
	scripts/deploy-deps.sh

image:
	docker build -t hookd:$$(node -p 'require("./package.json").version') .

# vitest runs the conformance suite with both runners (TypeScript and Python): see test/conformance/.
# test/package/ and test/deploy/ install the packed package with npm (test/support/packed.ts; npm's
# cache and a reused install are kept in .cache/package-test/).
# vitest, then the bench's smoke run (it keeps bench/ from rotting). Run beside vitest it saved nothing:
# the suite keeps both cores busy.
test: node_modules/.installed typecheck build python-stubs deploy-deps
	npx vitest run
	BENCH_SMOKE=1 npx tsx bench/run.ts

bench: build
	BENCH_SMOKE=$(BENCH_SMOKE) npx tsx bench/run.ts

# Many sessions through gRPC and the front door, every answer checked, while workers are killed and
# stopped, hooks edited and broken, the audit log's disk filled and the sidecar restarted
# (bench/soak.ts, docs/operations.md "What hookd survives"). Fails when a check does not hold.
SOAK_MINUTES ?= 3
soak: build
	SOAK_MINUTES=$(SOAK_MINUTES) npx tsx bench/soak.ts

clean:
	rm -rf dist node_modules .cache
