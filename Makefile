# slotrelay — the two commands a newcomer needs are `make start` and `make test`.
SHELL := /bin/bash
# The Node every target runs on, npm and npx included (scripts/select-node.sh): the machine's when package.json
# `engines` admits it (22.13+, 24, 26), else Node 26 from the npm registry (24 without a C++ compiler), installed once
# into ~/.cache/slotrelay/node; NODE_MAJOR=24 asks for that line whatever the machine has (docs/http-runtime.md).
NODE_MAJOR ?=
NODE_BIN := $(shell NODE_MAJOR=$(NODE_MAJOR) bash scripts/select-node.sh)
ifeq ($(NODE_BIN),)
$(error no supported Node (scripts/select-node.sh said why above))
endif
export PATH := $(NODE_BIN):$(PATH)
NODE ?= node
CONFIG ?=

.PHONY: start install build test test-node24 test-node26 uws-check test-peers typecheck layers check-deploy bench bench-micro bench-e2e bench-fees bench-telemetry bench-egress bench-ingress bench-client bench-client-local bench-landing bench-landing-congestion bench-bundles bench-reload bench-status bench-uws-build bench-wire bench-start fuzz clean

# `npm ci`: exactly the locked versions into a clean node_modules. The lockfile also names the other platforms'
# optional binaries (@matrixai/quic, msgpackr-extract, litesvm, rollup), which npm skips on this one; the registry
# mirror these machines use does not serve some of them, so those entries carry version, os, cpu and libc but no
# integrity hash (docs/known-issues.md). Install scripts stay off: nothing here needs one.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: node_modules/.installed

# The last steps write dist/native/uws-built/ (our uWS, compiled from vendor/uWebSockets.js + vendor/uws-patches for
# this Node: ~40-60 s the first time on 2 cores, then cached in ~/.cache/slotrelay/uws; skipped, saying so, where there
# is no C++ compiler: docs/http-runtime.md "Our build"), dist/native/uws-glibc-compat/ (the maintained prebuilt uWS
# for glibc < 2.38 hosts, hash-checked), dist/native/quiche-threads/ (a copy of the quiche binding per extra QUIC
# thread: docs/quic-sharding.md) and dist/native/malloc-trim/ (the QUIC ingress's malloc_trim(0) addon, compiled with
# the C compiler alone; skipped, saying so, where there is none: docs/quic-ingress.md "Memory after abuse").
build: install
	npx tsc -p tsconfig.json
	npx tsc -p tsconfig.client.json
	$(NODE) dist/scripts/uws-build.js
	$(NODE) dist/scripts/uws-glibc-compat.js
	$(NODE) dist/scripts/quiche-thread-copies.js
	$(NODE) dist/scripts/malloc-trim-build.js

# Creates local/config.yaml with a fresh API key on first run (printed once), then starts the relay.
start: build
	$(NODE) dist/src/cli.js start $(if $(CONFIG),--config $(CONFIG),)

typecheck: install
	npx tsc -p tsconfig.test.json

# The layers of src/ (.dependency-cruiser.cjs, docs/architecture.md): any import that breaks them, as the layering test
# in `make test` checks; `make layers GRAPH=1` also writes the folder graph as Graphviz dot to dist/layers.dot.
layers: install
	npx depcruise src workers --config .dependency-cruiser.cjs --output-type err
	@if [ -n "$(GRAPH)" ]; then mkdir -p dist && npx depcruise src workers --config .dependency-cruiser.cjs --collapse '^(src|workers)/[^/]+' --output-type dot > dist/layers.dot && echo "dist/layers.dot written"; fi

