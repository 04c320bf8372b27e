#!/usr/bin/env python3
"""Structure counts of the Rust workspace, re-measurable at any commit.

Prints, per crate where it applies:
  - non-test definitions over 150 lines (fn, struct, enum, union, trait,
    macro_rules, const, static: an `impl` or `mod` block is a container,
    its functions count one by one);
  - non-test files over 1,000 lines (wc -l of the files under src/);
  - hand-written contract lines (server/src/http/*openapi.yaml);
  - hand-built API paths in clients: string literals that start with
    `/api/` or `{server}/api/` in the web app, the CLI, the agent and the
    observation client;
  - pairs the `duplicates` tool lists with both sides outside tests, when
    that tool is on PATH (it is measured on a copy of the tree without
    test folders and with every `#[cfg(test)]` item blanked, so line
    numbers stay).

Non-test means: under a crate's src/ (or build.rs), and not inside an item
marked `#[cfg(test)]`. Usage: python3 scripts/structure-counts.py [--list]
(--list prints each offender).
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRATES = ["api", "engine", "engine-wasm", "server", "web", "deploy/check"]
# The limits issue 39 holds units to: a definition a reader can hold on a
# screen or two, a file a reader can hold in one sitting.
DEF_LIMIT = 150
FILE_LIMIT = 1000
CLIENTS = ["web/src", "server/src/cli", "server/src/agent.rs", "server/src/submit.rs"]
# Folders whose files are tests, fixtures or test tooling, not product code.
TEST_DIRS = {"tests", "end2end", "fixtures", "benches", "examples", "node_modules", "target"}

ITEM = re.compile(
    r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern(?:\s+\"[^\"]*\")?)\s+)*"
    r"(fn|struct|enum|union|trait|macro_rules!|const|static|impl|mod)\b\s*([A-Za-z_][A-Za-z0-9_]*)?"
)


def strip_code(text):
    """The text with comments, strings and char literals blanked (newlines
    kept), so braces can be matched."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'r(#*)"', text[i:])
            close = '"' + m.group(1)
            j = text.find(close, i + len(m.group(0)))
            j = n if j < 0 else j + len(close)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'":
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|\\x[0-9a-fA-F]{2}|[^\\'])'", text[i:i + 12])
            if m:
                out.append(" " * len(m.group(0)))
                i += len(m.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def items(path):
    """(kind, name, first line, last line, in_test) of every braced item."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    code = strip_code(text)
    lines = code.split("\n")
    found = []
    # Depth at the start of every line, to pair an item's opening brace.
    stack = []  # (kind, name, start line, depth at open, in_test)
    depth = 0
    pending = None  # item header seen, its brace not yet
    test_attr_line = -10
    test_depth = None
    for ln, line in enumerate(lines, 1):
        if re.search(r"#\[cfg\(test\)\]", line):
            test_attr_line = ln
        m = ITEM.match(line)
        if m and pending is None:
            kind = m.group(1).rstrip("!")
            in_test = test_depth is not None or ln - test_attr_line <= 2
            pending = (kind, m.group(2) or "", ln, in_test)
        for ch in line:
            if ch == "{":
                if pending is not None:
                    stack.append((*pending[:3], depth, pending[3]))
                    if pending[3] and test_depth is None:
                        test_depth = depth
                    pending = None
                depth += 1
            elif ch == "}":
                depth -= 1
                if stack and stack[-1][3] == depth:
                    kind, name, start, _, in_test = stack.pop()
                    found.append((kind, name, start, ln, in_test))
                    if test_depth == depth:
                        test_depth = None
            elif ch == ";" and pending is not None:
                pending = None  # `struct X;`, `mod x;`, a fn signature in a trait
    return found, text


def rust_files(crate):
    out = []
    base = os.path.join(ROOT, crate)
    for dirpath, dirs, files in os.walk(base):
        dirs[:] = [d for d in dirs if d not in TEST_DIRS]
        rel = os.path.relpath(dirpath, base)
        if rel != "." and not (rel == "src" or rel.startswith("src" + os.sep)):
            continue
        for f in files:
            if f.endswith(".rs") and (rel != "." or f == "build.rs"):
                out.append(os.path.join(dirpath, f))
    return sorted(out)


def main():
    show = "--list" in sys.argv
    total_defs = total_files = 0
    print(f"definitions over {DEF_LIMIT} lines / files over {FILE_LIMIT} lines (non-test), per crate:")
    for crate in CRATES:
        defs, big = [], []
        for path in rust_files(crate):
            found, text = items(path)
            rel = os.path.relpath(path, ROOT)
            for kind, name, a, b, in_test in found:
                if in_test or kind in ("impl", "mod"):
                    continue
                if b - a + 1 > DEF_LIMIT:
                    defs.append((b - a + 1, f"{rel}:{a} {kind} {name}"))
            nlines = text.count("\n")
            if nlines > FILE_LIMIT:
                big.append((nlines, rel))
        total_defs += len(defs)
        total_files += len(big)
        print(f"  {crate}: {len(defs)} definitions, {len(big)} files")
        if show:
            for n, what in sorted(defs, reverse=True):
                print(f"      {n:5} {what}")
            for n, what in sorted(big, reverse=True):
                print(f"      {n:5} {what} (file)")
    print(f"  total: {total_defs} definitions, {total_files} files")

    yaml = 0
    http = os.path.join(ROOT, "server/src/http")
    for f in sorted(os.listdir(http)):
        if f.endswith("openapi.yaml"):
            with open(os.path.join(http, f), encoding="utf-8") as fh:
                yaml += sum(1 for _ in fh)
    print(f"hand-written contract lines (server/src/http/*openapi.yaml): {yaml}")
    # Since issue 39 the contract's words are Rust: the endpoint
    # declarations (api/src/endpoint/, less the module with the types and
    # the macro) and the shared words (server/src/http/openapi/components.rs and
    # components/).
    words = 0
    ep = os.path.join(ROOT, "api/src/endpoint")
    for f in (sorted(os.listdir(ep)) if os.path.isdir(ep) else []):
        if f.endswith(".rs") and f not in ("mod.rs", "words.rs"):
            with open(os.path.join(ep, f), encoding="utf-8") as fh:
                words += sum(1 for _ in fh)
    # components.rs and, since it was split, its folder of groups.
    comp = os.path.join(ROOT, "server/src/http/openapi/components.rs")
    comp_dir = os.path.join(ROOT, "server/src/http/openapi/components")
    parts = [comp] + ([os.path.join(comp_dir, f) for f in sorted(os.listdir(comp_dir))
                       if f.endswith(".rs")] if os.path.isdir(comp_dir) else [])
    for part in parts:
        if os.path.isfile(part):
            with open(part, encoding="utf-8") as fh:
                words += sum(1 for _ in fh)
    print(f"contract words written in Rust (endpoint declarations and shared words): {words}")

    path_lit = re.compile(r'"(\{[^}"]*\})?/api/')
    paths = []
    for c in CLIENTS:
        full = os.path.join(ROOT, c)
        files = [full] if os.path.isfile(full) else [
            os.path.join(d, f) for d, _, fs in os.walk(full) for f in fs if f.endswith(".rs")]
        for path in sorted(files):
            with open(path, encoding="utf-8") as fh:
                for ln, line in enumerate(fh, 1):
                    if line.lstrip().startswith("//"):
                        continue
                    for _ in path_lit.finditer(line):
                        paths.append(f"{os.path.relpath(path, ROOT)}:{ln}")
    print(f"hand-built API paths in clients: {len(paths)}")
    if show:
        for p in paths:
            print(f"      {p}")

    if shutil.which("duplicates"):
        print(f"duplicates pairs with both sides outside tests: {duplicates_outside_tests(show)}")
    else:
        print("duplicates pairs: the `duplicates` tool is not on PATH, not measured")


def duplicates_outside_tests(show):
    """Pairs on a copy of the tracked tree without tests (test folders
    left out, `#[cfg(test)]` items blanked line for line)."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split("\n")
    with tempfile.TemporaryDirectory() as tmp:
        for rel in tracked:
            if not rel or any(part in TEST_DIRS for part in rel.split("/")[:-1]):
                continue
            src = os.path.join(ROOT, rel)
            if not os.path.isfile(src):
                continue
            dst = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if rel.endswith(".rs"):
                found, text = items(src)
                lines = text.split("\n")
                for kind, _, a, b, in_test in found:
                    if in_test:
                        for i in range(a - 1, b):
                            lines[i] = ""
                # the attribute lines above a blanked item
                with open(dst, "w", encoding="utf-8") as fh:
                    fh.write("\n".join(lines))
            else:
                shutil.copyfile(src, dst)
        out = subprocess.run(["duplicates", "--repo", tmp, "--most", "200", "--seconds", "120"],
                             capture_output=True, text=True).stdout
    first = out.split("\n", 1)[0]
    if show:
        print(out)
    m = re.match(r"(\d+) pairs", first)
    if not m:
        return first
    plain = sum(1 for row in out.split("\n") if row.startswith("D") and not row.endswith("boilerplate"))
    return f"{m.group(1)} ({plain} of the listed not marked boilerplate)"


if __name__ == "__main__":
    main()
