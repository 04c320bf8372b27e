#!/usr/bin/env bash
# Server benchmark: the speed targets of the server issue, measured against
# a real `berth serve` on SQLite, on this machine.
#
#   cached advice p99   ≤  20 ms  (1,000-service estate, 32 concurrent clients)
#   uncached advice p99 ≤ 200 ms  (same estate, every request a cache miss)
#   import, 5,000-svc   ≤   5 s   (PUT of the estate file, median of 3)
#
# Starts its own server (temporary data dir, a port the kernel picks),
# prints a table of figures against targets, cleans up, and exits 1 if a
# target is missed. `make bench-server` runs it. Environment:
#   BENCH_DURATION   wrk run length (default 15s)
#   CARGO_TARGET_DIR where cargo builds (default ./target)
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION="${BENCH_DURATION:-15s}"
CONNECTIONS=32
THREADS=2
UNCACHED_RUNS=40
IMPORT_RUNS=3
NOW=2026-11-30T04:05:00Z
TARGET_DIR="${CARGO_TARGET_DIR:-target}"

# ---- tools ---------------------------------------------------------------
if ! command -v wrk >/dev/null; then
  echo "installing wrk (the load generator, from Debian)"
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi
for tool in curl awk sort; do
  command -v "$tool" >/dev/null || { echo "bench-server: $tool is required" >&2; exit 2; }
done

cargo build --quiet --release -p berth --bin berth --example gen_estate
BIN="$TARGET_DIR/release/berth"
GEN="$TARGET_DIR/release/examples/gen_estate"

# ---- a server of our own -------------------------------------------------
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

TOKEN="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')"
AUTH="Authorization: Bearer $TOKEN"

"$GEN" 1000 20 >"$WORK/estate-1k.json"
# Pretty-printed, as a person's file would be: the larger body (~12 MB).
"$GEN" 5000 50 --pretty >"$WORK/estate-5k.json"

# Port 0: the kernel picks a free port and the server logs the address it
# got, so there is no window in which another process can take it.
# Per-request log lines (tower_http) are off: 100,000 lines into a file
# would measure the log writer; the server's own info lines stay on.
env -u BERTH_DATABASE_URL -u BERTH_LISTEN -u BERTH_DATA_DIR -u BERTH_LOG_FORMAT \
  BERTH_ADMIN_TOKEN="$TOKEN" RUST_LOG=info,sqlx=warn,tower_http=warn \
  "$BIN" serve --listen 127.0.0.1:0 --data-dir "$WORK/data" --no-seed \
  >"$WORK/server.out" 2>"$WORK/server.log" &
SERVER_PID=$!
BASE=""
for _ in $(seq 1 300); do
  BASE="$(grep -o 'listening on http://[0-9.:]*' "$WORK/server.log" | head -1 | sed 's/listening on //' || true)"
  [ -n "$BASE" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || break
  sleep 0.1
done
if [ -z "$BASE" ]; then
  echo "bench-server: the server did not start; its log:" >&2
  cat "$WORK/server.log" >&2
  exit 2
fi

# request METHOD URL [FILE]: "STATUS SECONDS" of one authenticated request
# (the body lands in $WORK/response).
request() {
  local method="$1" url="$2" file="${3:-}"
  if [ -n "$file" ]; then
    curl -s -o "$WORK/response" -w '%{http_code} %{time_total}' -X "$method" \
      -H "$AUTH" -H 'Content-Type: application/json' --data-binary "@$file" "$url"
  else
    curl -s -o "$WORK/response" -w '%{http_code} %{time_total}' -X "$method" -H "$AUTH" "$url"
  fi
}
expect() { # expect STATUS "CODE TIME" WHAT
  local code="${2%% *}"
  if [ "$code" != "$1" ]; then
    echo "bench-server: $3 answered $code, expected $1:" >&2
    head -c 2000 "$WORK/response" >&2
    echo >&2
    exit 2
  fi
}
misses() {
  curl -s "$BASE/metrics" | awk '/^berth_result_cache_total\{op="advice",outcome="miss"\}/ {print $2}' | grep . || echo 0
}
# percentile Q < numbers: nearest-rank percentile (Q in 0–100).
percentile() {
  sort -n | awk -v q="$1" '{v[NR] = $1} END {
    if (NR == 0) { print "nan"; exit }
    r = int((q / 100) * NR); if (r < (q / 100) * NR) r++; if (r < 1) r = 1
    print v[r] }'
}

echo "server $BASE (SQLite in a temporary directory), wrk $(wrk --version 2>&1 | head -1 | awk '{print $2}')"

expect 201 "$(request POST "$BASE/api/estates?id=bench" "$WORK/estate-1k.json")" "creating the 1,000-service estate"
COUNTS="$(curl -s -H "$AUTH" "$BASE/api/estates/bench" | grep -o '"counts":{[^}]*}')"
SERVICES="$(echo "$COUNTS" | grep -o '"services":[0-9]*' | cut -d: -f2)"
CLUSTERS="$(echo "$COUNTS" | grep -o '"clusters":[0-9]*' | cut -d: -f2)"
FLOWS="$(echo "$COUNTS" | grep -o '"flows":[0-9]*' | cut -d: -f2)"

