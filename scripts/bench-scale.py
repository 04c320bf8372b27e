#!/usr/bin/env python3
"""Advice that grows with the input (issue 18, item 5; docs/performance.md).

On the seeded `gen_estate` estates (`Shape::sized(42, S, C)`), times
`validate` and `advise` in their own processes, paired and alternated in one
run (this machine is shared: ratios of one run, not figures across runs), and
reads each process's peak memory from the kernel (wait4's ru_maxrss). Two
paths, printed as two tables:

- engine: `engine/examples/scale.rs`, which reads the file before its clock
  starts and prints the phase's milliseconds (load, or load + advise + JSON);
- CLI: `berth validate FILE` against `berth advise FILE --now …` (JSON to
  /dev/null), wall clock of the whole process, what a user waits for.

Targets: advise ÷ validate ≤ 2.0 in time and ≤ 1.5 in peak memory.

Environment: BENCH_SCALE_SIZES (default "5000x50 20000x200 50000x400 100000x1000"),
BENCH_SCALE_RUNS (default 3 pairs per size and path).
"""

import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
RELEASE = os.path.join(TARGET, "release")
SCALE = os.path.join(RELEASE, "examples", "scale")
BERTH = os.path.join(RELEASE, "berth")
DATA = os.path.join(TARGET, "bench-scale")
# The generator's evaluation time (engine/src/gen.rs `NOW`): the CLI must
# advise at the same instant the engine path does.
NOW = "2026-11-30T04:05:00Z"
TIME_TARGET = 2.0
MEMORY_TARGET = 1.5


def run(argv):
    """Run argv to completion; (stdout, wall ms, peak RSS in MB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, os.environ,
                             file_actions=[(os.POSIX_SPAWN_DUP2, out.fileno(), 1),
                                           (os.POSIX_SPAWN_DUP2, err.fileno(), 2)])
        _, status, usage = os.wait4(pid, 0)
        wall = (time.perf_counter() - start) * 1e3
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            sys.exit(f"bench-scale: {' '.join(argv)} failed ({code}):\n{err.read().decode()}")
        # ru_maxrss is in KiB on Linux.
        return out.read().decode(), wall, usage.ru_maxrss / 1024.0


def build():
    cargo = ["cargo", "build", "--release", "--quiet"]
    subprocess.run(cargo + ["-p", "berth-engine", "--example", "scale"], check=True, cwd=ROOT)
    subprocess.run(cargo + ["-p", "berth", "--bin", "berth"], check=True, cwd=ROOT)


def estate(services, clusters):
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, f"estate-{services}x{clusters}.json")
    if not os.path.exists(path):
        subprocess.run([SCALE, "gen", str(services), str(clusters), path], check=True)
    return path


def measure(path, runs):
    """Per path ("engine", "cli") and phase: lists of (ms, MB), paired."""
    got = {(p, ph): [] for p in ("engine", "cli") for ph in ("validate", "advise")}
    for _ in range(runs):
        for phase in ("validate", "advise"):
            out, _, mb = run([SCALE, phase, path])
            got[("engine", phase)].append((float(out.strip()), mb))
        _, ms, mb = run([BERTH, "validate", path])
        got[("cli", "validate")].append((ms, mb))
        _, ms, mb = run([BERTH, "advise", path, "--now", NOW, "--format", "json"])
        got[("cli", "advise")].append((ms, mb))
    return got


def fmt_range(xs, digits=0):
    lo, hi = min(xs), max(xs)
    f = f"{{:,.{digits}f}}"
    return f.format(lo) if f.format(lo) == f.format(hi) else f"{f.format(lo)}–{f.format(hi)}"


def main():
    sizes = os.environ.get("BENCH_SCALE_SIZES", "5000x50 20000x200 50000x400 100000x1000").split()
    runs = int(os.environ.get("BENCH_SCALE_RUNS", "3"))
    build()
    results = []
    for size in sizes:
        s, c = (int(x) for x in size.split("x"))
        path = estate(s, c)
        print(f"bench-scale: {s:,} × {c} ({os.path.getsize(path) / 1e6:.0f} MB file), {runs} pairs …",
              file=sys.stderr, flush=True)
        results.append((s, c, measure(path, runs)))
    ok = True
    for kind, title in (("engine", "engine (scale example: load, or load + advise)"),
                        ("cli", "CLI (berth validate vs berth advise --format json, whole process)")):
        print(f"\n{title}, {runs} alternated pairs, ms and peak MB:\n")
        print("| services × clusters | validate ms | advise ms | advise ÷ validate (median of pairs) "
              "| validate MB | advise MB | memory ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for s, c, got in results:
            v, a = got[(kind, "validate")], got[(kind, "advise")]
            ratios = [am / vm for (vm, _), (am, _) in zip(v, a)]
            ratio = statistics.median(ratios)
            vmb, amb = max(m for _, m in v), max(m for _, m in a)
            mem = amb / vmb
            ok = ok and ratio <= TIME_TARGET and mem <= MEMORY_TARGET
            print(f"| {s:,} × {c} | {fmt_range([t for t, _ in v])} | {fmt_range([t for t, _ in a])} "
                  f"| {ratio:.2f} ({fmt_range(ratios, 2)}) | {vmb:.0f} | {amb:.0f} | {mem:.2f} |")
    print(f"\ntargets: time ratio ≤ {TIME_TARGET}, memory ratio ≤ {MEMORY_TARGET}: "
          f"{'met' if ok else 'NOT met'}; load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
