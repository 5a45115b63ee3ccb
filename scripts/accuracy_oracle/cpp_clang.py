"""C++ caller ground truth from clang's AST (`clang++ -std=c++17 -Xclang -ast-dump=json
-fsyntax-only -w -ferror-limit=0`), the same clang as the C oracle.

Every `.cc`/`.cpp`/`.cxx` file of the tree is one translation unit, run from the tree's
root with `-I` for every folder of the tree holding a header and each of its ancestors
(so `"gtest/gtest.h"` and `"gtest.h"` both resolve), then the same for the source tree
it was copied from (vendored, test and example folders the copy leaves out and loci
does not index), Python's include folder and the extra folders the harness passes
(pybind11's, cppy's, googletest's). A folder holding a header named like one of the C
library's (`io/reader.h` beside a `stdio.h`) is searched by `#include "..."` only
(`-iquote`). A unit that stops at a fatal error (a header missing) is left out whole.

* a definition: a `FunctionDecl`, `CXXMethodDecl`, `CXXConstructorDecl`,
  `CXXDestructorDecl` or `CXXConversionDecl` with a body, written (not implicit) in a
  file of the tree, not a template's instantiation; it is identified by (file, line,
  column, name) of its name, so an inline function of a header that several units
  include is one definition. Its chain is its semantic parents' names, outermost first
  (namespaces, classes; an anonymous namespace or class adds none), so a method defined
  out of line in a `.cc` is `ns.Class.method` as one defined in its class. A target is a
  function or method (not a constructor, destructor, operator, conversion function or
  lambda: they are not called by name) whose name the source spells on its line.
* a call: a `CallExpr` or `CXXMemberCallExpr` whose callee is a `DeclRefExpr` to a
  function or method (`f(x)`, `ns::f(x)`, `Class::st(x)`) or a `MemberExpr` naming a
  method (`x.m()`, `p->m()`, `m()` through an implicit `this`). Its target is the
  definition the referenced declaration belongs to: clang's `referencedDecl` points at
  a declaration (often the one in the class), linked to its definition through the
  unit's `previousDecl` chains, else through any unit where a declaration at the same
  place has a definition, else through the mangled name (external linkage, defined
  once). A call in or to a template's instantiation is mapped back to the template
  (an instantiation's declarations sit at their template's places), so a call that
  only an instantiation resolves (`t.size()` on a `T t`) names what it resolves to in
  the instantiations this program makes. That is static dispatch: a virtual call names
  the method of the receiver's static type (as javac's oracle does). A call through a
  function pointer, `std::function` or pointer to member, an overloaded operator or a
  constructor (`T(x)`, `new T`) is no call of a target.
* the call's site: the line of the callee's name (a `MemberExpr`'s or `DeclRefExpr`'s
  end, the name unless explicit template arguments follow it); a name written in a
  macro's argument counts at the line it is written on, a call that a macro's body
  writes is dropped unless that line spells the name (as in the C oracle).
  `member_sites` are the sites through an explicit receiver (`x.m()`, `this->m()`).
* the caller: the innermost definition holding the call (a lambda's calls belong to
  the function around it, an instantiation's to its template); calls in initializers
  at namespace or class scope (`int x = f();`, a default member initializer) are
  top-level code.
* scope: what the preprocessor kept with the host's configuration (no extra -D).
  Loci's callers and sites are kept only inside the definitions clang saw and on the
  lines of the top-level calls it saw; left out are definitions whose body clang could
  not analyse (an error left a `RecoveryExpr` or an invalid declaration: the truth there
  is partial) and templates whose dependent calls no instantiation resolved (an
  uninstantiated template's `x.f()` on a `T x` names nothing): their calls are dropped
  from the oracle too.
* overloads: a target sharing its file, chain and name with another definition is
  `overloaded`, named by its arity when every overload has a fixed one and it alone
  takes that many arguments, else by its line.
Clang's JSON leaves out a location's file and line when they are the previous printed
location's: they are carried over in print order, through the declarations of other
files (system headers) too, which are skimmed, not decoded: the output is hundreds of
megabytes per unit, mostly the C++ library's templates.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

from .c_clang import copy_files

sys.setrecursionlimit(200000)

SKIP = {"test", "tests", "testing", "examples", "example", "docs", "doc", "contrib", "programs",
        "fuzz", "bench", "benchmark", "benchmarks", "tools", "build", "dist", "scripts", "third_party",
        "thirdparty", "vendor", "samples"}
UNITS = (".cc", ".cpp", ".cxx")
HEADERS = (".h", ".hh", ".hpp", ".hxx", ".inl", ".ipp", ".tcc")
MAX_FILES = 400
GENERATED = (b"Generated by Cython", b"generated by SWIG", b"Generated by SWIG", b"DO NOT EDIT")
FUNCS = {"FunctionDecl", "CXXMethodDecl", "CXXConstructorDecl", "CXXDestructorDecl", "CXXConversionDecl"}
TARGETS = {"FunctionDecl", "CXXMethodDecl"}
RECORDS = {"CXXRecordDecl", "ClassTemplateSpecializationDecl", "ClassTemplatePartialSpecializationDecl"}
DEPENDENT = {"UnresolvedLookupExpr", "UnresolvedMemberExpr", "CXXDependentScopeMemberExpr",
             "DependentScopeDeclRefExpr"}
BODIES = {"CompoundStmt", "CXXTryStmt"}
ELEMENT = b"\n    {\n"   # a top-level declaration of the unit's JSON starts so


def _generated(path):
    with open(path, "rb") as f:
        head = f.read(1000)
    return any(g in head for g in GENERATED)


def prepare(root, tree):
    files = []
    for d, dirs, fs in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x.lower() not in SKIP and not x.startswith("."))
        files += [os.path.relpath(os.path.join(d, f), root) for f in sorted(fs) if f.endswith(UNITS + HEADERS)]
    files = [f for f in files if not _generated(os.path.join(root, f))]
    units = [f for f in files if f.endswith(UNITS)]
    if len(units) < 5:
        return None, f"{len(units)} C++ units (< 5)"
    if len(files) > MAX_FILES:
        return None, f"{len(files)} C++ files (> {MAX_FILES})"
    copy_files(root, tree, files)
    return "cpp", len(files)


def include_dirs(root):
    """Every folder under `root` holding a header, and its ancestors up to `root`."""
    dirs = set()
    for d, subdirs, fs in os.walk(root):
        subdirs.sort()
        if any(f.endswith(HEADERS) for f in fs):
            rel = os.path.relpath(d, root)
            while True:
                dirs.add(os.path.normpath(os.path.join(root, rel)))
                if rel in (".", ""):
                    break
                rel = os.path.dirname(rel) or "."
    return sorted(dirs)


def _system_headers():
    if not hasattr(_system_headers, "names"):
        _system_headers.names = {f for f in os.listdir("/usr/include") if f.endswith(".h")}
    return _system_headers.names


def include_flag(folder, cwd):
    """`-I` for a folder, `-iquote` when it holds a header named like one of the C
    library's (it would replace the system's for every `#include <...>`)."""
    try:
        shadows = any(f in _system_headers() for f in os.listdir(os.path.join(cwd, folder)))
    except OSError:
        shadows = False
    return f"-iquote{folder}" if shadows else f"-I{folder}"


def _std_dirs():
    """The C++ standard library's include folders, as clang++ searches them."""
    r = subprocess.run(["clang++", "-xc++", "-E", "-v", "/dev/null", "-o", "/dev/null"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dirs, on = [], False
    for line in r.stderr.splitlines():
        if line.startswith("#include <...>"):
            on = True
        elif line.startswith("End of search"):
            on = False
        elif on and "/c++/" in line:
            dirs.append(line.strip())
    return dirs


_STD_INCLUDE = re.compile(r"^\s*#\s*include\s*<([A-Za-z0-9_]+)>", re.M)


def std_pch(tree, files, out_dir):
    """A precompiled header of the C++ standard library's headers the tree includes
    (`<vector>`, `<map>`: names without an extension, found in the library's folders),
    or None. Each unit gets it with `-include-pch`: the library's declarations are then
    not printed again by every unit (they are three quarters of the JSON), and the
    tree's code compiles as before (these headers do not depend on what precedes them)."""
    std = _std_dirs()
    names = set()
    for rel in files:
        with open(os.path.join(tree, rel), encoding="utf-8", errors="replace") as f:
            names.update(_STD_INCLUDE.findall(f.read()))
    names = sorted(n for n in names if any(os.path.isfile(os.path.join(d, n)) for d in std))
    if not names:
        return None
    header = os.path.join(out_dir, "std.hpp")
    with open(header, "w") as f:
        f.write("".join(f"#include <{n}>\n" for n in names))
    r = subprocess.run(["clang++", "-std=c++17", "-x", "c++-header", "-w", header, "-o", header + ".pch"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return header + ".pch" if r.returncode == 0 else None


def _elements(stream):
    """The unit's top-level declarations, as the bytes of their JSON, in print order."""
    buf = bytearray()
    start, pos = -1, 0
    while True:
        chunk = stream.read(1 << 22)
        if chunk:
            buf += chunk
        while True:
            j = buf.find(ELEMENT, pos)
            if j < 0:
                break
            if start >= 0:
                yield bytes(buf[start:j])
            start = pos = j + 1
        if not chunk:
            break
        cut = start if start >= 0 else max(0, len(buf) - len(ELEMENT))
        del buf[:cut]
        pos = max(0, pos - cut, len(buf) - len(ELEMENT))
        if start >= 0:
            start = 0
    if start >= 0:
        yield bytes(buf[start:])


_FILE = re.compile(rb'"file": "((?:[^"\\]|\\.)*)"')
_LINE = re.compile(rb'"line": (\d+)')
_INCLUDED = re.compile(rb'"includedFrom": \{[^{}]*\}')


def _skim(element, cur):
    """The carried location after a declaration that is not decoded: its last printed
    file (not an `includedFrom`) and line."""
    k = len(element)
    while True:
        k = element.rfind(b'"file": "', 0, k)
        if k < 0:
            break
        if not element[max(0, k - 40):k].rstrip().endswith(b'"includedFrom": {'):
            cur["file"] = json.loads(b'"' + _FILE.match(element, k).group(1) + b'"')
            break
    k = element.rfind(b'"line": ')
    if k >= 0:
        cur["line"] = int(_LINE.match(element, k).group(1))


def _own_file(element, cur):
    """The file of a top-level declaration's own location (its expansion), else None."""
    k = element.find(b'"range": {')
    head = _INCLUDED.sub(b"", element[:k if k >= 0 else 4000])
    loc = head.find(b'"loc": {')
    if loc < 0 or head[loc:loc + 10] == b'"loc": {},' or b'"offset"' not in head[loc:]:
        return None
    files = _FILE.findall(head[loc:])
    return json.loads(b'"' + files[-1] + b'"') if files else cur["file"]


class _Unit:
    """One translation unit's declarations, definitions and calls, read from clang's JSON."""

    def __init__(self, tree_files):
        self.tree_files = tree_files
        self.cur = {"file": None, "line": None}
        self.nodes = {}     # id -> {kind, name, key, inst, prev, mangled, def}
        self.ctxs = {}      # id -> (name or None, parent id, kind)
        self.by_key = {}    # key -> id of the first declaration not instantiated there
        self.defs = {}      # def key -> definition
        self.calls = []     # (callee id, [site candidates], name, member, caller)
        self.inst_bodies = []  # ids of instantiated functions with a body
        self.broken = set()    # def keys or inst ids with an error in their body
        self.dependent = set()  # def keys whose body holds a call only instantiations resolve

    def path(self, f):
        if f is None:
            return None
        p = os.path.normpath(f)
        return p if p in self.tree_files else None

    def loc_of(self, loc):
        """Carries the printed location over; returns (path in the tree or None, line, col)
        of where it is written: a macro argument's spelling, else the expansion."""
        if not isinstance(loc, dict):
            return None
        if "spellingLoc" in loc or "expansionLoc" in loc:
            sp = self.loc_of(loc.get("spellingLoc"))
            ex = self.loc_of(loc.get("expansionLoc"))
            return sp if (loc.get("expansionLoc") or {}).get("isMacroArgExpansion") else ex
        if "offset" not in loc:
            return None
        if "file" in loc:
            self.cur["file"] = loc["file"]
        if "line" in loc:
            self.cur["line"] = loc["line"]
        return (self.path(self.cur["file"]), self.cur["line"], loc.get("col", 0))

    def carry(self, value):
        """Locations printed inside attributes that are not child nodes."""
        if isinstance(value, dict):
            if "offset" in value or "spellingLoc" in value:
                self.loc_of(value)
                return
            for v in value.values():
                if isinstance(v, (dict, list)):
                    self.carry(v)
        elif isinstance(value, list):
            for v in value:
                self.carry(v)

    def read(self, stream):
        for element in _elements(stream):
            if self.path(_own_file(element, self.cur)) is None:
                _skim(element, self.cur)
                continue
            text = element.decode("utf-8", errors="replace")
            node, _ = json.JSONDecoder().raw_decode(text, text.index("{"))
            self.visit(node, {"parent": None, "caller": None, "inst": False, "lambda": False,
                              "template": None, "role": None})

    def chain(self, parent):
        out = []
        seen = set()
        while parent is not None and parent in self.ctxs and parent not in seen:
            seen.add(parent)
            name, up, kind = self.ctxs[parent]
            if kind == "function":
                break
            if name:
                out.append(name)
            parent = up
        return list(reversed(out))

    def visit(self, node, ctx):
        kind = node.get("kind")
        loc = b = e = None
        for k, v in node.items():
            if k == "loc":
                loc = self.loc_of(v)
            elif k == "range":
                b = self.loc_of(v.get("begin"))
                e = self.loc_of(v.get("end"))
                break
            elif k not in ("id", "kind"):
                break
        nid = node.get("id")
        inner = node.get("inner") or []
        sub = ctx
        if kind and kind.endswith("Decl") and "loc" not in node and "range" not in node:
            return  # a reference to a declaration printed elsewhere (an explicit specialization)
        if kind == "NamespaceDecl" or kind in RECORDS:
            named = node.get("name") if not node.get("isImplicit") else None
            if kind == "CXXRecordDecl" and (node.get("definitionData") or {}).get("isLambda"):
                named = None
            self.ctxs[nid] = (named, node.get("parentDeclContextId", ctx["parent"]),
                              "namespace" if kind == "NamespaceDecl" else "record")
            sub = dict(ctx, parent=nid, inst=ctx["inst"] or ctx["role"] == "instance")
        elif kind == "ClassTemplateDecl":
            sub = dict(ctx, role="class template")
        elif kind == "FunctionTemplateDecl":
            sub = dict(ctx, role="function template", template=b[1] if b else None)
        elif kind == "LambdaExpr":
            sub = dict(ctx, **{"lambda": True}, in_lambda=True)
        elif kind in FUNCS:
            sub = self.function(node, ctx, loc, b, e)
        elif kind in DEPENDENT and not ctx["inst"] and not ctx.get("in_lambda") and isinstance(ctx["caller"], tuple):
            self.dependent.add(ctx["caller"])
        if (kind == "RecoveryExpr" or node.get("isInvalid")) and sub["caller"] is not None:
            self.broken.add(sub["caller"])
        if kind in ("DeclRefExpr", "MemberExpr"):
            node["_sites"] = [x for x in (e, b) if x]
        first_fn = True
        for k, v in node.items():
            if k in ("loc", "range", "id", "kind"):
                continue
            if k in ("inner", "array_filler") and isinstance(v, list):
                for c in v:
                    if not isinstance(c, dict):
                        continue
                    cctx = sub
                    ck = c.get("kind")
                    if sub["role"] == "class template" and ck == "ClassTemplateSpecializationDecl":
                        cctx = dict(sub, role="instance")
                    elif sub["role"] == "function template" and ck in FUNCS:
                        cctx = dict(sub, role="pattern" if first_fn else "instance")
                        first_fn = False
                    elif sub["role"] is not None:
                        cctx = dict(sub, role=None)
                    self.visit(c, cctx)
            elif isinstance(v, (dict, list)):
                self.carry(v)
        if kind in ("CallExpr", "CXXMemberCallExpr") and inner:
            self.call(inner[0], ctx)

    def function(self, node, ctx, loc, b, e):
        nid = node.get("id")
        name = node.get("name") or ""
        key = (loc[0], loc[1], loc[2], name) if loc and loc[0] and not node.get("isImplicit") else None
        inst = ctx["inst"] or ctx["role"] == "instance"
        if key is not None and not inst and self.by_key.get(key, nid) != nid:
            # A second declaration at the place of one seen: an explicit instantiation's
            # copy of a member, at its template's place; unless it redeclares that one
            # (a macro that declares a method in its class and defines it, both at the
            # macro's place: BOOST_AUTO_TEST_CASE).
            chain, prev = set(), node.get("previousDecl")
            while prev in self.nodes and prev not in chain:
                chain.add(prev)
                prev = self.nodes[prev]["prev"]
            inst = self.by_key[key] not in chain
        info = {"id": nid, "kind": node.get("kind"), "name": name, "key": key, "inst": inst,
                "prev": node.get("previousDecl"), "mangled": node.get("mangledName"), "def": None}
        self.nodes[nid] = info
        if key is not None and not inst:
            self.by_key.setdefault(key, nid)
        body = any(isinstance(c, dict) and c.get("kind") in BODIES for c in node.get("inner") or [])
        if ctx["lambda"] and name == "operator()":
            return dict(ctx, **{"lambda": False}, role=None, in_lambda=True)
        if inst:
            if body:
                self.inst_bodies.append(nid)
            return dict(ctx, caller=nid, inst=True, role=None)
        if not body or key is None or not b or not e:
            return dict(ctx, role=None)
        parent = node.get("parentDeclContextId", ctx["parent"])
        chain = self.chain(parent)
        params = [c for c in node.get("inner") or [] if isinstance(c, dict) and c.get("kind") == "ParmVarDecl"]
        start = ctx["template"] if ctx["role"] == "pattern" and ctx["template"] else b[1]
        in_class = parent in self.ctxs and self.ctxs[parent][2] == "record"
        self.defs.setdefault(key, {
            "path": key[0], "name": name, "chain": chain, "kind": "method" if in_class else "function",
            "start": min(start, loc[1]) if b[0] == key[0] else loc[1], "name_line": loc[1],
            "end_line": max(e[1], loc[1]) if e[0] == key[0] else loc[1],
            "targetable": node.get("kind") in TARGETS and not name.startswith("operator") and bool(name),
            "arity": len(params), "fixed": not node.get("variadic") and not any(
                "init" in p or p.get("isParameterPack") for p in params)})
        info["def"] = key
        self.ctxs[nid] = (None, parent, "function")
        return dict(ctx, parent=nid, caller=key, role=None, **{"lambda": False})

    def call(self, callee, ctx):
        while callee.get("kind") in ("ImplicitCastExpr", "ParenExpr") and callee.get("inner"):
            callee = callee["inner"][0]
        ck = callee.get("kind")
        if ck == "DeclRefExpr":
            ref = callee.get("referencedDecl") or {}
            if ref.get("kind") not in TARGETS:
                return
            target, name, member = ref.get("id"), ref.get("name", ""), False
        elif ck == "MemberExpr":
            target, name = callee.get("referencedMemberDecl"), callee.get("name", "")
            base = (callee.get("inner") or [{}])[0]
            while base.get("kind") == "ImplicitCastExpr" and base.get("inner"):
                base = base["inner"][0]
            member = not (base.get("kind") == "CXXThisExpr" and base.get("implicit"))
        else:
            return
        if not name or name.startswith(("operator", "~")):
            return
        self.calls.append((target, callee.get("_sites") or [], name, member, ctx["caller"]))


def _spells(line, name):
    return re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", line) is not None


def _external(mangled):
    """A mangled name of external linkage (one entity across units)."""
    return bool(mangled) and not mangled.startswith("_ZL") and "_GLOBAL__N" not in mangled


def build_targets(tree, source_root=None, extra_includes=(), log=None, use_pch=True):
    """(targets, compiled spans) of `tree` (the copy loci indexes). Headers are looked
    up in the tree first, then in the source tree it was copied from, Python's and
    `extra_includes`; clang runs from the tree's root so the tree's paths print relative."""
    tree = os.path.abspath(tree)
    files = sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs)
    tree_files = {os.path.normpath(f) for f in files}
    units = [f for f in files if f.endswith(UNITS)]
    includes = [os.path.relpath(i, tree) for i in include_dirs(tree)]
    if source_root:
        includes += include_dirs(os.path.abspath(source_root))
    includes += [sysconfig.get_paths()["include"]] + list(extra_includes)
    flags = [include_flag(i, tree) for i in includes]
    scratch = tempfile.mkdtemp(prefix="cpp-oracle-")
    pch = std_pch(tree, files, scratch) if use_pch else None
    if pch:
        flags = ["-include-pch", pch] + flags
    defs = {}          # def key -> definition
    loc2def = {}       # declaration key -> def key (None: two definitions)
    mangled2def = {}   # external mangled name -> def key (None: two definitions)
    instantiated = set()
    broken, dependent = set(), set()
    pending = []       # (unit, callee id, sites, name, member, caller)
    fatal = []
    for rel in units:
        with tempfile.TemporaryFile() as err:
            p = subprocess.Popen(["clang++", "-std=c++17", "-Xclang", "-ast-dump=json", "-fsyntax-only", "-w",
                                  "-ferror-limit=0"] + flags + [rel], cwd=tree, stdout=subprocess.PIPE, stderr=err)
            unit = _Unit(tree_files)
            unit.read(p.stdout)
            p.wait()
            err.seek(0)
            stderr = err.read().decode("utf-8", errors="replace")
        if "fatal error:" in stderr or p.returncode not in (0, 1):
            # What follows a missing header is not analysed: the unit's calls would be a
            # partial truth. It is left out whole.
            fatal.append(rel)
            if log:
                log(f"cpp: {rel}: left out: " + next((x for x in stderr.splitlines() if "fatal error" in x),
                                                     f"exit {p.returncode}")[:200])
            continue
        _link(unit, defs, loc2def, mangled2def, instantiated, broken, dependent, pending)
    shutil.rmtree(scratch, ignore_errors=True)
    if len(fatal) * 2 > len(units):
        raise RuntimeError(f"{len(fatal)} of {len(units)} units stop at a fatal error, e.g. {fatal[0]}")
    return _targets(tree, defs, loc2def, mangled2def, instantiated, broken, dependent, pending)


def _link(unit, defs, loc2def, mangled2def, instantiated, broken, dependent, pending):
    """Adds one unit's definitions to the program's and keeps its calls for resolving."""
    parent = {}

    def find(x):
        while parent.get(x, x) != x:
            parent[x] = parent.get(parent[x], parent[x])
            x = parent[x]
        return x
    for nid, info in unit.nodes.items():
        prev = info["prev"]
        if prev in unit.nodes and unit.nodes[prev]["inst"] == info["inst"]:
            parent[find(nid)] = find(prev)
    groups = {}
    for nid in unit.nodes:
        groups.setdefault(find(nid), []).append(nid)
    group_def = {}
    for root, members in groups.items():
        ds = [unit.nodes[m]["def"] for m in members if unit.nodes[m]["def"]]
        if ds:
            group_def[root] = ds[0]
            for m in members:
                k = unit.nodes[m]["key"]
                if k is not None and loc2def.get(k, ds[0]) != ds[0]:
                    loc2def[k] = None
                elif k is not None:
                    loc2def[k] = ds[0]
            for m in members:
                mg = unit.nodes[m]["mangled"]
                if _external(mg) and not unit.nodes[m]["inst"]:
                    mangled2def[mg] = ds[0] if mangled2def.get(mg, ds[0]) == ds[0] else None
                    break
    for key, d in unit.defs.items():
        defs.setdefault(key, d)
    for nid in unit.inst_bodies:
        if nid not in unit.broken:
            instantiated.update(_keys(unit, nid, groups, find))
    broken.update(c for c in unit.broken if isinstance(c, tuple))
    dependent.update(unit.dependent)

    def ref(nid):
        """How to find a declaration's definition: (this unit's, [declaration keys], mangled)."""
        if nid not in unit.nodes:
            return None
        info = unit.nodes[nid]
        local = None if info["inst"] else group_def.get(find(nid))
        mangled = None if info["inst"] else next((unit.nodes[m]["mangled"] for m in groups[find(nid)]
                                                  if _external(unit.nodes[m]["mangled"])), None)
        return local, _keys(unit, nid, groups, find), mangled
    for target, sites, name, member, caller in unit.calls:
        callee = ref(target)
        if callee is None:
            continue  # a function the tree does not declare (the C++ library's, pybind11's)
        if isinstance(caller, str):  # a call in an instantiation: its template's
            if caller in unit.broken:
                continue
            caller = ("inst",) + tuple(_keys(unit, caller, groups, find))
        pending.append((callee, sites, name, member, caller))


def _keys(unit, nid, groups, find):
    """The places of a declaration and of its redeclarations in the unit."""
    info = unit.nodes[nid]
    out = [info["key"]] if info["key"] is not None else []
    out += [unit.nodes[m]["key"] for m in groups.get(find(nid), ()) if m != nid and unit.nodes[m]["key"] is not None]
    return out


def _targets(tree, defs, loc2def, mangled2def, instantiated, broken, dependent, pending):
    lines_of = {}

    def text(path, line):
        if path not in lines_of:
            try:
                with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
                    lines_of[path] = f.read().split("\n")
            except OSError:
                lines_of[path] = []
        ls = lines_of[path]
        return ls[line - 1] if 0 < line <= len(ls) else ""

    def resolve(keys):
        for k in keys:
            d = loc2def.get(k)
            if d is not None:
                return d
        return None

    done = {k for k in instantiated}
    inst_defs = {loc2def.get(k) for k in done} - {None}
    inst_defs |= {k for k in done if k in defs}

    def scored(key):
        """Whether the calls in a definition are the whole truth."""
        return key not in broken and (key not in dependent or key in inst_defs)
    targets = {}
    top_lines = set()
    for (local, keys, mangled), sites, name, member, caller in pending:
        target = local or resolve(keys) or (mangled2def.get(mangled) if mangled else None)
        if target is None or target not in defs or not defs[target]["targetable"]:
            continue
        site = next(((p, l) for p, l, _ in sites if p is not None and _spells(text(p, l), name)), None)
        if site is None:
            continue  # written by a macro's body, or outside the tree
        if isinstance(caller, tuple) and caller and caller[0] == "inst":
            caller = resolve(caller[1:])
            if caller is None:
                continue
        if caller is not None and (caller not in defs or not scored(caller)):
            continue
        d = defs[target]
        t = targets.setdefault(target, dict({k: v for k, v in d.items() if k not in ("targetable", "arity", "fixed")},
                                            sites=set(), member_sites=set(), callers=set()))
        t["sites"].add(site)
        if member:
            t["member_sites"].add(site)
        if caller is None:
            t["callers"].add((site[0], 0, 0, "<top level>"))
            top_lines.add(site)
        else:
            c = defs[caller]
            t["callers"].add((c["path"], c["start"], c["name_line"], c["name"]))
    same = {}
    for key, d in defs.items():
        same.setdefault((d["path"], tuple(d["chain"]), d["name"]), []).append(key)
    out = []
    for key, t in targets.items():
        if not _spells(text(t["path"], t["name_line"]), t["name"]):
            continue  # a name the source does not spell there (a macro wrote it)
        overloads = same[(t["path"], tuple(t["chain"]), t["name"])]
        if len(overloads) > 1:
            t["overloaded"] = True
            arities = [defs[k]["arity"] for k in overloads]
            if all(defs[k]["fixed"] for k in overloads) and arities.count(defs[key]["arity"]) == 1:
                t["arity"] = str(defs[key]["arity"])
        for k in ("sites", "member_sites", "callers"):
            t[k] = sorted(t[k])
        out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    # What clang saw whole: the definitions it analysed, and the lines of the calls it
    # saw outside any (initializers at namespace or class scope).
    compiled = {}
    for key, d in defs.items():
        if scored(key):
            compiled.setdefault(d["path"], []).append((d["start"], d["end_line"]))
    for path, line in sorted(top_lines):
        compiled.setdefault(path, []).append((line, line))
    return out, compiled
