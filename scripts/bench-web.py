#!/usr/bin/env python3
"""Measures the web view's server time per page (issue #32: "every page under 100 ms
server time") on an indexed workspace, with varied real inputs drawn from the index.

    scripts/bench-web.py --workspace DIR [--loci target/release/loci] [--requests 100]
                         [--seed 7] [--memories 50] [--json FILE]

It indexes DIR if it has no index yet (`loci index DIR`: a no-op sync when it has one),
starts `loci serve --port 0 --json` with a random `LOCI_API_KEY` (and the environment's
`LOCI_HOME`: give a private one to keep the benchmark out of your registry), signs in
through the one-time URL it prints, and asks the JSON API's SQL route for inputs:
symbols at random (seeded), the definitions with the most callers, files at random and
the most depended on, names and identifiers to search for. It then stores `--memories`
memories through the JSON API in the namespace `bench-web` (about half linked to code,
some with entities and relationships, some edited to have a second version; a run that
finds them from an earlier run reuses them) and requests each page kind `--requests`
times, one request at a time over one keep-alive connection, cycling through its inputs:

    workspaces      /web/
    search-find     /web/w/ID/search?q=NAME_OR_GLOB
    search-text     /web/w/ID/search?q=TEXT&mode=text
    symbol          /web/w/ID/symbol?s=PATH:LINE               (random definitions)
    symbol-hot      /web/w/ID/symbol?s=PATH:LINE               (the most called ones)
    symbol-depth3   /web/w/ID/symbol?s=PATH:LINE&depth=3       (random, callers to depth 3)
    symbol-callees  /web/w/ID/symbol?s=PATH:LINE&dir=callees&depth=2
    impact-def      /web/w/ID/impact?target=PATH:LINE          (depth 3, the default)
    impact-file     /web/w/ID/impact?target=PATH               (depth 3)
    changes         /web/w/ID/changes?rev=REV                  (HEAD~1, HEAD~5, A..B, ...; git only)
    memories        /web/w/ID/memories[?type=T|namespace=N]
    memory          /web/w/ID/memory?namespace=bench-web&name=NAME

Each kind's first request is made once before the measured ones and reported apart
(`first`: a cold page, e.g. the symbol page compiling its language's highlight query).
For the measured ones it prints n, p50, p99 and max of the server's own time (the
`Server-Timing: app;dur=MS` header every page carries) and of the wall time the client
saw (request sent to body read), the slowest input of each kind, the answers that were
not 200, and the load average before and after (the machine may be shared).
`--json FILE` also writes every sample.
"""

import argparse
import http.client
import json
import os
import random
import re
import secrets
import subprocess
import sys
import time
import urllib.parse

from bench_support import pct

NAMESPACE = "bench-web"


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


