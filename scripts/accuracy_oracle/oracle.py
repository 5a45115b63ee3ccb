"""Caller ground truth from precise indexers (SCIP), independent of loci.

For one package: fetch its sources, lay out a tree of its source files, index it with
the language's SCIP indexer, read every file's named function-like definitions
("units") with the language's own parser (the TypeScript compiler's, Python's `ast`),
and derive, for each function or method defined in the tree, its call sites and callers:

* a definition: a SCIP definition occurrence at the name of a unit of kind function or
  method that has a body. A symbol defined by more than one such unit (a conditional
  redefinition) is left out: the oracle cannot tell which one a call reaches.
  Constructors, getters and setters are never targets (loci links `new X()` to X).
* a call site: a SCIP reference (not a definition, not an import, not the name of a
  `def`/`function` that redefines it) to such a symbol, followed on its line by `(`
  (TypeScript also `<..>(` and `?.(`), or a decorator (`@name`, `@mod.name`; not
  `@name.setter`). A function passed as a value (`map(f)`) is not a call. A call through
  a shorthand property that re-exports the function (`export default { f }`, then
  `utils.f()`) is a call of the function.
* its caller: the innermost unit (function, method, getter, constructor, else class)
  whose whole node holds the reference; with none, the file's top-level code.
"""
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

SKIP_DIRS = {"node_modules", "dist", "build", "umd", "esm", "cjs", "es", "lib-esm", "types",
             "test", "tests", "__tests__", "spec", "bench", "benchmark", "examples", "docs",
             "coverage", "fixtures"}
MAX_FILES = 400


def sh(cmd, cwd=None, env=None, quiet=True):
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE if quiet else None,
                       stderr=subprocess.PIPE if quiet else None, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {(r.stderr or '')[-2000:]}")
    return r.stdout


def ensure_tools(cache):
    tools = os.path.join(cache, "scip-tools")
    if not os.path.exists(os.path.join(tools, "node_modules/@sourcegraph/scip-typescript/dist/src/main.js")):
        os.makedirs(tools, exist_ok=True)
        sh(["npm", "install", "--silent", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", tools,
            "@sourcegraph/scip-typescript@0.4.0", "@sourcegraph/scip-python@0.6.6"])
    return tools


def ensure_pip_target(cache, folder, module, requirements):
    """CACHE/FOLDER holding `requirements` (PyPI), installed once: when `module` is there."""
    pylib = os.path.join(cache, folder)
    if not os.path.isdir(os.path.join(pylib, module)):
        sh([sys.executable, "-m", "pip", "install", "--quiet", "--target", pylib] + list(requirements))
    return pylib


def ensure_pylib(cache):
    """tree-sitter and its Rust grammar (PyPI), for the Rust oracle's definitions."""
    return ensure_pip_target(cache, "pylib", "tree_sitter_rust", ("tree-sitter==0.26.1", "tree-sitter-rust==0.24.2"))


def tool_versions(tools):
    out = {}
    for p in ("scip-typescript", "scip-python"):
        with open(os.path.join(tools, "node_modules/@sourcegraph", p, "package.json")) as f:
            out[p] = json.load(f)["version"]
    with open(os.path.join(tools, "node_modules/@sourcegraph/scip-typescript/node_modules/typescript/package.json")) as f:
        out["typescript (parser)"] = json.load(f)["version"]
    out["node"] = sh(["node", "--version"]).strip()
    out["python (ast)"] = sys.version.split()[0]
    try:
        out["clang (AST)"] = sh(["clang", "--version"]).splitlines()[0]
    except Exception:
        pass
    try:
        from . import go_types
        out["go (go/types)"] = go_types.version()
    except Exception:
        pass
    try:
        from . import java_javac
        out["javac (attribution)"] = java_javac.version()
    except Exception:
        pass
    try:
        out["rustc (THIR)"] = sh(["rustc", "+nightly", "--version"]).strip()
    except Exception:
        pass
    return out


# ---------------------------------------------------------------- sources

def fetch_npm(cache, spec):
    """The unpacked npm tarball of `spec` (name@version): its `package/` directory."""
    dest = os.path.join(cache, "npm", spec.replace("/", "+"))
    pkg = os.path.join(dest, "package")
    if not os.path.isdir(pkg):
        os.makedirs(dest, exist_ok=True)
        name = sh(["npm", "pack", "--silent", "--pack-destination", dest, spec], cwd=dest).strip().splitlines()[-1]
        with tarfile.open(os.path.join(dest, name)) as t:
            t.extractall(dest, filter="data") if hasattr(tarfile, "data_filter") else t.extractall(dest)
        # Some tarballs use another top directory than `package/`.
        if not os.path.isdir(pkg):
            tops = [d for d in os.listdir(dest) if os.path.isdir(os.path.join(dest, d))]
            os.rename(os.path.join(dest, tops[0]), pkg)
    return pkg


