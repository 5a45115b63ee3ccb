#!/usr/bin/env bash
# Callers accuracy against hand-labelled sets: for every tests/accuracy/<lang>/*.toml
# (a target definition in a pinned source tree and every true call site of it, each
# read in the code), index the tree with loci and compare loci's CALLS edges into the
# target with the labels, at call-site level (file:line) and at function level (the
# calling definition). Prints per target and per language recall and precision, and
# every miss and false positive with the cause the label file gives for it.
#
# A label file: `tree` (a source, below) and `root` (a folder of it, the workspace),
# `target = { path, name[, line] }` (the definition: file relative to the root and
# qualified name), `scope` (optional: the folder prefix whose files were read; answers
# from other files are not counted), one `[[site]]` per true call (`at = "file:line"`, `caller` = the
# calling definition's qualified name), and the causes of known misses and false
# positives (`[causes]` by site; `miss_cause`/`false_cause` for the rest).
#
# Usage: scripts/accuracy.sh [--loci BIN] [--json FILE] [LANG...]
#   BIN defaults to target/release/loci, else target/debug/loci.
#   LANG limits the run to those directories of tests/accuracy (rust, python, ...).
#   --json FILE also writes the figures as JSON (for comparing two binaries).
# Sources: a cargo registry crate (`cargo:NAME-VERSION`, there once the workspace built),
# Python's standard library (`python-stdlib:3.11`), an npm package installed into a cache
# (`npm:NAME@VERSION`), a Debian package's files (`deb:PACKAGE:/path`; apt-get install
# PACKAGE), OpenJDK's sources (`jdk-src:17`, from openjdk-17-source's src.zip). The cache
# is $LOCI_ACCURACY_CACHE (default ~/.cache/loci-accuracy); indexes go to a temp dir.
set -euo pipefail
cd "$(dirname "$0")/.."
loci=""
json_out=""
langs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --loci) loci=$2; shift 2 ;;
    --json) json_out=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) langs+=("$1"); shift ;;
  esac
done
if [ -z "$loci" ]; then
  if [ -x target/release/loci ]; then loci=target/release/loci; else loci=target/debug/loci; fi