# The Prometheus rules of deploy/ (docs/monitoring.md): syntax and their promtool unit tests, after editing them.
# Installs Debian's prometheus package when missing (scripts/ci/ensure-prometheus.sh). The dashboard against a real
# Prometheus and relay: npx vitest run test/integration/deploy/.
check-deploy:
	@promtool="$$(bash scripts/ci/ensure-prometheus.sh | tail -n 1)" && \
	  "$$promtool" check rules deploy/prometheus/slotrelay.rules.yml && \
	  "$$promtool" test rules deploy/prometheus/tests/*.yml

# The Rust QUIC peers of the interop tests (quinn from Debian's crates: ../shared/peers/quinn-tpu-sink and
# test/peers/quinn-ingress-client, one cargo target directory), built before the suite so that a fresh clone's ~100 s
# compile is not inside vitest's run. Without cargo they are not built and the tests that need them say so; any other
# build failure shows here and again, failing, in those tests.
test-peers:
	@bash scripts/build-quinn-sink.sh >/dev/null && bash scripts/build-quinn-ingress-client.sh >/dev/null \
	  || echo "test peers not built (the quinn interop tests will say why)"

# uws-check first: where no uWS build loads on this Node, the suite is not run and make says why (docs/http-runtime.md).
test: build uws-check typecheck test-peers
	npx vitest run

# The suite on one LTS line from the npm registry, whatever the machine's Node (CI runs both: .ci/run): our uWS is built
# for it first (its own ABI, its own cache entry, against the headers its package ships); where no uWS build loads on it
# on this host, uws-check fails, saying why, and the suite is not run (docs/http-runtime.md).
test-node24 test-node26: test-node%:
	$(MAKE) test NODE_MAJOR=$*

uws-check: build
	@node dist/scripts/uws-probe.js || { echo "Node $$(node -p process.versions.node): no uWS build loads on this host, so the suite cannot run on it"; exit 1; }

bench: bench-micro bench-e2e bench-telemetry bench-egress bench-client

# Relay start: spawn -> relay_ready and the CPU spent until then (what a restart and every test's relay costs);
# BASELINE=path/to/other/dist/src/cli.js alternates with another build. ~1 min; writes bench/results/relay-start.{json,md}.
bench-start: build
	$(NODE) dist/bench/start/relay-start.bench.js $(if $(BASELINE),--baseline-cli $(BASELINE))

bench-micro: build
	$(NODE) dist/bench/run-micro.js

bench-e2e: build
	$(NODE) dist/bench/e2e/send-transaction-load.js

# Our uWS build vs the prebuilt one (issue #29, docs/http-runtime.md): bench-e2e's sendTransaction load against two
# relays, SLOTRELAY_UWS_BUILD=source and =maintained, in paired rounds whose order alternates; ~2.5 min; writes
# bench/results/uws-build.json. Needs wrk (Debian package).
bench-uws-build: build
	$(NODE) dist/bench/e2e/uws-build-compare.js --rounds 8 --duration 6 --json bench/results/uws-build.json

# getRecentPrioritizationFees (issue #11, docs/fees.md "Benchmark"): the relay's cache vs the embedded localnet answering
# the same call vs the bound (uWS answering the same bytes with no work), wrk -c64, 5 rounds; ~2.5 min (60 s of them
# waiting for 150 slots of history); writes bench/results/prioritization-fees.json. Needs wrk (Debian package).
bench-fees: build
	$(NODE) dist/bench/e2e/prioritization-fees-load.js --rounds 5 --json bench/results/prioritization-fees.json

# getLeaderSlots: micro (snapshot build/publish/read, handler) + wrk at limit 20 and 100 against the real relay.
bench-telemetry: build
	$(NODE) dist/bench/telemetry/get-leader-slots.bench.js

# QUIC egress: static route over one connection into a 128-stream listener (quinn-tpu-sink when built), ring entry ->
# kernel at 5,000 tx/s, next to @matrixai/quic's high-level API; ~20 s; writes bench/results/quic-egress.json. Then the
# QUIC thread in the relay's pool (bench/results/quic-thread.json), and fresh transactions behind a full rebroadcast
# queue (~25 s; bench/results/rebroadcast-tail.json; docs/wire-to-wire.md item 7).
bench-egress: build
	$(NODE) dist/bench/egress/quic-egress.bench.js
	$(NODE) dist/bench/egress/quic-thread.bench.js
	$(NODE) dist/bench/egress/rebroadcast-tail.bench.js --json bench/results/rebroadcast-tail.json

# QUIC ingress next to HTTP /v1/submit (20,000 uni streams over 4 connections per round), then the same with a 256-slot
# queue to the front so that back-pressure by stream credit shows (holds, streams held, overloaded per round; issue #28,
# docs/quic-ingress.md "Back-pressure"); ~1.5 min; writes bench/results/quic-ingress.json (the second run's).
bench-ingress: build
	$(NODE) dist/bench/ingress/quic-ingress.bench.js 20000 2
	$(NODE) dist/bench/ingress/quic-ingress.bench.js 20000 2 256

# Client library (issue #14): HTTP keep-alive submits/s and p50/p99 from one process against a discarding relay,
# library (global fetch, undici Agent) next to a bare undici request in the same run; ~40 s; writes
# bench/results/client-http.json. QUIC rows come with the QUIC ingress (issue #12).
bench-client: build
	$(NODE) dist/bench/client/http-submit.bench.js --json bench/results/client-http.json

# Acknowledged QUIC submit vs HTTP keep-alive with the QUIC thread's local admission off and on (two relays, a static
# peer in a child process, rounds alternated; issue #28 item 3, docs/quic-ingress.md "Local admission").
bench-client-local: build
	$(NODE) dist/bench/client/quic-local.bench.js --json bench/results/client-quic-local.json

# Landing benchmark (issue #13, docs/landing.md): real transfers at 100 tx/s for 60 s per route set (direct
# window-aware, direct next-leaders, rpc, direct+rpc; interleaved in the same slots since issue #44, so 400 tx/s in
# all) through relays on the embedded localnet, with 400 ms slots,
# 200 ms slots, and 400 ms slots with a lossy leader (20% packet loss on the largest-stake validator's TPU, 10% of
# the transactions it reads dropped); ~15 min; writes bench/results/landing.json and landing.html.
# LANDING_ARGS="--rpc URL --relay URL --keypair FILE --key KEY" points it at another cluster and relay.
LANDING_ARGS ?= --rate 100 --duration 60 --scenario slot-ms=400 --scenario slot-ms=200 --scenario slot-ms=400,lossy-leader=20,leader-drop=10
# Bundles (issue #16): sendBundle through the relay's POST /v1/bundles next to the localnet's block engine called
# directly, same run (3-transaction bundles, 16 in flight, rounds alternating); ~1 min; writes bench/results/bundles.json.
bench-bundles: build
	$(NODE) dist/bench/bundles/bundle-relay.bench.js --json bench/results/bundles.json

# Status page (issue #27 item 1, docs/status-page.md): sendTransaction load (wrk) against one relay with the page closed
# and open (an event-stream viewer), rounds alternating, same run; the page's figures checked against /metrics after
# each open run; ~2 min; writes bench/results/status-page.json. Needs wrk (Debian package).
bench-status: build
	$(NODE) dist/bench/status/page-cost.js --rounds 5 --profile --json bench/results/status-page.json

# Wire to wire (issue #28, bench/results/wire.md): client's last byte written -> first arrival at the embedded
# localnet's TPU listener, per ingress (JSON-RPC, /v1/transactions, QUIC uni, QUIC bidi) at 1,000 / 5,000 / 20,000 tx/s
# and saturation, next to floor (a) bench/wire/min-forwarder.ts and floor (b) a bare uWS answer, cells interleaved, 2
# rounds; ~4 min on a quiet box (cells are bounded: 7 s of load + <= 6 s waiting for arrivals; ~10 min when starved);
# writes bench/results/wire.json and wire.md. WIRE_ARGS="--rounds 1 --rates 5000" narrows it.
WIRE_ARGS ?=
bench-wire: build
	$(NODE) dist/bench/wire/wire.bench.js $(WIRE_ARGS)

bench-landing: build
	$(NODE) dist/src/cli.js bench landing $(LANDING_ARGS) --out bench/results/landing

# Landing under congestion (issue #26, docs/landing.md "Congestion scenarios"): the flow-control QoS as the bottleneck
# (a staked competitor with most of the stake keeps the largest-stake leader, or every leader 4 slots of 12, saturated;
# blocks larger than the leader's stream capacity), the relay unstaked then staked, and the relay's own load alone
# (flow-control); direct, direct+rpc, direct+jito and adaptive (routing.adaptive on); the relays never rebroadcast
# (--relay-retries 0: one copy per route), while the RPC node and the block engine resend on their own as on mainnet;
# the four sets interleaved in the same slots (issue #44: 25 tx/s each, 100 tx/s in all as one set alone sent before,
# 2,000 transfers per set over 80 s), after one uncounted 5 s warm-up; ~10 min; writes
# bench/results/landing-congestion.json and .html.
CONGESTION_ARGS ?= --sets direct,direct+rpc,direct+jito,adaptive --rate 25 --duration 80 --tail 10 --warmup 5 --relay-retries 0 --scenario hot-leader --scenario unstaked-vs-staked --scenario hot-window --scenario flow-control
bench-landing-congestion: build
	$(NODE) dist/src/cli.js bench landing $(CONGESTION_ARGS) --out bench/results/landing-congestion

# Live fuzzer (issue #18): FUZZ_CASES generated requests against a real relay on loopback (fake upstream, discarding
# routes), each judged against docs/errors.md and docs/relay-api.md; prints the classes and examples, writes
# bench/results/fuzz.json, exits 1 on any answer that is not the specified one. FUZZ_SEED repeats a run. Then the
# QUIC ingress phase (FUZZ_QUIC_SESSIONS connections with refused streams, FUZZ_JUNK_BURSTS bursts of junk datagrams
# and Initial floods) and the keep-alive slow-client phase (FUZZ_SLOW_CLIENTS raw sockets), same relay and seed; last,
# FUZZ_RELOADS reloads of the relay's config file broken by seeded mutations, each scanned for any key's characters in
# `slotrelay reload`'s output, /health?detail, /status.json and the log (issue #47 item 1).
FUZZ_CASES ?= 100000
FUZZ_SEED ?=
FUZZ_QUIC_SESSIONS ?= 200
FUZZ_JUNK_BURSTS ?= 12
FUZZ_SLOW_CLIENTS ?= 32
FUZZ_RELOADS ?= 60
fuzz: build
	$(NODE) dist/scripts/fuzz/main.js --cases $(FUZZ_CASES) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED),) --quic-sessions $(FUZZ_QUIC_SESSIONS) --junk-bursts $(FUZZ_JUNK_BURSTS) --slow-clients $(FUZZ_SLOW_CLIENTS) --reloads $(FUZZ_RELOADS) --json bench/results/fuzz.json

# Fault script (issue #18): the real relay with its embedded localnet and every route (rpc, direct, a static QUIC
# stand-in, a jito stand-in) under steady submissions while the localnet child is SIGKILLed and the stand-ins are
# killed and restarted on the same ports; checks accepted = sent + failed + dropped:* per route (0 unaccounted),
# no crash, every thread's live heap flat and RSS at a plateau (scripts/soak/thread-heaps.ts, rss.ts). ~SOAK_SECONDS +
# 1 min; `make test` runs it for 60 s (test/integration/soak/soak-smoke.test.ts). Writes bench/results/soak.json.
SOAK_SECONDS ?= 600
soak: build
	$(NODE) dist/scripts/soak/main.js --seconds $(SOAK_SECONDS) --out bench/results/soak.json

# Reload under load (issue #27 item 4, docs/configuration.md "Reload"): the real relay on its embedded localnet at
# RELOAD_RATE tx/s over HTTP for RELOAD_SECONDS while its keys file is rewritten and SIGHUP sent RELOAD_COUNT times;
# checks 0 accepted transactions lost (relay_stopped), key changes within 1 s, no QUIC ingress or leader connection
# re-established. ~RELOAD_SECONDS + 40 s; writes bench/results/reload.json (summary: bench/results/reload.md).
RELOAD_RATE ?= 2000
RELOAD_SECONDS ?= 60
RELOAD_COUNT ?= 20
bench-reload: build
	$(NODE) dist/bench/reload/reload-under-load.js --rate $(RELOAD_RATE) --seconds $(RELOAD_SECONDS) --reloads $(RELOAD_COUNT) --out bench/results/reload.json

clean:
	rm -rf dist
