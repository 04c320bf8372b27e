# Berth: the two commands of the README, and their helpers.
# `make run`  — the server on http://127.0.0.1:3000 (SQLite in ./berth-data,
#               seeded with the sample estate at first start), with the web
#               application built into the binary. Installs the WebAssembly
#               target and wasm-bindgen first when they are missing.
# `make install` — the same self-contained `berth` into ~/.cargo/bin.
# `make test` — every check: formatting, lints, all tests (native and
#               WebAssembly parity, API on SQLite and PostgreSQL). Installs
#               missing tools and starts PostgreSQL first.
# `make bench` — the engine's criterion benchmarks, then advise ÷ validate
#               time and memory on 5k/20k/50k-service estates, through the
#               engine and the CLI (scripts/bench-scale.py).
# `make bench-server` — the server's speed targets against a real server
#               (scripts/bench-server.sh; figures in docs/performance.md).
# `make web`  — the web application's browser bundle into target/site
#               (scripts/build-web.sh; `run` and `test` build it first;
#               `test` then checks its size, scripts/check-web-size.sh).
# `make bench-web` — the web pages' speed in headless Chromium on the
#               1,000-service estate (scripts/bench-web.sh).

SAMPLE_NOW ?= 2026-11-30T04:05:00Z
WASM_BINDGEN_VERSION := 0.2.130

.PHONY: run run-tools install advise-sample test tools postgres fmt-check clippy bench bench-server web bench-web

# Extra `berth serve` flags: make run SERVE_ARGS="--decider-allow 127.0.0.1/32"
SERVE_ARGS ?=

# What `berth serve` needs and a fresh machine lacks: the wasm32 target and
# the wasm-bindgen CLI (the browser bundle), nothing more.
run-tools:
	@bash scripts/install-tools.sh $(WASM_BINDGEN_VERSION) run

# `bundle`: the web application embedded in the binary (server/build.rs).
run: run-tools web
	cargo run --quiet --release -p berth --features bundle -- serve $(SERVE_ARGS)

# Stripped once installed: the symbols are half the binary and nothing
# reads them (docs/deploy.md has the sizes). Stripping the installed copy,
# not a strip profile, reuses the release build `make run` already made.
install: run-tools web
	cargo install --locked --path server --features bundle
	strip "$${CARGO_HOME:-$$HOME/.cargo}/bin/berth"

web:
	bash scripts/build-web.sh

# The command-line engine on the sample file, at the time it was written for.
advise-sample:
	cargo run --quiet --release -p berth -- advise examples/estates/sample.json --now $(SAMPLE_NOW) --format text

tools:
	@bash scripts/install-tools.sh $(WASM_BINDGEN_VERSION)

postgres:
	@bash scripts/ensure-postgres.sh

fmt-check:
	cargo fmt --all -- --check

# `--release`: the same profile as the tests below, so build scripts
# (HiGHS's C++ for the solver crate above all) run once, not twice.
clippy:
	cargo clippy --release --all-targets -- -D warnings

test: tools postgres fmt-check clippy
	BERTH_REQUIRE_PROMETHEUS=1 cargo test --workspace --release
	bash scripts/build-web.sh
	bash scripts/check-web-size.sh
	cargo build --release -p berth --features bundle
	cd end2end && npm test

bench:
	cargo bench -p berth-engine --bench advise
	cargo bench -p berth-engine --bench whatif
	cargo bench -p berth-engine --bench why
	python3 scripts/bench-scale.py

bench-server:
	bash scripts/bench-server.sh

bench-web: web
	bash scripts/bench-web.sh
