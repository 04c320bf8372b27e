#!/usr/bin/env bash
# Installs what `make test` needs, skipping what is already there, so a
# fresh machine and a warm one run the same command.
# With `run` as the second argument, only what `make run` needs (the
# WebAssembly target, wasm-bindgen, and wasm-opt and brotli, which shrink
# the bundle).
set -euo pipefail
want_wb="${1:?wasm-bindgen version}"
mode="${2:-test}"
# `cargo install` puts wasm-bindgen here; a shell that never sourced
# ~/.cargo/env would not find it afterwards.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
if ! command -v cargo >/dev/null || ! command -v rustup >/dev/null; then
  echo "Berth builds with Rust: install rustup (https://rustup.rs), then run this again" >&2
  exit 1
fi

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "installing the wasm32-unknown-unknown target"
  rustup target add wasm32-unknown-unknown
fi
# The CLI must be exactly the version of the wasm-bindgen crate in
# Cargo.lock, or the generated glue will not match the module.
have_wb="$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)"
if [ "$have_wb" != "$want_wb" ]; then
  echo "installing wasm-bindgen-cli $want_wb (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "$want_wb"
fi
# wasm-opt (Debian's binaryen) shrinks the browser module by a few
# megabytes, brotli makes its smallest compressed copy (scripts/build-web.sh
# uses both; docs/performance.md has the sizes). Debian's packages, not a
# cargo install: no build time. Without apt-get (not Debian) `make run`
# still works with a larger bundle; `make test` fails its size check.
if ! command -v wasm-opt >/dev/null || ! command -v brotli >/dev/null; then
  if command -v apt-get >/dev/null; then
    echo "installing binaryen (wasm-opt) and brotli (shrink the web bundle)"
    apt-get update -qq && apt-get install -y -qq --no-install-recommends binaryen brotli
  else
    echo "note: install binaryen (wasm-opt) and brotli with your package manager:" \
      "without them the web bundle is several megabytes larger" >&2
  fi
fi
if [ "$mode" = run ]; then
  exit 0
fi
for c in rustfmt clippy; do
  if ! rustup component list --installed | grep -q "^$c"; then
    rustup component add "$c"
  fi
done
if ! command -v node >/dev/null; then
  echo "installing Node.js (runs the WebAssembly parity test)"
  apt-get update -qq && apt-get install -y -qq nodejs
fi
# The structural check of docs/api.openapi.json (server/tests/openapi.rs
# runs it, and fails without it). Pinned, so every machine checks alike.
if ! python3 -c 'import openapi_spec_validator' 2>/dev/null; then
  echo "installing openapi-spec-validator (checks docs/api.openapi.json)"
  python3 -m pip install --quiet openapi-spec-validator==0.9.0
fi
# The CRD schema check of exported plan manifests
# (engine/tests/data/crds/validate.py, run by engine/tests/plan.rs):
# jsonschema comes with openapi-spec-validator, PyYAML with it too; both are
# checked, so a machine that has neither still gets them.
if ! python3 -c 'import jsonschema, yaml' 2>/dev/null; then
  echo "installing jsonschema and PyYAML (check exported Karmada/OCM manifests)"
  python3 -m pip install --quiet jsonschema PyYAML
fi
# The official webhook verifiers that server/tests/webhook_contract.rs runs
# against Berth's signed decider requests (it fails without them). Pinned,
# so every machine verifies with the same library code.
if ! python3 -c 'import stripe, standardwebhooks' 2>/dev/null; then
  echo "installing stripe and standardwebhooks (verify signed decider requests)"
  python3 -m pip install --quiet stripe==16.1.0 standardwebhooks==1.1.0
fi
# A real Prometheus (Debian's package): server/tests/prometheus_real.rs
# backfills Istio series with promtool and checks the mesh importer's
# default queries against the server (it skips without them, unless
# BERTH_REQUIRE_PROMETHEUS is set).
if ! command -v promtool >/dev/null || ! command -v prometheus >/dev/null; then
  echo "installing Prometheus (checks the mesh importer's queries)"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends prometheus
fi
# The web application's end-to-end tests: Debian's Chromium, driven by
# playwright-core from end2end/ (Playwright cannot download browsers here).
if [ ! -x /usr/bin/chromium ]; then
  echo "installing Chromium (runs the web end-to-end tests)"
  apt-get update -qq && apt-get install -y -qq chromium
fi
if ! command -v npm >/dev/null; then
  apt-get update -qq && apt-get install -y -qq npm
fi
e2e="$(dirname "$0")/../end2end"
if [ ! -d "$e2e/node_modules" ]; then
  (cd "$e2e" && npm ci --no-audit --no-fund)
fi
# The proven reference (solver/, crate berth-solver) links HiGHS, which
# highs-sys builds from its C++ source with cmake and binds with bindgen,
# which needs libclang. Debian's packages.
if ! command -v cmake >/dev/null || ! ldconfig -p | grep 'libclang[-.0-9]*\.so' >/dev/null; then
  echo "installing cmake and libclang (build HiGHS for the solver crate)"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends cmake libclang-dev
fi
