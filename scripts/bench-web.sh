#!/usr/bin/env bash
# The web application's speed and size targets (issues 5 and 16), printed
# for the 1,000- and the 5,000-service generated estates: Placement's first
# meaningful paint and the Estate page interactive from a cold load, a
# what-if edit, a policy preview, every page's DOM size, and the bundle's
# compressed sizes (end2end/bench.mjs says how each is measured). Needs the
# web bundle (make web) and Chromium (make tools).
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET_DIR="${CARGO_TARGET_DIR:-target}"
NOW="2026-11-30T04:05:00Z"
cargo build --quiet --release -p berth --bin berth --example gen_estate
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# The estate of scripts/bench-server.sh (1,000 services, 20 clusters) and
# the smallest of make bench's (5,000 services, 50 clusters).
"$TARGET_DIR/release/examples/gen_estate" 1000 20 >"$WORK/estate-1k.json"
"$TARGET_DIR/release/examples/gen_estate" 5000 50 >"$WORK/estate-5k.json"
(cd end2end && node bench.mjs "$NOW" "$WORK/estate-1k.json" "$WORK/estate-5k.json")