# ---- cached advice: one evaluation time, 32 clients at once ---------------
ADVICE="$BASE/api/estates/bench/advice?now=$NOW"
expect 200 "$(request GET "$ADVICE")" "the first (warming) advice request"
ADVICE_BYTES="$(wc -c <"$WORK/response")"
echo "cached advice: wrk -t$THREADS -c$CONNECTIONS -d$DURATION --latency …"
# On a virtual machine the host may take CPU time away ("steal"); the tail
# latency depends on it more than on anything in the server, so it is
# reported beside the figures.
cpu_times() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t, $9}' /proc/stat; }
read -r total0 steal0 < <(cpu_times)
wrk -t"$THREADS" -c"$CONNECTIONS" -d"$DURATION" --latency -H "$AUTH" "$ADVICE" >"$WORK/wrk.txt"
read -r total1 steal1 < <(cpu_times)
STEAL="$(awk -v t=$((total1 - total0)) -v s=$((steal1 - steal0)) 'BEGIN { printf "%.0f", (t > 0 ? 100 * s / t : 0) }')"
if grep -q 'Non-2xx' "$WORK/wrk.txt"; then
  echo "bench-server: wrk saw error responses:" >&2
  cat "$WORK/wrk.txt" >&2
  exit 2
fi
# wrk prints latencies with their own unit (us, ms, s): to ms.
to_ms() { awk '{ v = $1; if (v ~ /us$/) { sub(/us$/, "", v); v /= 1000 } else if (v ~ /ms$/) { sub(/ms$/, "", v) } else if (v ~ /s$/) { sub(/s$/, "", v); v *= 1000 } printf "%.2f", v }'; }
C_P50="$(awk '$1 == "50%" {print $2}' "$WORK/wrk.txt" | to_ms)"
C_P99="$(awk '$1 == "99%" {print $2}' "$WORK/wrk.txt" | to_ms)"
C_RPS="$(awk '/^Requests\/sec:/ {printf "%.0f", $2}' "$WORK/wrk.txt")"
C_REQS="$(awk '/requests in/ {print $1}' "$WORK/wrk.txt")"

# ---- uncached advice: a new evaluation time per request -------------------
# Each `now` is distinct, so each request misses the result cache and runs
# the engine (the parsed estate stays cached, as it does between requests
# of a real client). Checked against the server's own cache counter.
before="$(misses)"
: >"$WORK/uncached.txt"
for i in $(seq 1 "$UNCACHED_RUNS"); do
  now="2026-11-30T$(printf '%02d:%02d' $((5 + i / 60)) $((i % 60))):00Z"
  out="$(request GET "$BASE/api/estates/bench/advice?now=$now")"
  expect 200 "$out" "uncached advice ($now)"
  echo "${out#* }" | awk '{printf "%.2f\n", $1 * 1000}' >>"$WORK/uncached.txt"
done
after="$(misses)"
if [ $((after - before)) -ne "$UNCACHED_RUNS" ]; then
  echo "bench-server: expected $UNCACHED_RUNS cache misses, the server counted $((after - before))" >&2
  exit 2
fi
U_P50="$(percentile 50 <"$WORK/uncached.txt")"
U_P99="$(percentile 99 <"$WORK/uncached.txt")"

# ---- import of the 5,000-service estate ------------------------------------
IMPORT_BYTES="$(wc -c <"$WORK/estate-5k.json")"
expect 201 "$(request POST "$BASE/api/estates?id=bench5k" "$WORK/estate-1k.json")" "creating the import target"
: >"$WORK/import.txt"
for i in $(seq 1 "$IMPORT_RUNS"); do
  out="$(request PUT "$BASE/api/estates/bench5k/file" "$WORK/estate-5k.json")"
  expect 200 "$out" "import $i of the 5,000-service estate"
  echo "${out#* }" >>"$WORK/import.txt"
done
I_MED="$(percentile 50 <"$WORK/import.txt" | awk '{printf "%.2f", $1}')"
I_ALL="$(sort -n "$WORK/import.txt" | awk '{printf "%s%.2f", (NR > 1 ? " / " : ""), $1}')"

# ---- the table -------------------------------------------------------------
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v + 0 <= t + 0) ? "ok" : "MISSED" }'; }
V1="$(verdict "$C_P99" 20)"
V2="$(verdict "$U_P99" 200)"
V3="$(verdict "$I_MED" 5)"
CPU="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
echo
echo "Berth server benchmark, $(date -u +%Y-%m-%dT%H:%MZ)"
echo "machine: $(nproc) cores ($CPU), $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "CPU time taken by the host (steal) during the wrk run: $STEAL %"
echo "estate: $SERVICES services, $CLUSTERS clusters, $FLOWS flows; advice body $ADVICE_BYTES bytes; SQLite"
echo
printf '%-52s %12s %10s  %s\n' "measure" "figure" "target" ""
printf '%-52s %12s %10s  %s\n' "cached advice p99, $CONNECTIONS clients (wrk, $DURATION)" "$C_P99 ms" "≤ 20 ms" "$V1"
printf '%-52s %12s %10s\n' "cached advice p50" "$C_P50 ms" ""
printf '%-52s %12s %10s\n' "cached advice throughput ($C_REQS requests)" "$C_RPS req/s" ""
printf '%-52s %12s %10s  %s\n' "uncached advice p99 ($UNCACHED_RUNS sequential, distinct now)" "$U_P99 ms" "≤ 200 ms" "$V2"
printf '%-52s %12s %10s\n' "uncached advice p50" "$U_P50 ms" ""
printf '%-52s %12s %10s  %s\n' "import 5,000 services ($((IMPORT_BYTES / 1048576)) MiB), median of $IMPORT_RUNS" "$I_MED s" "≤ 5 s" "$V3"
printf '%-52s %12s\n' "  (each import, s)" "$I_ALL"
echo
if [ "$V1$V2$V3" != "okokok" ]; then
  echo "bench-server: a target was missed" >&2
  exit 1
fi
