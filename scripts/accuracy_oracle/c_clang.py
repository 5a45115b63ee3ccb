"""C caller ground truth from clang's AST (`clang -Xclang -ast-dump=json -fsyntax-only`).

Every `.c` file of the tree is one translation unit, compiled with `-I` for every folder
of the tree holding a header (and Python's include folder, for extension modules).

* a definition: a `FunctionDecl` with a body whose name is in a file of the tree; it is
  identified by (file, name line, name), so a static inline function of a header that
  several units include is one definition. A name the source does not spell on that
  line (token pasting: `FN(Histogram)`) is not a target.
* a call: a `CallExpr` whose callee is a `DeclRefExpr` to a `FunctionDecl` (not a call
  through a function pointer), written in a file of the tree on a line that holds the
  callee's name (a call a macro writes elsewhere has none). The callee is the definition
  of that name in the same unit, else the only definition of that name with external
  linkage in the tree; a name defined with external linkage more than once (per
  platform, say) is left out.
* the caller: the function definition being walked (calls in initializers of globals
  are top-level code).
* scope: what the preprocessor kept (the host's configuration, no extra -D); loci's
  callers and sites outside the function definitions clang saw are dropped before
  scoring.
Clang's JSON leaves out a location's file and line when they are the previous printed
location's: they are carried over in print order.
"""
import json
import os
import re
import subprocess
import sys
import sysconfig

sys.setrecursionlimit(200000)

SKIP = {"test", "tests", "testing", "examples", "example", "docs", "doc", "contrib", "programs",
        "fuzz", "bench", "benchmark", "benchmarks", "tools", "build", "dist", "scripts"}


def prepare(root, tree):
    files = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x.lower() not in SKIP and not x.startswith("."))
        files += [os.path.relpath(os.path.join(d, f), root) for f in sorted(fs) if f.endswith((".c", ".h"))]
    cfiles = [f for f in files if f.endswith(".c")]
    if len(cfiles) < 5:
        return None, f"{len(cfiles)} .c files (< 5)"
    if len(files) > 400:
        return None, f"{len(files)} .c/.h files (> 400)"
    copy_files(root, tree, files)
    return "c", len(files)


def copy_files(root, tree, files):
    """Copies `files` (relative paths) from `root` into `tree`, making folders."""
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "rb") as a, open(os.path.join(tree, rel), "wb") as b:
            b.write(a.read())


def fetch_sdist(cache, spec):
    """The unpacked sdist of `NAME==VERSION`, downloaded once from the package index's
    simple page (not `pip download`, which builds a package's build dependencies
    to read its metadata: minutes of Cython for nothing)."""
    import html
    import tarfile
    import urllib.request
    import zipfile
    dest = os.path.join(cache, "pypi-sdist", spec)
    out = os.path.join(dest, "unpacked")
    if not os.path.isdir(out):
        name, version = spec.split("==")
        index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")
        page = urllib.request.urlopen(f"{index}/{name}/", timeout=120).read().decode()
        links = [(html.unescape(u), f) for u, f in re.findall(r'href="([^"]+)"[^>]*>([^<]+)</a>', page)]
        wanted = [(u, f) for u, f in links if f.endswith((".tar.gz", ".zip"))
                  and f.rsplit("-", 1)[-1].startswith(version + ".")]
        if not wanted:
            raise RuntimeError(f"no sdist of {spec} on {index}")
        url, filename = wanted[0]
        os.makedirs(dest, exist_ok=True)
        archive = os.path.join(dest, filename)
        urllib.request.urlretrieve(url, archive)
        if archive.endswith(".zip"):
            zipfile.ZipFile(archive).extractall(out + ".tmp")
        else:
            with tarfile.open(archive) as t:
                t.extractall(out + ".tmp")
        os.rename(out + ".tmp", out)
    return out


def _ast(tree, rel, incs):
    r = subprocess.run(["clang", "-Xclang", "-ast-dump=json", "-fsyntax-only", "-w", "-ferror-limit=0"] +
                       [f"-I{i}" for i in incs] + [rel], cwd=tree, stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, text=True)
    return json.loads(r.stdout) if r.stdout.strip() else None


