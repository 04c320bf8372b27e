#!/usr/bin/env python3
"""Memory a running `berth serve` takes for large requests (issue 37 item 4).

Starts the given berth binary on a fresh SQLite data directory and prints,
for each case, the server's resident memory before and its peak during
(VmHWM, reset through /proc/PID/clear_refs before each case), and what
each request was answered:

  * Kubernetes imports of a 9 MiB and a 63 MiB body, four at once from one
    agent token (the agent's re-sync route);
  * 60 connections asking for a 24 MiB estate file (`GET …/file`) with a
    viewer token and never reading, held 20 s.

Usage: scripts/measure-memory.py [BERTH_BINARY]   (default target/release/berth)
Figures, not a test: compare two binaries (before and after a change).
"""

import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/release/berth"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ADMIN = "admin-token-for-memory-0123456789abcdef"
PORT = 38000 + os.getpid() % 1000


def mib(kb):
    return f"{kb / 1024:,.0f} MiB"


def status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def reset_peak(pid):
    # 5: reset the peak resident set size (VmHWM) to the current one.
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def call(method, path, token, body=None, ctype="application/json"):
    req = urllib.request.Request(f"http://127.0.0.1:{PORT}{path}", method=method, data=body)
    req.add_header("Authorization", f"Bearer {token}")
    if body is not None:
        req.add_header("Content-Type", ctype)
    try:
        with urllib.request.urlopen(req, timeout=600) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except (ConnectionError, urllib.error.URLError) as e:
        return 0, str(e).encode()


def token(body):
    status_, out = call("POST", "/api/tokens", ADMIN, json.dumps(body).encode())
    if status_ == 400 and b"clusters" in out:
        # A server from before cluster scopes knows no such field.
        body = {k: v for k, v in body.items() if k != "clusters"}
        status_, out = call("POST", "/api/tokens", ADMIN, json.dumps(body).encode())
    assert status_ == 201, out
    return json.loads(out)["token"]


def deployments(target_bytes):
    """A DeploymentList (as the agent sends the API's lists) inside an
    import request body of about `target_bytes` (the list is quoted inside
    the body's JSON, which grows it: sized twice to land close)."""
    first = deployments_of(target_bytes)
    return deployments_of(int(target_bytes * target_bytes / len(first)))


def deployments_of(target_bytes):
    items = []
    size = 0
    i = 0
    while size < target_bytes:
        d = {
            "metadata": {"name": f"svc-{i}", "namespace": "shop", "labels": {"app": f"svc-{i}"},
                         "annotations": {"note": "x" * 200}},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": f"svc-{i}"}},
                     "template": {"metadata": {"labels": {"app": f"svc-{i}"}},
                                  "spec": {"containers": [{"name": "main", "image": f"registry.example/svc-{i}:1.0",
                                                           "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
                                                           "env": [{"name": f"E{k}", "value": "v" * 20} for k in range(8)]}]}}},
        }
        items.append(d)
        size += len(json.dumps(d))
        i += 1
    text = json.dumps({"apiVersion": "apps/v1", "kind": "DeploymentList", "items": items})
    return json.dumps({"cluster": "c-fra-3", "files": [{"name": "api:ctx/deployments", "text": text}],
                       "dry_run": True}).encode()


def big_estate(target_bytes):
    with open(os.path.join(ROOT, "examples/estates/sample.json")) as f:
        doc = json.load(f)
    template = doc["services"][0]
    i = 0
    size = len(json.dumps(doc))
    while size < target_bytes:
        s = dict(template)
        s["id"] = f"gen-{i:06d}"
        s["name"] = f"generated service {i} of the memory measurement"
        doc["services"].append(s)
        size += len(json.dumps(s)) + 2
        i += 1
    return json.dumps(doc).encode()


def peak_during(pid, run):
    before = status(pid, "VmRSS")
    reset_peak(pid)
    stop = threading.Event()
    polled = [before]

    def poll():
        while not stop.is_set():
            polled.append(status(pid, "VmRSS"))
            time.sleep(0.02)

    t = threading.Thread(target=poll)
    t.start()
    answers = run()
    stop.set()
    t.join()
    peak = max(status(pid, "VmHWM"), max(polled))
    return before, peak, answers


class Server:
    """A fresh `berth serve` (its own SQLite directory) for one case."""

    def __enter__(self):
        data = tempfile.mkdtemp(prefix="berth-mem-")
        env = dict(os.environ, BERTH_ADMIN_TOKEN=ADMIN, RUST_LOG="warn")
        self.proc = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{PORT}", "--data-dir", data],
                                     env=env, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(data, "log"), "w"))
        for _ in range(300):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/healthz", timeout=1)
                break
            except Exception:
                time.sleep(0.1)
        return self.proc.pid

    def __exit__(self, *exc):
        self.proc.terminate()
        self.proc.wait(timeout=60)


def main():
    print(f"binary: {BIN}")
    for size_mib in (9, 63):
        with Server() as pid:
            agent = token({"name": "agent", "role": "agent", "estate": "sample",
                           "clusters": ["c-fra-3"], "may_sync_services": True})
            body = deployments(size_mib * 1024 * 1024)

            def four():
                out = [None] * 4

                def one(k):
                    out[k] = call("POST", "/api/estates/sample/import/kubernetes", agent, body)[0]

                ts = [threading.Thread(target=one, args=(k,)) for k in range(4)]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                return out

            before, peak, answers = peak_during(pid, four)
            print(f"kubernetes import, {len(body) / 1048576:.1f} MiB body, 4 at once from one agent token: "
                  f"RSS {mib(before)} -> peak {mib(peak)} (+{mib(peak - before)}); answers {answers}")

    with Server() as pid:
        viewer = token({"name": "viewer", "role": "viewer"})
        estate = big_estate(24 * 1024 * 1024)
        st, out = call("POST", "/api/estates?id=big", ADMIN, estate)
        assert st == 201, out[:300]

        def stalled():
            socks = []
            for _ in range(60):
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect(("127.0.0.1", PORT))
                s.sendall(f"GET /api/estates/big/file HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {viewer}\r\n\r\n".encode())
                socks.append(s)
            time.sleep(20)
            heads = []
            for s in socks:
                s.settimeout(2)
                try:
                    heads.append(s.recv(64).split(b"\r\n")[0].decode(errors="replace"))
                except OSError:
                    heads.append("(nothing)")
                s.close()
            counts = {}
            for h in heads:
                counts[h] = counts.get(h, 0) + 1
            return counts

        before, peak, answers = peak_during(pid, stalled)
        print(f"60 readers of a {len(estate) / 1048576:.1f} MiB estate file that never read, held 20 s: "
              f"RSS {mib(before)} -> peak {mib(peak)} (+{mib(peak - before)}); first lines {answers}")


if __name__ == "__main__":
    main()
