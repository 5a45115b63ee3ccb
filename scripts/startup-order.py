#!/usr/bin/env python3
"""Regenerates crates/cli/startup-order.txt: the functions an idle `loci mcp` session
runs, which the release link places together at the start of `.text`
(`--symbol-ordering-file`, crates/cli/build.rs).

    scripts/startup-order.py [--loci target/release/loci] [--tree DIR] [--out FILE]

Why: the kernel maps a binary's code into a process a large page-cache folio (or a
64 KiB fault-around window) at a time, so what start-up costs in resident memory is
the number of regions of `.text` it touches, not the bytes it runs. Without an order,
the ~1,600 functions an idle session runs are spread over most of the 19 MB `.text`
(generic instances sit beside their callers in each codegen unit); placed together
they fit in well under a megabyte. See docs/performance.md (MCP footprint).

How: runs `loci mcp` under valgrind's callgrind (every function executed, not a
sample) through what a session does before its first real call — `initialize`,
`tools/list`, the session-start gate (twice: through the HTTP probe chain, as on a tree
without a `.loci/` marker, and with `api.enabled = false`, through the registry to the
drift check), one `status` call — and writes the mangled names of the binary's
functions it ran, in their current address order (which keeps callers near callees as
the compiler laid them out).

A name that no longer exists (a dependency bumped, code renamed) is ignored by the
linker (`--no-warn-symbol-ordering`): a stale file costs resident memory, never
correctness. Regenerate when `scripts/bench-mcp.py`'s idle RSS creeps up.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

INIT = ('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"order","version":"1"}}}')
STEPS = [INIT, '{"jsonrpc":"2.0","method":"notifications/initialized"}',
         '{"jsonrpc":"2.0","id":2,"method":"tools/list"}']
STATUS = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"status","arguments":{}}}'


def run_session(loci, tree, home, extra_env, settle_s):
    """One traced session; returns the callgrind output's path."""
    out = os.path.join(home, "callgrind.out")
    # The gate's probe deadline is for native speed; under valgrind it would give up
    # before the probe chain (and the drift check after it) ran.
    env = dict(os.environ, LOCI_HOME=home, XDG_CONFIG_HOME=os.path.join(home, "xdg"),
               LOCI_API_PROBE_DEADLINE_MS="120000", **extra_env)
    for var in ("LOCI_LOG", "LOCI_SESSION_ID"):
        env.pop(var, None)
    p = subprocess.Popen(["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
                          loci, "mcp", "--workspace", tree],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    for line in STEPS:
        p.stdin.write((line + "\n").encode())
    p.stdin.flush()
    # The gate runs on its own thread after `initialize`; under valgrind it is ~50x slower.
    time.sleep(settle_s)
    p.stdin.write((STATUS + "\n").encode())
    p.stdin.flush()
    time.sleep(settle_s / 2)
    p.stdin.close()
    for line in p.stdout.read().decode().splitlines():
        answer = json.loads(line)
        if answer.get("id") == 3:
            start = answer.get("result", {}).get("structuredContent", {}).get("session_start")
            print(f"traced session {extra_env or '(defaults)'}: gate {start}", file=sys.stderr)
    p.wait(timeout=300)
    return out


def executed(cg_out, binary):
    """Names of the binary's functions callgrind saw run (each has a `fn=` cost block;
    `ob=`/`fn=` name an id the first time, `cob=`/`cfn=` may name it first)."""
    base = os.path.basename(binary)
    obs, fns, names = {}, {}, set()
    cur_ob = None
    pat = re.compile(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?")
    with open(cg_out) as f:
        for line in f:
            m = pat.match(line)
            if not m:
                continue
            table = obs if m.group(2) == "ob" else fns
            if m.group(4):
                table[m.group(3)] = m.group(4).strip()
            if m.group(1):
                continue
            if m.group(2) == "ob":
                cur_ob = obs.get(m.group(3))
            elif cur_ob and os.path.basename(cur_ob) == base and fns.get(m.group(3)):
                # `name'2`: callgrind's mark of a recursion level.
                names.add(re.sub(r"'\d+$", "", fns[m.group(3)]))
    return names


def addresses(binary):
    """Function symbol name -> address (`nm`, mangled)."""
    out = {}
    res = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True)
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            out.setdefault(parts[2], int(parts[0], 16))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", default="target/release/loci")
    ap.add_argument("--tree", default=None)
    ap.add_argument("--out", default="crates/cli/startup-order.txt")
    ap.add_argument("--settle", type=float, default=40.0, help="seconds the gate gets under valgrind")
    args = ap.parse_args()
    if not shutil.which("valgrind"):
        raise SystemExit("valgrind is needed (apt-get install valgrind)")
    loci = os.path.abspath(args.loci)
    tree = args.tree or sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tokio-1.*")))[-1]
    home = tempfile.mkdtemp(prefix="loci-order-")
    names = set()
    for i, extra in enumerate(({}, {"LOCI_API_ENABLED": "false"})):
        # A home of its own each: a session's records would let the next one's gate
        # skip work.
        own = os.path.join(home, str(i))
        os.mkdir(own)
        subprocess.run([loci, "index", tree, "--index-path", os.path.join(own, "index.db"), "--json"],
                       env=dict(os.environ, LOCI_HOME=own), check=True, stdout=subprocess.DEVNULL)
        names |= executed(run_session(loci, tree, own, extra, args.settle), loci)
    addr = addresses(loci)
    # Only names the linker can place: defined functions of the binary. A local promoted
    # across codegen units (`.llvm.<hash>`) keeps its name while its unit is unchanged.
    kept = sorted((n for n in names if n in addr), key=lambda n: addr[n])
    with open(args.out, "w") as f:
        f.write("".join(n + "\n" for n in kept))
    shutil.rmtree(home, ignore_errors=True)
    print(f"{len(kept)} functions ({len(names) - len(kept)} skipped) -> {args.out}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