fi
[ -x "$loci" ] || { echo "accuracy: no loci binary at $loci (cargo build -p loci)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$(realpath "$loci")" "$work" "$json_out" "${langs[@]}" <<'PY'
import glob, json, os, subprocess, sys, sysconfig, tomllib, zipfile
loci, work, json_out, langs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
cache = os.environ.get("LOCI_ACCURACY_CACHE", os.path.expanduser("~/.cache/loci-accuracy"))
env = dict(os.environ, LOCI_HOME=os.path.join(work, "home"))

def fail(msg):
    sys.exit(f"accuracy: {msg}")

def source_root(tree):
    """The directory a label file's `tree` names, fetched into the cache if needed."""
    scheme, _, rest = tree.partition(":")
    if scheme == "cargo":
        found = glob.glob(os.path.expanduser(f"~/.cargo/registry/src/*/{rest}"))
        if not found:
            fail(f"{tree}: no {rest} in ~/.cargo/registry/src (cargo fetch, or `cargo download`)")
        return found[0]
    if scheme == "python-stdlib":
        have = f"{sys.version_info.major}.{sys.version_info.minor}"
        if have != rest:
            fail(f"{tree}: the labels are for Python {rest}, this python3 is {have}")
        return sysconfig.get_paths()["stdlib"]
    if scheme == "npm":
        dest = os.path.join(cache, "npm", rest)
        name = rest.rsplit("@", 1)[0]
        root = os.path.join(dest, "node_modules", name)
        if not os.path.isdir(root):
            os.makedirs(dest, exist_ok=True)
            subprocess.run(["npm", "install", "--silent", "--no-save", "--ignore-scripts",
                            "--no-audit", "--no-fund", "--prefix", dest, rest], check=True)
        return root
    if scheme == "deb":
        package, _, path = rest.partition(":")
        if not os.path.isdir(path):
            fail(f"{tree}: {path} is absent: apt-get install {package}")
        return path
    if scheme == "jdk-src":
        dest = os.path.join(cache, f"jdk-{rest}")
        if not os.path.isdir(dest):
            zips = glob.glob(f"/usr/lib/jvm/*{rest}*/lib/src.zip")
            if not zips:
                fail(f"{tree}: no src.zip: apt-get install openjdk-{rest}-source")
            with zipfile.ZipFile(zips[0]) as z:
                members = [m for m in z.namelist() if m.startswith("java.base/java/util/")]
                z.extractall(dest, members)
        return dest
    fail(f"unknown tree scheme in {tree!r}")

indexed = {}
def workspace(root):
    """Indexes `root` once per run (index file in the temp dir, the tree untouched)."""
    if root not in indexed:
        db = os.path.join(work, f"index-{len(indexed)}.db")
        p = subprocess.run([loci, "index", "--json", "--index-path", db, root],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            fail(f"loci index {root} failed: {p.stdout} {p.stderr}")
        indexed[root] = root
    return indexed[root]

def query(root, sql, params):
    p = subprocess.run([loci, "query", "--json", "--max-rows", "10000", "--timeout", "60s",
                        "-w", root, "--params", json.dumps(params), sql],
                       capture_output=True, text=True, env=env)
    out = json.loads(p.stdout)
    if "error" in out:
        fail(f"query failed: {out['error']['message']}")
    return out["rows"]

CALLERS = """
SELECT sf.path, e.line, COALESCE(s.qualified_name, '-'), e.confidence
FROM symbols d JOIN files df ON df.id = d.file_id
JOIN edges e ON e.dst_symbol = d.id AND e.kind = 'CALLS'
JOIN files sf ON sf.id = e.src_file
LEFT JOIN symbols s ON s.id = e.src_symbol
WHERE df.path = ?1 AND d.qualified_name = ?2 AND (?3 = 0 OR d.start_line = ?3)
"""

def pct(a, b):
    return 100.0 * a / b if b else 100.0

results = {}
base = os.path.join("tests", "accuracy")
for lang in sorted(os.listdir(base)):
    if langs and lang not in langs or not os.path.isdir(os.path.join(base, lang)):
        continue
    totals = dict(sites=0, sites_found=0, sites_reported=0, funcs=0, funcs_found=0, funcs_reported=0)
    print(f"== {lang}")
    for path in sorted(glob.glob(os.path.join(base, lang, "*.toml"))):
        with open(path, "rb") as f:
            label = tomllib.load(f)
        root = workspace(os.path.join(source_root(label["tree"]), label.get("root", "")).rstrip("/"))
        target = label["target"]
        rows = query(root, CALLERS, [target["path"], target["name"], target.get("line", 0)])
        # The labels cover only the files under `scope` (the folders a person read), so
        # answers from other files (a crate's tests/, say) are neither right nor wrong here.
        scope = label.get("scope", "")
        rows = [r for r in rows if r[0].startswith(scope)]
        if not query(root, "SELECT 1 FROM symbols d JOIN files f ON f.id = d.file_id WHERE f.path = ?1 AND d.qualified_name = ?2",
                     [target["path"], target["name"]]):
            print(f"  {os.path.basename(path)}: target {target['path']}:{target['name']} is not a definition in the index")
        causes = label.get("causes", {})
        want_sites = {s["at"] for s in label.get("site", [])}
        want_funcs = {(s["at"].rsplit(":", 1)[0], s["caller"]) for s in label.get("site", [])}
        got_sites = {f"{r[0]}:{r[1]}" for r in rows}
        got_funcs = {(r[0], r[2]) for r in rows}
        hit_s, hit_f = want_sites & got_sites, want_funcs & got_funcs
        t = dict(sites=len(want_sites), sites_found=len(hit_s), sites_reported=len(got_sites),
                 funcs=len(want_funcs), funcs_found=len(hit_f), funcs_reported=len(got_funcs))
        for k in totals:
            totals[k] += t[k]
        print(f"  {target['name']:<40} sites {len(hit_s)}/{len(want_sites)} found, "
              f"{len(hit_s)}/{len(got_sites)} right; functions {len(hit_f)}/{len(want_funcs)} found, "
              f"{len(hit_f)}/{len(got_funcs)} right   ({os.path.basename(path)})")
        for s in sorted(want_sites - got_sites):
            print(f"      miss  {s}  {causes.get(s, label.get('miss_cause', ''))}")
        for s in sorted(got_sites - want_sites):
            conf = next((r[3] for r in rows if f"{r[0]}:{r[1]}" == s), "")
            print(f"      false {s} ({conf})  {causes.get(s, label.get('false_cause', ''))}")
    results[lang] = totals
    print(f"  -- {lang}: call sites recall {pct(totals['sites_found'], totals['sites']):.1f}% "
          f"precision {pct(totals['sites_found'], totals['sites_reported']):.1f}%; functions recall "
          f"{pct(totals['funcs_found'], totals['funcs']):.1f}% precision "
          f"{pct(totals['funcs_found'], totals['funcs_reported']):.1f}%")

print("\nlanguage     sites R   sites P   funcs R   funcs P   (labelled sites)")
for lang, t in results.items():
    print(f"{lang:<12} {pct(t['sites_found'], t['sites']):7.1f}%  {pct(t['sites_found'], t['sites_reported']):7.1f}%  "
          f"{pct(t['funcs_found'], t['funcs']):7.1f}%  {pct(t['funcs_found'], t['funcs_reported']):7.1f}%   ({t['sites']})")
if json_out:
    with open(json_out, "w") as f:
        json.dump(results, f, indent=1)
PY
