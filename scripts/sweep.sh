#!/usr/bin/env bash
# Indexes a broad set of real code present on this machine, each tree under a
# wall-clock limit, and prints per tree: files, seconds, peak RSS, and skipped files by
# reason. Every tree must complete; a row that failed, timed out, or skipped a file for
# `timeout` or `panic` is marked and makes the script exit 1.
#
# The trees (each skipped with a note when absent):
#   - every crate of ~/.cargo/registry/src (one run per crate; one summary row, and a
#     row of its own for any crate that failed or skipped a file by timeout/panic)
#   - the Python standard library; node_modules under $LOCI_NODE_TOOLS (JS/TS)
#   - Debian's googletest (/usr/src/googletest), boost's and fmt's headers, the Linux
#     UAPI headers (C), Go's source (golang-src), the JDK's java.base source
#     (openjdk-17-source), Ruby's library (ruby), /usr/share/php (phpunit), git
#     scripts (git, sh)
#   - Kotlin and Swift from the npm package expo-modules-core, C# from the PyPI sdist of
#     pythonnet (fetched into $SWEEP_CACHE, default ~/.cache/loci-sweep)
#   - any NAME=PATH given after OUT (e.g. a clone of fmtlib/fmt)
#
# Debian packages for the trees: googletest libboost-dev libfmt-dev linux-libc-dev
# golang-src openjdk-17-source ruby phpunit.
#
# Usage: scripts/sweep.sh OUT [NAME=PATH ...]
#   LOCI=path/to/loci (default: target/release/loci, built if missing)
#   SWEEP_LIMIT=seconds per tree (default 600)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/sweep.sh OUT [NAME=PATH ...]}
shift
mkdir -p "$out"
loci=${LOCI:-target/release/loci}
[ -x "$loci" ] || cargo build --release -p loci
cache=${SWEEP_CACHE:-$HOME/.cache/loci-sweep}
mkdir -p "$cache"

# Trees fetched from the package registries, once.
if [ ! -d "$cache/expo" ] && command -v npm >/dev/null; then
  (cd "$cache" && npm pack --silent expo-modules-core@58.2.0 >/dev/null &&
    mkdir -p expo && tar xzf expo-modules-core-58.2.0.tgz -C expo) || echo "note: no expo-modules-core (Kotlin, Swift)" >&2
fi
if [ ! -d "$cache/pythonnet" ]; then
  (cd "$cache" && python3 -m pip download -q --no-deps --no-binary :all: pythonnet==3.2.1 -d . &&
    mkdir -p pythonnet && tar xzf pythonnet-3.2.1.tar.gz -C pythonnet) || echo "note: no pythonnet (C#)" >&2
fi
jdk_zip=$(ls /usr/lib/jvm/*/lib/src.zip 2>/dev/null | head -n 1 || true)
if [ -n "$jdk_zip" ] && [ ! -d "$cache/java.base" ]; then
  python3 - "$jdk_zip" "$cache" <<'PY'
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("java.base/")])
PY
fi

python3 - "$loci" "$out" "$cache" "${SWEEP_LIMIT:-600}" "$@" <<'PY'
import glob, json, os, subprocess, sys, sysconfig, threading, time
loci, out, cache, limit, extra = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5:]
env = dict(os.environ, LOCI_HOME=os.path.join(out, "home"))
env.pop("LOCI_LOG", None)

def first(*patterns):
    for p in patterns:
        for hit in sorted(glob.glob(p)):
            if os.path.isdir(hit):
                return hit
    return None

trees = [
    ("Python library with site-packages (Python)", sysconfig.get_paths()["stdlib"]),
    ("node_modules (JS/TS)", first(os.path.join(os.environ.get("LOCI_NODE_TOOLS", "/nonexistent"), "node_modules"))),
    ("googletest (C++)", first("/usr/src/googletest")),
    ("boost headers (C++)", first("/usr/include/boost")),
    ("fmt headers (C++)", first("/usr/include/fmt")),
    ("linux uapi headers (C)", first("/usr/include/linux")),
    ("go source (Go)", first("/usr/lib/go-*/src", "/usr/share/go-*/src")),
    ("java.base (Java)", first(os.path.join(cache, "java.base"))),
    ("ruby library (Ruby)", first("/usr/lib/ruby/[0-9]*")),
    ("/usr/share/php (PHP)", first("/usr/share/php")),
    ("git scripts (Bash)", first("/usr/lib/git-core")),
    ("expo-modules-core (Kotlin, Swift)", first(os.path.join(cache, "expo"))),
    ("pythonnet (C#)", first(os.path.join(cache, "pythonnet"))),
] + [tuple(e.split("=", 1)) for e in extra]

