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

# The size-tuned profile of Cargo.toml ([profile.wasm-release]: opt-level,
# LTO, one codegen unit; docs/performance.md has the measurements). Only
# this build uses it, so native release builds are untouched.
# BERTH_WASM_PROFILE=release builds with the plain release profile instead
# (how the sizes before it were measured).
profile="${BERTH_WASM_PROFILE:-wasm-release}"
cargo build --profile "$profile" --target wasm32-unknown-unknown -p berth-web --lib --features hydrate
mkdir -p "$site/pkg"
# The CLI must match the wasm-bindgen crate of Cargo.lock (make tools
# installs that version); --target web: an ES module Leptos's hydration
# script imports.
# --remove-name-section: 7.5 of the module's 11.9 MB are function names,
# which only a stack trace of a panic would show (its message and source
# line are kept).
wasm-bindgen --target web --no-typescript --remove-name-section --out-dir "$site/pkg" --out-name berth \
  "$target_dir/wasm32-unknown-unknown/$profile/berth_web.wasm"
# wasm-opt (Debian's binaryen 108, installed by scripts/install-tools.sh)
# is NOT run by default: its output of this module fails in Chromium
# (`WebAssembly.Table.set(): … function-typed object`: the externref table
# wasm-bindgen fills), seen at -O1 on 2026-12-07. Measured before that
# (docs/performance.md): -Oz and -Os make the raw module smaller but its
# gzip and Brotli copies larger; -O1 was 0.5 % smaller than no wasm-opt.
# BERTH_WASM_OPT=-O1 (or another level) runs it, for a newer binaryen.
# The features are those rustc enables for wasm32-unknown-unknown, so
# wasm-opt may keep and use them; nothing newer is enabled, so the module
# runs where it ran before.
wasm_opt="${BERTH_WASM_OPT:-none}"
if [ "$wasm_opt" != none ] && command -v wasm-opt >/dev/null; then
  start=$(date +%s)
  wasm-opt "$wasm_opt" --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals --enable-reference-types --enable-multivalue \
    -o "$site/pkg/berth_bg.wasm.opt" "$site/pkg/berth_bg.wasm"
  mv "$site/pkg/berth_bg.wasm.opt" "$site/pkg/berth_bg.wasm"
  echo "wasm-opt $wasm_opt: $(($(date +%s) - start)) s"
elif [ "$wasm_opt" != none ]; then
  echo "note: wasm-opt is not installed (Debian: apt-get install binaryen; make tools does it):" \
    "the module is left unoptimised, several megabytes larger" >&2
fi
rm -rf "$site/style"
cp -r style "$site/style"
cp -r public/. "$site/"
# Pre-compressed copies: the server sends the Brotli one to browsers that
# take it (Chromium and Firefox do), else the gzip one. Old copies go
# first, so a copy never outlives the file it was made from.
for f in "$site/pkg/berth_bg.wasm" "$site/pkg/berth.js" "$site/style/berth.css" "$site/world.svg"; do
  rm -f "$f.gz" "$f.br"
  gzip -9 -k -f "$f"
  if command -v brotli >/dev/null; then
    brotli -q 11 -k -f "$f"
  fi
done
if ! command -v brotli >/dev/null; then
  echo "note: brotli is not installed (Debian: apt-get install brotli; make tools does it):" \
    "no Brotli copies, browsers get the gzip ones" >&2
fi
wasm="$site/pkg/berth_bg.wasm"
echo "web bundle in $site: berth_bg.wasm $(wc -c <"$wasm") bytes," \
  "$(wc -c <"$wasm.gz") gzipped, $( [ -f "$wasm.br" ] && wc -c <"$wasm.br" || echo 'no') Brotli"
