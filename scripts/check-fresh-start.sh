#!/usr/bin/env bash
# From a clean environment to a hydrated Placement page, with the README's
# commands only (issue 13): a fresh clone of this repository, a Rust
# toolchain WITHOUT the wasm32 target, a CARGO_HOME without wasm-bindgen,
# nothing of ours on PATH; then `make run` in the clone, and Chromium signs
# in with the printed bootstrap token and waits for the Placement page to
# hydrate and show advice that matches the server's.
#
#   scripts/check-fresh-start.sh            # everything from scratch (~30 min on 2 cores)
#   FRESH_TARGET=target scripts/check-fresh-start.sh
#       # start the clone's target/ from a copy of this one: the tools are
#       # still installed from nothing, only compiled crates are reused
#
# Needs: git, rustup's toolchain in ~/.rustup (copied, then the wasm32
# target removed from the copy), network access to crates.io and rustup's
# server, Node with end2end/node_modules (playwright-core), Chromium.
# Not run by `make test` (it downloads and compiles for a long time).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
fresh="$(mktemp -d /tmp/berth-fresh.XXXXXX)"
echo "fresh environment in $fresh"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM -- "-$server_pid" 2>/dev/null || true; fi
}
trap cleanup EXIT

git clone --quiet "$repo" "$fresh/berth"
# The toolchain, as a fresh machine has it: no WebAssembly target.
cp -a "${RUSTUP_HOME:-$HOME/.rustup}" "$fresh/rustup"
export RUSTUP_HOME="$fresh/rustup"
rustup target remove wasm32-unknown-unknown >/dev/null 2>&1 || true
# An empty CARGO_HOME: no wasm-bindgen, no registry cache.
export CARGO_HOME="$fresh/cargo"
mkdir -p "$CARGO_HOME/bin" "$fresh/bin"
for tool in cargo rustc rustup rustdoc; do
  ln -s "$(command -v "$tool")" "$fresh/bin/$tool"
done
export PATH="$fresh/bin:/usr/local/bin:/usr/bin:/bin"
if command -v wasm-bindgen >/dev/null; then
  echo "wasm-bindgen is still on PATH ($(command -v wasm-bindgen)): not a clean environment" >&2
  exit 1
fi
if rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  echo "the wasm32 target is still installed: not a clean environment" >&2
  exit 1
fi
if [ -n "${FRESH_TARGET:-}" ]; then
  cp -a "$repo/$FRESH_TARGET" "$fresh/berth/target"
  rm -rf "$fresh/berth/target/site"
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cd "$fresh/berth"
echo "make run (log in $fresh/run.log)"
setsid make run SERVE_ARGS="--listen 127.0.0.1:$port" >"$fresh/run.log" 2>&1 &
server_pid=$!
deadline=$((SECONDS + 3600))
until curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; do
  if ! kill -0 "$server_pid" 2>/dev/null; then
    echo "make run stopped before the server was ready:" >&2
    tail -30 "$fresh/run.log" >&2
    exit 1
  fi
  if [ $SECONDS -gt $deadline ]; then echo "not ready after an hour" >&2; exit 1; fi
  sleep 5
done
token=$(grep -A2 'bootstrap administrator token' "$fresh/run.log" | grep -Eo 'berth_[A-Za-z0-9_-]+' | head -1)
if [ -z "$token" ]; then
  echo "no bootstrap token in the output of make run" >&2
  exit 1
fi
grep -E 'installing the wasm32|installing wasm-bindgen' "$fresh/run.log" || true
cd "$repo/end2end"
BERTH_BASE="http://127.0.0.1:$port" BERTH_TOKEN="$token" ARTIFACT="$repo/end2end/artifacts/fresh-start.png" \
  node fresh-start.mjs
echo "fresh start: OK (make run installed the tools, built the bundle into the binary, and the page hydrated)"