def fetch_pypi(cache, spec):
    """The unpacked wheel of `spec` (name==version)."""
    dest = os.path.join(cache, "pypi", spec)
    out = os.path.join(dest, "unpacked")
    if not os.path.isdir(out):
        os.makedirs(dest, exist_ok=True)
        if not [f for f in os.listdir(dest) if f.endswith(".whl")]:
            sh([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
                "-d", dest, spec])
        whl = [f for f in os.listdir(dest) if f.endswith(".whl")][0]
        with zipfile.ZipFile(os.path.join(dest, whl)) as z:
            z.extractall(out + ".tmp")
        os.rename(out + ".tmp", out)
    return out


def _walk(root, keep):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and not x.startswith(".")
                         and not x.endswith(".dist-info"))
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(d, f), root)
            if keep(rel):
                yield rel


def prepare_npm_tree(pkg, spec, tree):
    """Copies the package's sources into `tree`: its .ts/.tsx files (not .d.ts) when it
    ships at least 10, else its hand-written .js files (not under dist/build/esm/..., not
    minified). Returns ("ts"|"js", file count) or (None, why)."""
    ts_files = list(_walk(pkg, lambda r: re.search(r"\.(ts|tsx|mts|cts)$", r) and not re.search(r"\.d\.[mc]?ts$", r)))
    if len(ts_files) >= 10:
        mode, files = "ts", ts_files
    else:
        js = list(_walk(pkg, lambda r: re.search(r"\.(js|mjs|cjs)$", r) and ".min." not in r))
        if len(js) < 10:
            return None, f"{len(ts_files)} .ts and {len(js)} .js source files (< 10)"
        mode, files = "js", js
    if len(files) > MAX_FILES:
        return None, f"{len(files)} source files (> {MAX_FILES})"
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        shutil.copy(os.path.join(pkg, rel), os.path.join(tree, rel))
    name = spec.rsplit("@", 1)[0]
    if mode == "ts":
        cfg = {"compilerOptions": {"target": "es2022", "lib": ["es2022", "dom"], "module": "esnext",
                                   "moduleResolution": "bundler", "noEmit": True, "skipLibCheck": True,
                                   "allowImportingTsExtensions": True, "jsx": "react-jsx",
                                   "baseUrl": ".", "paths": {name: ["./"], name + "/*": ["./*"]}},
               "include": ["./**/*"]}
        with open(os.path.join(tree, "tsconfig.json"), "w") as f:
            json.dump(cfg, f)
    return mode, len(files)


def prepare_pypi_tree(unpacked, tree):
    """Copies a pure-Python wheel's modules into `tree`. Returns ("py", count) or (None, why)."""
    binary = list(_walk(unpacked, lambda r: re.search(r"\.(so|pyd|dylib)$", r)))
    if binary:
        return None, "not pure Python (" + binary[0] + ")"
    files = list(_walk(unpacked, lambda r: r.endswith(".py")))
    if len(files) < 5:
        return None, f"{len(files)} modules (< 5)"
    if len(files) > MAX_FILES:
        return None, f"{len(files)} modules (> {MAX_FILES})"
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        shutil.copy(os.path.join(unpacked, rel), os.path.join(tree, rel))
    return "py", len(files)


# ---------------------------------------------------------------- indexing

def scip_index(tools, mode, tree, out, project):
    if mode in ("ts", "js"):
        cmd = ["node", os.path.join(tools, "node_modules/@sourcegraph/scip-typescript/dist/src/main.js"), "index",
               "--no-progress-bar", "--output", out]
        if mode == "js":
            cmd.append("--infer-tsconfig")
        sh(cmd, cwd=tree)
    else:
        sh(["node", os.path.join(tools, "node_modules/@sourcegraph/scip-python/index.js"), "index", ".",
            "--project-name", project, "--project-version", "0", "--output", out, "--quiet"], cwd=tree)


def scip_docs(tools, index, tree, mode, here):
    """The index's documents, with TypeScript units when `mode` is ts/js."""
    js = os.path.join(here, "scip_ts_units.js")
    out = sh(["node", "--max-old-space-size=4096", js, os.path.join(tools, "node_modules/@sourcegraph/scip-typescript"),
              index, tree, "ts" if mode in ("ts", "js") else "none"])
    return json.loads(out)


