#!/usr/bin/env bash
# The browser bundle's size check (`make test` runs it after
# scripts/build-web.sh): fails when a compressed copy a browser downloads
# has grown more than 10 % over its budget in web/size-budget.txt.
# When a change grows the bundle on purpose, raise the budget in the same
# commit and say why; when it shrinks, lower it so the 10 % stays tight.
# Arguments: the site root (default target/site, as build-web.sh), and
# BERTH_SIZE_BUDGET names another budget file.
set -euo pipefail
cd "$(dirname "$0")/.."
site="${1:-${BERTH_SITE_ROOT:-target/site}}"
budget="${BERTH_SIZE_BUDGET:-web/size-budget.txt}"
# How far over its budget a file may grow before the check fails: room
# for ordinary features, not for an unoptimised module or a new heavy
# dependency (either adds well over 10 %).
allowance_pct=10
failed=0
checked=0
while read -r file bytes _; do
  case "$file" in '' | '#'*) continue ;; esac
  if ! [[ "$bytes" =~ ^[0-9]+$ ]]; then
    echo "$budget: the budget of $file is '$bytes', not a number of bytes" >&2
    exit 2
  fi
  path="$site/$file"
  if [ ! -f "$path" ]; then
    echo "FAIL $path does not exist: run scripts/build-web.sh (with wasm-opt and brotli installed: make tools)" >&2
    failed=1
    continue
  fi
  have=$(wc -c <"$path")
  limit=$((bytes * (100 + allowance_pct) / 100))
  pct=$(((have * 1000 / bytes + 5) / 10 - 100))
  if [ "$have" -gt "$limit" ]; then
    echo "FAIL $file is $have bytes, ${pct} % over its budget of $bytes (limit $limit, +$allowance_pct %, $budget)" >&2
    failed=1
  else
    echo "ok   $file $have bytes (budget $bytes, ${pct} %)"
  fi
  checked=$((checked + 1))
done <"$budget"
if [ "$checked" -eq 0 ] && [ "$failed" -eq 0 ]; then
  echo "$budget lists no file" >&2
  exit 2
fi
exit "$failed"
