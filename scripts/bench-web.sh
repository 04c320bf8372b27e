#!/usr/bin/env bash
# The web application's speed targets (issue 5), printed: first meaningful
# paint of Placement on the 1,000-service estate from a cold load, a
# what-if edit re-projected and re-rendered, and the WebAssembly bundle's
# compressed size. Needs the web bundle (make web) and Chromium (make tools).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
NOW="2026-11-30T04:05:00Z"
cargo build --quiet --release -p berth --bin berth --example gen_estate
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# The same estate as scripts/bench-server.sh: 1,000 services, 20 clusters.
"$TARGET_DIR/release/examples/gen_estate" 1000 20 >"$WORK/estate-1k.json"
(cd end2end && node bench.mjs "$WORK/estate-1k.json" "$NOW")