def py_units(tree, rel):
    """Python units read with `ast`, in the shape scip_ts_units.js gives."""
    with open(os.path.join(tree, rel), encoding="utf-8", errors="replace") as f:
        src = f.read()
    try:
        mod = ast.parse(src)
    except SyntaxError:
        return []
    lines = src.split("\n")
    out = []

    def visit(node, chain, parent_is_class):
        for c in ast.iter_child_nodes(node):
            if isinstance(c, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                is_class = isinstance(c, ast.ClassDef)
                kind = "class" if is_class else ("method" if parent_is_class else "function")
                m = re.compile(r"(?:def|class)\s+(" + re.escape(c.name) + r")\b").search(lines[c.lineno - 1], c.col_offset)
                start = min([d.lineno for d in c.decorator_list] + [c.lineno])
                out.append({"kind": kind, "name": c.name, "chain": list(chain), "start": start,
                            "name_line": c.lineno, "name_col": m.start(1) if m else c.col_offset,
                            "end_line": c.end_lineno, "start_off": [c.lineno - 1, c.col_offset],
                            "end_off": [c.end_lineno - 1, c.end_col_offset], "body": True})
                visit(c, chain + [c.name], is_class)
            else:
                visit(c, chain, parent_is_class)
    visit(mod, [], False)
    return out


# ---------------------------------------------------------------- calls

CALL_AFTER = {
    "ts": re.compile(r"^\s*(?:<[^()]*>)?\s*(?:\?\.)?\s*\("),
    "py": re.compile(r"^\s*\("),
}
DECORATOR_BEFORE = re.compile(r"^\s*@[\w.]*$")
DECORATOR_AFTER = re.compile(r"^\s*(\(|#|$)")  # `@name` ends there: not `@name.setter`
DEF_BEFORE = re.compile(r"^\s*(async\s+)?(def|class|function)\s+$")  # a (re)definition


def symbol_key(path, sym):
    # `local N` symbols are numbered per file.
    return (path, sym) if sym.startswith("local ") else sym


def enclosing(units, line0, col0):
    """The innermost unit whose node holds (line0, col0), or None."""
    best = None
    for u in units:
        if tuple(u["start_off"]) <= (line0, col0) < tuple(u["end_off"]):
            if best is None or tuple(u["start_off"]) >= tuple(best["start_off"]):
                best = u
    return best


def build(docs, tree, lang):
    """Every function or method defined in the tree with its call sites and callers:
    [{"path", "name", "chain", "kind", "start", "name_line", "end_line",
      "sites": [[path, line]], "callers": [[path, start, name_line, label]]}]"""
    call_after = CALL_AFTER["py" if lang == "py" else "ts"]
    units_of = {d["path"]: d.get("units") if d.get("units") is not None else py_units(tree, d["path"])
                for d in docs}
    defs = {}  # symbol key -> [(path, unit)]
    for d in docs:
        at = {(u["name_line"] - 1, u["name_col"]): u for u in units_of[d["path"]]}
        seen = set()
        for line0, col0, _l1, _c1, sym, roles in d["occ"]:
            u = at.get((line0, col0))
            if roles & 1 and u is not None and u["kind"] in ("function", "method") and u["body"]:
                k = symbol_key(d["path"], sym)
                if (k, id(u)) not in seen:
                    seen.add((k, id(u)))
                    defs.setdefault(k, []).append((d["path"], u))
    # `export default { isObject }`: the shorthand property's symbol is defined where the
    # function is referenced; a call through the property (`utils.isObject(x)`) calls it.
    alias = {}
    for d in docs:
        at = {}
        for line0, col0, l1, c1, sym, roles in d["occ"]:
            at.setdefault((line0, col0, l1, c1), []).append((sym, roles))
        for occs in at.values():
            defined = [s for s, r in occs if r & 1]
            referenced = [symbol_key(d["path"], s) for s, r in occs if not r & 1]
            for s in defined:
                for k in referenced:
                    if k in defs and not s.startswith("local "):
                        alias[s] = k
    targets = {}
    for k, us in defs.items():
        if len(us) == 1:
            path, u = us[0]
            targets[k] = {"path": path, "name": u["name"], "chain": u["chain"], "kind": u["kind"],
                          "start": u["start"], "name_line": u["name_line"], "end_line": u["end_line"],
                          "sites": set(), "member_sites": set(), "callers": set()}
    for d in docs:
        try:
            with open(os.path.join(tree, d["path"]), encoding="utf-8", errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            continue
        units = units_of[d["path"]]
        for line0, col0, l1, c1, sym, roles in d["occ"]:
            if roles & 1 or roles & 2:
                continue
            k = symbol_key(d["path"], sym)
            t = targets.get(alias.get(k, k))
            if t is None or line0 >= len(lines):
                continue
            text = lines[line0]
            if DEF_BEFORE.match(text[:col0]):
                continue
            called = l1 == line0 and call_after.match(text[c1:])
            decorates = DECORATOR_BEFORE.match(text[:col0]) and DECORATOR_AFTER.match(text[c1:])
            if not called and not decorates:
                continue
            t["sites"].add((d["path"], line0 + 1))
            if text[:col0].rstrip().endswith((".", "?.")):  # `x.f()`: a call on a receiver
                t["member_sites"].add((d["path"], line0 + 1))
            u = enclosing(units, line0, col0)
            if u is None:
                t["callers"].add((d["path"], 0, 0, "<top level>"))
            else:
                t["callers"].add((d["path"], u["start"], u["name_line"], ".".join(u["chain"] + [u["name"]])))
    out = []
    for t in targets.values():
        if t["sites"]:
            t["sites"] = sorted(t["sites"])
            t["member_sites"] = sorted(t["member_sites"])
            t["callers"] = sorted(t["callers"])
            out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    return out
