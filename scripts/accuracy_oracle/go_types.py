"""Go caller ground truth from Go's own type checker (go/types), by `go_types/main.go`.

Sources are packages of the Go standard library as Debian ships it (`golang-1.19-src`,
Go 1.19.8), built and checked with `golang-1.19-go`:

* the tree: every `.go` file of the package folder that is not a test (`_test.go`),
  whatever its build constraints, as a user's checkout holds them;
* a definition: a function or method declaration with a body, in a file go/build
  compiles on this host (linux/amd64, cgo off); a method's chain is its receiver's
  type name (`Reader.Read`);
* a call: a call expression whose callee the type checker resolved to one of those
  definitions (a generic function's instance is the function; a call through an
  interface is a call of the interface's method, never a target; a function passed
  as a value is not a call), at the line of the callee's name;
* the caller: the declaration holding the call (function literals roll up to it), else
  the file's top-level code (package-level initialisers);
* scope: the files go/build compiles; loci's callers and sites in the other files
  (`_windows.go` and the like) are dropped before scoring.
"""
import json
import os
import shutil
import subprocess

from . import labelled

GOROOT = "/usr/lib/go-1.19"
SRC = os.path.join(GOROOT, "src")
HERE = os.path.dirname(os.path.abspath(__file__))


def env():
    return dict(os.environ, PATH=os.path.join(GOROOT, "bin") + os.pathsep + os.environ.get("PATH", ""),
                GOROOT=GOROOT, GO111MODULE="off", CGO_ENABLED="0", GOFLAGS="")


def ensure(cache):
    """Builds the labeller into the cache (once per source change); returns its path."""
    src = os.path.join(HERE, "go_types", "main.go")
    out = os.path.join(cache, "go_types-bin", "go_types")
    if not os.path.exists(os.path.join(GOROOT, "bin", "go")):
        raise RuntimeError("Go is not installed: apt-get install golang-1.19-go golang-1.19-src")
    if not os.path.exists(out) or os.path.getmtime(out) < os.path.getmtime(src):
        os.makedirs(os.path.dirname(out), exist_ok=True)
        e = dict(env(), GO111MODULE="on", GOCACHE=os.path.join(cache, "go-build"))
        subprocess.run(["go", "build", "-o", out, "."], cwd=os.path.join(HERE, "go_types"), env=e, check=True)
    return out


def version():
    r = subprocess.run([os.path.join(GOROOT, "bin", "go"), "version"], stdout=subprocess.PIPE, text=True, env=env())
    return r.stdout.strip()


def pool():
    """Every package folder of the standard library's source (no testdata, no vendor)."""
    out = []
    for d, dirs, fs in os.walk(SRC):
        dirs[:] = sorted(x for x in dirs if x not in ("testdata", "vendor") and not x.startswith((".", "_")))
        if any(f.endswith(".go") and not f.endswith("_test.go") for f in fs):
            out.append("go:" + os.path.relpath(d, SRC))
    return sorted(out)


def prepare(spec, tree):
    root = os.path.join(SRC, spec.split(":", 1)[1])
    files = sorted(f for f in os.listdir(root) if f.endswith(".go") and not f.endswith("_test.go"))
    if len(files) < 5:
        return None, f"{len(files)} .go files (< 5)"
    if len(files) > 400:
        return None, f"{len(files)} .go files (> 400)"
    for f in files:
        shutil.copyfile(os.path.join(root, f), os.path.join(tree, f))
    return "go", len(files)


def build_targets(binary, spec):
    """(targets, compiled files as whole-file ranges) of the package, as go/types sees it."""
    root = os.path.join(SRC, spec.split(":", 1)[1])
    r = subprocess.run([binary, root], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env())
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[-300:])
    got = json.loads(r.stdout)
    if got["errors"]:
        raise RuntimeError(f"{got['errors']} type errors: {got['first_errors'][:2]}")
    defs = got["defs"]
    def target_of(i):
        d = defs[i]
        return {"path": d["path"], "name": d["name"], "chain": [d["recv"]] if d["recv"] else [],
                "kind": "method" if d["recv"] else "function", "start": d["start"],
                "name_line": d["name_line"], "end_line": d["end_line"]}

    out = labelled.targets_from_calls(got["calls"], target_of, defs.__getitem__)
    return out, {f: [(1, 1 << 30)] for f in got["files"]}
