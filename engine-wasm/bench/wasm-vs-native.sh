#!/usr/bin/env bash
# WebAssembly vs native speed of `advise_json` (load + advise + JSON) on the
# generated benchmark estate, for the target "WebAssembly ≤ 2× native".
#
# Usage (from anywhere in the repository):
#   engine-wasm/bench/wasm-vs-native.sh [SEED SERVICES CLUSTERS RUNS]
# Defaults: 42 5000 50 5, i.e. gen::Shape::sized(42, 5000, 50), the
# median of 5 timed calls after one warm-up on each side.
#
# Builds the module (release, wasm32-unknown-unknown, in target/wasm-parity,
# shared with tests/parity.rs), writes Node bindings with wasm-bindgen
# (target/wasm-parity/bench-pkg), times it in Node (wasm-advise-time.cjs)
# and natively (examples/native_advise_time.rs), checks both produced the
# same advice (SHA-256) and prints both medians and their ratio (and the
# minimums, less sensitive to a busy machine).
#
# Needs the wasm32-unknown-unknown target, the wasm-bindgen CLI matching
# Cargo.lock and Node.js: `make tools` installs them
# (scripts/install-tools.sh). Set CARGO to use another cargo.
# Close other heavy work first: both sides are single-threaded, but a busy
# machine skews one side more than the other.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cargo="${CARGO:-cargo}"
out="${CARGO_TARGET_DIR:-$root/target}/wasm-parity"
args=("${1:-42}" "${2:-5000}" "${3:-50}" "${4:-5}")

for tool in wasm-bindgen node; do
  if ! command -v "$tool" >/dev/null; then
    echo "error: $tool not found; \`make tools\` installs it (scripts/install-tools.sh)" >&2
    exit 1
  fi
done

cd "$root"
echo "building the WebAssembly module and the native example (release)..." >&2
"$cargo" build --quiet -p berth-engine-wasm --target wasm32-unknown-unknown --release \
  --target-dir "$out"
wasm-bindgen --target nodejs --out-dir "$out/bench-pkg" \
  "$out/wasm32-unknown-unknown/release/berth_engine_wasm.wasm"
"$cargo" build --quiet --release -p berth-engine-wasm --example native_advise_time

echo "estate: gen::Shape::sized(${args[0]}, ${args[1]}, ${args[2]}); ${args[3]} timed runs each" >&2
wasm_line="$(node "$here/wasm-advise-time.cjs" "$out/bench-pkg" "${args[@]}")"
native_line="$("$cargo" run --quiet --release -p berth-engine-wasm --example native_advise_time -- "${args[@]}")"
echo "$native_line"
echo "$wasm_line"

field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
if [ "$(field advice_sha256 "$native_line")" != "$(field advice_sha256 "$wasm_line")" ]; then
  echo "error: the WebAssembly advice differs from the native advice (run the parity test)" >&2
  exit 1
fi
awk -v n="$(field median_ms "$native_line")" -v w="$(field median_ms "$wasm_line")" \
  -v nm="$(field min_ms "$native_line")" -v wm="$(field min_ms "$wasm_line")" \
  'BEGIN {
     printf "median: native %.1f ms, wasm %.1f ms: wasm/native = %.2fx (target <= 2x)\n", n, w, w / n
     printf "min:    native %.1f ms, wasm %.1f ms: wasm/native = %.2fx\n", nm, wm, wm / nm
   }'