def build_targets(tree):
    incs = sorted({os.path.dirname(os.path.join(d, f)) for d, _, fs in os.walk(tree) for f in fs if f.endswith(".h")})
    incs = [os.path.relpath(i, tree) or "." for i in incs] + [sysconfig.get_paths()["include"]]
    cfiles = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs
                    if f.endswith(".c"))
    defs = {}      # (path, name_line, name) -> unit
    calls = []     # (callee name, callee def key in this unit or None, site path, line, caller key or None)
    lines_of = {}

    def norm(p):
        p = os.path.normpath(p)
        return None if p.startswith("..") or os.path.isabs(p) else p

    for rel in cfiles:
        ast = _ast(tree, rel, incs)
        if ast is None:
            continue
        cur = {"file": rel, "line": 1}
        local_defs = {}   # name -> key, definitions in this unit
        unit_calls = []

        def loc_of(loc):
            """Updates the carried location from a printed one; returns (file, line)."""
            if not isinstance(loc, dict):
                return None
            if "spellingLoc" in loc or "expansionLoc" in loc:
                loc_of(loc.get("spellingLoc"))
                return loc_of(loc.get("expansionLoc"))
            if "offset" not in loc:
                return None
            if "file" in loc:
                cur["file"] = loc["file"]
            if "line" in loc:
                cur["line"] = loc["line"]
            return (cur["file"], cur["line"])

        def walk2(node, fn):
            if isinstance(node, dict) and node.get("kind") == "DeclRefExpr":
                loc = loc_of(node.get("loc"))
                rng = node.get("range") or {}
                b = loc_of(rng.get("begin"))
                loc_of(rng.get("end"))
                node["_site"] = loc or b  # (clang prints a DeclRefExpr's range only)
                for c in node.get("inner") or []:
                    walk2(c, fn)
                return
            if not isinstance(node, dict):
                return
            loc = loc_of(node.get("loc"))
            rng = node.get("range") or {}
            b = loc_of(rng.get("begin"))
            e = loc_of(rng.get("end"))
            kind = node.get("kind")
            inner = node.get("inner") or []
            if kind == "FunctionDecl" and any(c.get("kind") == "CompoundStmt" for c in inner) and loc and b and e:
                path = norm(loc[0])
                if path is not None:
                    key = (path, loc[1], node["name"])
                    defs.setdefault(key, {"path": path, "name": node["name"], "chain": [], "kind": "function",
                                          "start": b[1], "name_line": loc[1], "end_line": e[1],
                                          "static": node.get("storageClass") == "static"})
                    local_defs[node["name"]] = key
                    fn = key
            if kind == "CallExpr" and inner:
                callee = inner[0]
                while callee.get("kind") in ("ImplicitCastExpr", "ParenExpr") and callee.get("inner"):
                    callee = callee["inner"][0]
                if callee.get("kind") == "DeclRefExpr" and (callee.get("referencedDecl") or {}).get("kind") == "FunctionDecl":
                    unit_calls.append((callee["referencedDecl"]["name"], callee, fn))
            for c in inner:
                walk2(c, fn)

        walk2(ast, None)
        for name, callee, fn in unit_calls:
            site = callee.get("_site")
            if not site:
                continue
            path = norm(site[0])
            if path is None:
                continue
            calls.append((name, local_defs.get(name), path, site[1], fn))
    # Names defined with external linkage exactly once.
    extern = {}
    for key, u in defs.items():
        if not u["static"]:
            extern.setdefault(u["name"], []).append(key)
    targets = {}
    for name, local, path, line, fn in calls:
        key = local or (extern[name][0] if len(extern.get(name, ())) == 1 else None)
        if key is None:
            continue
        if path not in lines_of:
            try:
                with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
                    lines_of[path] = f.read().split("\n")
            except OSError:
                lines_of[path] = []
        text = lines_of[path][line - 1] if 0 < line <= len(lines_of[path]) else ""
        if not re.search(r"\b" + re.escape(name) + r"\b", text):
            continue
        u = defs[key]
        t = targets.setdefault(key, {"path": u["path"], "name": u["name"], "chain": [], "kind": "function",
                                     "start": u["start"], "name_line": u["name_line"], "end_line": u["end_line"],
                                     "sites": set(), "member_sites": set(), "callers": set()})
        t["sites"].add((path, line))
        if fn is None:
            t["callers"].add((path, 0, 0, "<top level>"))
        else:
            c = defs[fn]
            t["callers"].add((c["path"], c["start"], c["name_line"], c["name"]))
    out = []
    for t in targets.values():
        if t["path"] not in lines_of:
            with open(os.path.join(tree, t["path"]), encoding="utf-8", errors="replace") as f:
                lines_of[t["path"]] = f.read().split("\n")
        if not re.search(r"\b" + re.escape(t["name"]) + r"\b", lines_of[t["path"]][t["name_line"] - 1]):
            continue  # a name the source does not spell (`FN(Histogram)`: token pasting)
        t["sites"] = sorted(t["sites"])
        t["member_sites"] = []
        t["callers"] = sorted(t["callers"])
        out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    # The function definitions clang saw: code the preprocessor left out is not scored.
    compiled = {}
    for u in defs.values():
        compiled.setdefault(u["path"], []).append((u["start"], u["end_line"]))
    return out, compiled
