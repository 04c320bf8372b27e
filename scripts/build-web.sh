#!/usr/bin/env bash
# Builds the web application's browser bundle into the site root that
# `berth serve` serves (default target/site; BERTH_SITE_ROOT or the first
# argument to change it):
#   pkg/berth.js, pkg/berth_bg.wasm   the hydrating app (engine included)
#   style/, favicon.svg, world.svg    copied from style/ and public/
# A plain cargo + wasm-bindgen build, not cargo-leptos: see docs/web.md.
set -euo pipefail
cd "$(dirname "$0")/.."
# Where `cargo install` (scripts/install-tools.sh) put wasm-bindgen.
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
site="${1:-${BERTH_SITE_ROOT:-target/site}}"
target_dir="${CARGO_TARGET_DIR:-target}"

cargo build --release --target wasm32-unknown-unknown -p berth-web --lib --features hydrate
mkdir -p "$site/pkg"
# The CLI must match the wasm-bindgen crate of Cargo.lock (make tools
# installs that version); --target web: an ES module Leptos's hydration
# script imports.
wasm-bindgen --target web --no-typescript --out-dir "$site/pkg" --out-name berth \
  "$target_dir/wasm32-unknown-unknown/release/berth_web.wasm"
if command -v wasm-opt >/dev/null; then
  wasm-opt -Oz --enable-bulk-memory --enable-nontrapping-float-to-int \
    -o "$site/pkg/berth_bg.wasm.opt" "$site/pkg/berth_bg.wasm"
  mv "$site/pkg/berth_bg.wasm.opt" "$site/pkg/berth_bg.wasm"
fi
rm -rf "$site/style"
cp -r style "$site/style"
cp -r public/. "$site/"
# Pre-compressed copies: the server sends them to browsers accepting gzip
# (the module shrinks to about a third).
for f in "$site/pkg/berth_bg.wasm" "$site/pkg/berth.js" "$site/style/berth.css" "$site/world.svg"; do
  gzip -9 -k -f "$f"
done
size=$(wc -c <"$site/pkg/berth_bg.wasm")
gz=$(gzip -9 -c "$site/pkg/berth_bg.wasm" | wc -c)
echo "web bundle in $site: berth_bg.wasm $size bytes, $gz gzipped"