def run(name, path):
    """Indexes `path` into OUT (never inside the tree); (report or None, seconds, peak RSS KiB, error)."""
    slug = "".join(c if c.isalnum() else "_" for c in name)
    db = os.path.join(out, slug + ".db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    with open(os.path.join(out, slug + ".json"), "wb") as so, open(os.path.join(out, slug + ".err"), "wb") as se:
        t = time.perf_counter()
        p = subprocess.Popen([loci, "index", path, "--index-path", db, "--json"], stdout=so, stderr=se, env=env)
        killed = []
        timer = threading.Timer(limit, lambda: (killed.append(1), p.kill()))
        timer.start()
        _, status, usage = os.wait4(p.pid, 0)
        timer.cancel()
        secs = time.perf_counter() - t
    if killed:
        return None, secs, usage.ru_maxrss, f"over the {limit:.0f} s limit"
    if os.waitstatus_to_exitcode(status) != 0:
        return None, secs, usage.ru_maxrss, open(os.path.join(out, slug + ".err")).read()[-300:]
    return json.load(open(os.path.join(out, slug + ".json"))), secs, usage.ru_maxrss, None

bad = 0
rows = []
def row(name, files, secs, rss_kib, skipped, note=""):
    reasons = ", ".join(f"{n} {r}" for r, n in sorted(skipped.items())) or "none"
    rows.append(f"| {name} | {files} | {secs:.1f} | {rss_kib / 1024:.0f} | {reasons} | {note} |")

def judge(report, err):
    global bad
    if err:
        bad += 1
        return "**FAILED**: " + err.strip().replace("\n", " ")[:200]
    fatal = {r: n for r, n in report["skipped_by_reason"].items() if r in ("timeout", "panic")}
    if fatal:
        bad += 1
        files = [s["path"] for s in report["skipped"] if s["reason"] in fatal][:5]
        return "**" + ", ".join(f"{n} {r}" for r, n in fatal.items()) + "**: " + ", ".join(files)
    return ""

crates = sorted(d for d in glob.glob(os.path.expanduser("~/.cargo/registry/src/*/*")) if os.path.isdir(d))
if crates:
    files = secs = 0
    rss = 0
    skipped = {}
    worst = []
    for c in crates:
        report, s, r, err = run("crate", c)
        secs += s
        rss = max(rss, r)
        note = judge(report, err)
        if note:
            row(os.path.basename(c), report["files_indexed"] if report else "-", s, r,
                report["skipped_by_reason"] if report else {}, note)
        if report:
            files += report["files_indexed"]
            for k, n in report["skipped_by_reason"].items():
                skipped[k] = skipped.get(k, 0) + n
    row(f"crates.io sources, {len(crates)} crates one by one (Rust, C)", files, secs, rss, skipped, "RSS: the largest crate's")
else:
    print("note: no crate sources in ~/.cargo/registry/src (run a cargo build first)", file=sys.stderr)

for name, path in trees:
    if not path or not os.path.isdir(path):
        print(f"note: {name}: not on this machine", file=sys.stderr)
        continue
    report, s, r, err = run(name, path)
    note = judge(report, err)
    row(name, report["files_indexed"] if report else "-", s, r, report["skipped_by_reason"] if report else {}, note)
    print(f"{name}: {s:.1f} s", file=sys.stderr, flush=True)

print("| tree | files indexed | seconds | peak RSS (MiB) | skipped by reason | note |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
sys.exit(1 if bad else 0)
PY
