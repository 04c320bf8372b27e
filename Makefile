# Berth: the two commands of the README, and their helpers.
# `make run`  — advice on the sample estate, for people.
# `make test` — every check: formatting, lints, all tests (native and
#               WebAssembly parity). Installs missing tools first.
# `make bench-server` — the server's speed targets against a real server
#               (scripts/bench-server.sh; figures in docs/performance.md).

SAMPLE_NOW ?= 2026-11-30T04:05:00Z
WASM_BINDGEN_VERSION := 0.2.130

.PHONY: run test tools fmt-check clippy bench bench-server

run:
	cargo run --quiet --release -p berth -- advise examples/estates/sample.json --now $(SAMPLE_NOW) --format text

tools:
	@bash scripts/install-tools.sh $(WASM_BINDGEN_VERSION)

fmt-check:
	cargo fmt --all -- --check

clippy:
	cargo clippy --all-targets -- -D warnings

test: tools fmt-check clippy
	cargo test --workspace --release

bench:
	cargo bench -p berth-engine --bench advise
	cargo bench -p berth-engine --bench whatif
	cargo bench -p berth-engine --bench why

bench-server:
	bash scripts/bench-server.sh