class Client:
    """One keep-alive HTTP/1.1 connection to the server; the session cookie kept by hand
    (the cookie is `Path=/web`, the key goes only to `/api`)."""

    def __init__(self, addr, key):
        self.host, port = addr.rsplit(":", 1)
        self.port = int(port)
        self.key = key
        self.cookie = None
        self.conn = None

    def _conn(self):
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=300)
        return self.conn

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body bytes, wall ms)."""
        h = dict(headers or {})
        for attempt in (0, 1):
            conn = self._conn()
            t0 = time.perf_counter()
            try:
                conn.request(method, path, body=body, headers=h)
                resp = conn.getresponse()
                data = resp.read()
            except (http.client.HTTPException, ConnectionError):
                conn.close()
                self.conn = None
                if attempt:
                    raise
                continue
            wall = (time.perf_counter() - t0) * 1000
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
                self.conn = None
            return resp.status, resp, data, wall
        raise RuntimeError("unreachable")

    def api(self, method, path, payload=None):
        body = None if payload is None else json.dumps(payload).encode()
        status, _, data, _ = self.request(
            method,
            path,
            body,
            {"Authorization": "Bearer " + self.key, "Content-Type": "application/json"},
        )
        answer = json.loads(data) if data else None
        return status, answer

    def sign_in(self, signin_path):
        status, resp, _, _ = self.request("GET", signin_path)
        if status not in (302, 303, 307):
            sys.exit(f"sign-in answered {status}, not a redirect")
        for name, value in resp.getheaders():
            if name.lower() == "set-cookie" and value.startswith("loci_session="):
                self.cookie = value.split(";", 1)[0]
        if not self.cookie:
            sys.exit("sign-in set no loci_session cookie")

    def page(self, path):
        """(status, server ms or None, wall ms, body length)."""
        status, resp, data, wall = self.request("GET", path, headers={"Cookie": self.cookie})
        timing = resp.getheader("Server-Timing", "")
        m = re.search(r"app;dur=([\d.]+)", timing)
        return status, (float(m.group(1)) if m else None), wall, len(data)


def sql(client, ws, query, max_rows=1000):
    status, answer = client.api(
        "POST", f"/api/v1/workspaces/{ws}/query", {"sql": query, "max_rows": max_rows, "deadline_ms": 10000}
    )
    if status != 200:
        sys.exit(f"query failed ({status}): {answer}\n{query}")
    return answer["rows"]


def q(path, **params):
    params = {k: v for k, v in params.items() if v not in (None, "")}
    return path + ("?" + urllib.parse.urlencode(params, quote_via=urllib.parse.quote) if params else "")


def pick_inputs(client, ws, rng, count):
    """Real inputs from the index: definitions, files, names and words."""
    callable_kinds = "('function','method')"
    (lo, hi), = sql(client, ws, f"SELECT min(id), max(id) FROM symbols WHERE kind IN {callable_kinds}")

    def symbols_by_ids(ids):
        rows = sql(
            client,
            ws,
            "SELECT f.path, s.start_line, s.name, s.qualified_name FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE s.kind IN {callable_kinds} AND s.id IN ({','.join(map(str, ids))}) ORDER BY s.id",
        )
        return [{"path": r[0], "line": r[1], "name": r[2], "qualified": r[3]} for r in rows]

    if lo is None:
        sys.exit("the index holds no function or method")
    symbols = []
    for _ in range(10):
        if len(symbols) >= count:
            break
        ids = sorted(rng.sample(range(lo, hi + 1), min(hi - lo + 1, 3 * count)))
        symbols += symbols_by_ids(ids)
    rng.shuffle(symbols)
    symbols = symbols[:count]
    hot_ids = [
        r[0]
        for r in sql(
            client,
            ws,
            "SELECT dst_symbol, count(*) AS n FROM edges WHERE kind = 'CALLS' AND dst_symbol IS NOT NULL "
            "GROUP BY dst_symbol ORDER BY n DESC LIMIT 30",
        )
    ]
    hot_ids = hot_ids or [-1]
    hot_callers = dict(
        (r[0], r[1])
        for r in sql(
            client,
            ws,
            "SELECT dst_symbol, count(*) FROM edges WHERE kind = 'CALLS' AND dst_symbol IN "
            f"({','.join(map(str, hot_ids))}) GROUP BY dst_symbol",
        )
    )
    hot = [
        {"path": r[0], "line": r[1], "name": r[2], "qualified": r[3], "callers": hot_callers.get(r[4], 0)}
        for r in sql(
            client,
            ws,
            "SELECT f.path, s.start_line, s.name, s.qualified_name, s.id FROM symbols s JOIN files f ON f.id = s.file_id "
            f"WHERE s.id IN ({','.join(map(str, hot_ids))})",
        )
    ]
    hot.sort(key=lambda s: -s["callers"])
    (flo, fhi), = sql(client, ws, "SELECT min(id), max(id) FROM files WHERE lang = 'rust'")
    file_ids = sorted(rng.sample(range(flo, fhi + 1), min(fhi - flo + 1, count)))
    files = [
        r[0]
        for r in sql(
            client, ws, f"SELECT path FROM files WHERE lang = 'rust' AND id IN ({','.join(map(str, file_ids))}) ORDER BY id"
        )
    ]
    random_files = rng.sample(files, min(len(files), count // 2))
    # The most depended-on files: the most incoming edges from other files.
    hot_files = [
        r[0]
        for r in sql(
            client,
            ws,
            "SELECT f.path FROM (SELECT dst_file, count(*) AS n FROM edges WHERE dst_file IS NOT NULL "
            "AND dst_file != src_file GROUP BY dst_file ORDER BY n DESC LIMIT 10) e JOIN files f ON f.id = e.dst_file",
        )
    ]
    names = [s["name"] for s in symbols]
    globs = [n[:3] + "*" for n in names[:20]] + ["*_with_*", "parse*", "*Ctx", "infer*", "Semantics*"]
    find_patterns = names[:60] + globs
    words = [w for s in symbols for w in re.findall(r"[A-Za-z_]{4,}", s["name"])]
    text_patterns = (
        words[:50]
        + ["unwrap()", "fn new(", "impl Default for", "TODO", "#[test]", "Arc::new", "let mut", "pub(crate)"]
        + [s["qualified"].split("::")[-1] + "(" for s in symbols[:20]]
    )
    return {
        "symbols": symbols,
        "hot": hot,
        "files": random_files + hot_files,
        "find": find_patterns,
        "text": text_patterns,
    }


def ensure_memories(client, ws, rng, inputs, count):
    """`count` memories in the namespace `bench-web` (made once; reused by a later run)."""
    status, answer = client.api("POST", f"/api/v1/workspaces/{ws}/memory/list", {"namespace": NAMESPACE, "limit": 1000})
    if status != 200:
        sys.exit(f"memory list failed ({status}): {answer}")
    have = {m["name"] for m in answer["memories"]}
    types = ["note", "decision", "convention", "incident", "reference"]
    for i in range(count):
        name = f"bench-web-{i:03}"
        if name in have:
            continue
        sym = inputs["symbols"][i % len(inputs["symbols"])]
        body = (
            f"Benchmark memory {i}. "
            + " ".join(rng.choice(["The", "resolver", "walks", "every", "crate", "graph", "before", "inference"]) for _ in range(40))
            + "\n" * 2
            + "\n".join(f"- point {j}: {rng.random():.6f}" for j in range(10))
        )
        req = {"name": name, "namespace": NAMESPACE, "type": types[i % len(types)], "description": f"bench memory {i}", "body": body}
        if i % 2 == 0:
            req["links"] = [f"{sym['path']}:{sym['line']}"]
        if i % 5 == 0:
            ents = [f"bench-entity-{i}-{j}" for j in range(8)]
            req["entities"] = [{"name": e, "type": "concept"} for e in ents]
            req["relationships"] = [
                {"source": ents[j], "target": ents[(j + 1) % len(ents)], "relation": "uses"} for j in range(len(ents))
            ]
        status, answer = client.api("POST", f"/api/v1/workspaces/{ws}/memory/remember", req)
        if status != 200:
            sys.exit(f"remember {name} failed ({status}): {answer}")
        if i % 3 == 0:
            edit = {"name": name, "namespace": NAMESPACE, "body": body.replace("point 3", "point three") + "\nEdited.\n"}
            status, answer = client.api("POST", f"/api/v1/workspaces/{ws}/memory/edit", edit)
            if status != 200:
                sys.exit(f"edit {name} failed ({status}): {answer}")
    return [f"bench-web-{i:03}" for i in range(count)]


def page_kinds(ws, inputs, memories, git):
    """Each kind's list of page paths, cycled through."""
    w = f"/web/w/{ws}"
    at = lambda s: f"{s['path']}:{s['line']}"  # noqa: E731
    kinds = {
        "workspaces": ["/web/"],
        "search-find": [q(f"{w}/search", q=p) for p in inputs["find"]],
        "search-text": [q(f"{w}/search", q=p, mode="text") for p in inputs["text"]],
        "symbol": [q(f"{w}/symbol", s=at(s)) for s in inputs["symbols"]],
        "symbol-hot": [q(f"{w}/symbol", s=at(s)) for s in inputs["hot"] or inputs["symbols"]],
        "symbol-depth3": [q(f"{w}/symbol", s=at(s), depth=3) for s in inputs["symbols"]],
        "symbol-callees": [q(f"{w}/symbol", s=at(s), dir="callees", depth=2) for s in inputs["symbols"]],
        "impact-def": [q(f"{w}/impact", target=at(s)) for s in inputs["symbols"][:50] + inputs["hot"][:10]],
        "impact-file": [q(f"{w}/impact", target=f) for f in inputs["files"]],
        "memories": [
            q(f"{w}/memories"),
            q(f"{w}/memories", namespace=NAMESPACE),
            q(f"{w}/memories", type="decision"),
            q(f"{w}/memories", type="note", namespace=NAMESPACE),
        ],
        "memory": [q(f"{w}/memory", namespace=NAMESPACE, name=m) for m in memories],
    }
    if git:
        revs = ["HEAD~1", "HEAD~2", "HEAD~5", "HEAD~3..HEAD~1", "HEAD~10..HEAD~5", "HEAD~20...HEAD~15", "", "HEAD~8"]
        kinds["changes"] = [q(f"{w}/changes", rev=r) for r in revs]
    return kinds


def start_server(loci, env):
    proc = subprocess.Popen(
        [loci, "serve", "--port", "0", "--json"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    line = proc.stdout.readline()
    if not line:
        proc.wait()
        sys.exit(f"loci serve did not start: {proc.stderr.read()}")
    first = json.loads(line)
    return proc, first["listening"], first["web_signin"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loci", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "loci"))
    ap.add_argument("--workspace", required=True, help="the tree to benchmark (indexed first if it has no index)")
    ap.add_argument("--requests", type=int, default=100, help="measured requests per page kind")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--memories", type=int, default=50)
    ap.add_argument("--only", default="", help="comma-separated page kinds (default: all)")
    ap.add_argument("--json", help="write every sample to this file")
    args = ap.parse_args()
    loci = os.path.abspath(args.loci)
    root = os.path.abspath(args.workspace)
    rng = random.Random(args.seed)

    env = dict(os.environ)
    env["LOCI_API_KEY"] = "bench-" + secrets.token_hex(16)
    # The server's own deadline must not cut a slow page short: it is what we measure.
    env["LOCI_API_REQUEST_TIMEOUT_MS"] = "120000"
    if not os.path.exists(os.path.join(root, ".loci", "index.db")):
        print(f"indexing {root} ...", file=sys.stderr)
    subprocess.run([loci, "index", root, "--json"], env=env, check=True, stdout=subprocess.DEVNULL)

    proc, addr, signin = start_server(loci, env)
    try:
        client = Client(addr, env["LOCI_API_KEY"])
        status, repos = client.api("GET", "/api/v1/repositories")
        if status != 200:
            sys.exit(f"repositories: {status} {repos}")
        ws = next((r["id"] for r in repos["repositories"] if os.path.realpath(r["root"]) == os.path.realpath(root)), None)
        if ws is None:
            sys.exit(f"{root} is not among the server's workspaces")
        client.sign_in(signin)
        inputs = pick_inputs(client, ws, rng, 100)
        memories = ensure_memories(client, ws, rng, inputs, args.memories)
        git = os.path.isdir(os.path.join(root, ".git"))
        kinds = page_kinds(ws, inputs, memories, git)
        if args.only:
            kinds = {k: v for k, v in kinds.items() if k in args.only.split(",")}
        load_before = loadavg()
        results = {}
        for kind, paths in kinds.items():
            status, server, wall, _ = client.page(paths[0])
            first = {"status": status, "server_ms": server, "wall_ms": wall}
            samples, errors = [], []
            for i in range(args.requests):
                path = paths[i % len(paths)]
                status, server, wall, size = client.page(path)
                if status != 200 or server is None:
                    errors.append({"path": path, "status": status})
                    continue
                samples.append({"path": path, "server_ms": server, "wall_ms": wall, "bytes": size})
            results[kind] = {"first": first, "samples": samples, "errors": errors}
            print(f"  {kind}: done ({len(samples)} ok, {len(errors)} not 200)", file=sys.stderr)
        load_after = loadavg()
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    print(f"workspace {root} (id {ws}); load average before {load_before}, after {load_after}")
    head = f"{'page':<16}{'n':>5}{'p50 ms':>9}{'p99 ms':>9}{'max ms':>9}{'wall p50':>10}{'wall p99':>10}{'first ms':>10}  slowest"
    print(head)
    for kind, r in results.items():
        s = [x["server_ms"] for x in r["samples"]]
        w = [x["wall_ms"] for x in r["samples"]]
        if not s:
            print(f"{kind:<16}{0:>5}  (no answer was 200: {r['errors'][:1]})")
            continue
        slow = max(r["samples"], key=lambda x: x["server_ms"])["path"]
        first = r["first"]["server_ms"]
        print(
            f"{kind:<16}{len(s):>5}{pct(s, 50):>9.1f}{pct(s, 99):>9.1f}{max(s):>9.1f}"
            f"{pct(w, 50):>10.1f}{pct(w, 99):>10.1f}{(first if first is not None else float('nan')):>10.1f}  {slow}"
        )
        if r["errors"]:
            print(f"  {kind}: {len(r['errors'])} answers not 200, e.g. {r['errors'][0]}", file=sys.stderr)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"workspace": root, "load_before": load_before, "load_after": load_after, "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
