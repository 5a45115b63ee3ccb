"""Rust caller ground truth from the compiler itself: rustc's THIR (typed, name-resolved
HIR) of every body of a crate, printed by `cargo +nightly rustc --lib -- -Zunpretty=thir-flat`.

rust-analyzer (whose `scip` command the other languages' SCIP indexers would match) is
not installable from the registries this project may reach, and rustc resolves calls at
least as precisely. Every `Call` expression names its callee's DefId (`FnDef(DefId(0:N ~
krate::path))`, crate 0 = this crate) and the call's `fn_span` (file:line:col).

* units (the definitions) are read from the source with tree-sitter-rust (PyPI
  `tree-sitter`, `tree-sitter-rust`): function items with a body, impls, traits.
* a DefId is a unit when its THIR body's source spans lie inside that function item
  (the innermost one): bodies of closures roll up to their function.
* a call: a `Call` with `from_hir_call: true` (not an overloaded operator) to a DefId of
  this crate that is a unit, whose `fn_span` lies in a source file of the tree and whose
  line holds the callee's name (a call a macro or derive writes has no such text).
  A call written inside a `macro_rules!` body is left out (its caller is wherever the
  macro expands, which the source does not say). A call through a trait (`x.method()` on a generic or a trait object, or a trait
  method of a concrete type) names the trait's method; it is a caller of the trait's
  default body when there is one, of no impl.
* the caller: the innermost function item (else impl or trait, else top level) holding
  the call, as for the other languages.
* scope: only what rustc compiled (the library with all its features, else its default
  ones; this target; no cfg(test)) is seen; loci's callers and sites outside the function items that have a
  THIR body are dropped before scoring (neither right nor wrong).
"""
import os
import re
import shutil
import subprocess

HEADER = re.compile(r"^DefId\((\d+):(\d+) ~ (.*)\):$")
SPAN = re.compile(r"span: ([^\s:][^:]*):(\d+):(\d+): (\d+):(\d+)")
DEFID = re.compile(r"DefId\((\d+):(\d+) ~ ([^)]*)\)")


def registry_crates():
    """Every unpacked crate in ~/.cargo/registry/src, as name-version directory names."""
    root = os.path.expanduser("~/.cargo/registry/src")
    out = {}
    for idx in sorted(os.listdir(root)) if os.path.isdir(root) else []:
        for c in sorted(os.listdir(os.path.join(root, idx))):
            out.setdefault(c, os.path.join(root, idx, c))
    return out


def fetch(spec, work):
    """The unpacked source of crate `spec` (name-version): from the local registry, else
    fetched from crates.io by `cargo fetch` of a throwaway package depending on it."""
    found = registry_crates().get(spec)
    if found:
        return found
    m = re.match(r"^(.*?)-(\d+\.\d+\.\d+.*)$", spec)
    d = os.path.join(work, "fetch-" + spec)
    os.makedirs(os.path.join(d, "src"), exist_ok=True)
    with open(os.path.join(d, "Cargo.toml"), "w") as f:
        f.write(f'[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n'
                f'[workspace]\n[dependencies]\n"{m.group(1)}" = "={m.group(2)}"\n')
    with open(os.path.join(d, "src", "lib.rs"), "w") as f:
        f.write("")
    subprocess.run(["cargo", "fetch", "-q"], cwd=d, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return registry_crates()[spec]


def parser(pylib):
    import sys
    if pylib not in sys.path:
        sys.path.insert(0, pylib)
    import tree_sitter
    import tree_sitter_rust
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_rust.language()))


def prepare(crate_dir, build, tree):
    """Copies the crate to `build` (to compile) and its Cargo.toml and src/**.rs to `tree`
    (for loci). Returns ("rust", count) or (None, why)."""
    src = os.path.join(crate_dir, "src")
    if not os.path.isfile(os.path.join(src, "lib.rs")):
        return None, "no src/lib.rs"
    files = []
    for d, dirs, fs in os.walk(src):
        dirs.sort()
        files += [os.path.relpath(os.path.join(d, f), crate_dir) for f in sorted(fs) if f.endswith(".rs")]
    if len(files) < 5:
        return None, f"{len(files)} source files (< 5)"
    if len(files) > 400:
        return None, f"{len(files)} source files (> 400)"
    shutil.copytree(crate_dir, build, symlinks=True)
    # Only the library is compiled: dev-dependencies, tests, benches and examples go.
    with open(os.path.join(build, "Cargo.toml")) as f:
        manifest = f.read()
    sections = re.split(r"(?m)^(?=\[)", manifest)
    keep = [x for x in sections if not re.match(r"\[(\[(bench|test|example)\]\]|(target\..*\.)?dev-dependencies)", x)]
    if not any(x.startswith("[workspace]") for x in keep):
        keep.append("\n[workspace]\n")  # its own workspace, wherever the copy lies
    with open(os.path.join(build, "Cargo.toml"), "w") as f:
        f.write("".join(keep))
    for rel in files + ["Cargo.toml"]:
        os.makedirs(os.path.dirname(os.path.join(tree, rel)), exist_ok=True)
        shutil.copy(os.path.join(crate_dir, rel), os.path.join(tree, rel))
    return "rust", len(files)


def thir(build, target_dir, out):
    """Prints the THIR of the crate's library into `out`: with all its features (so that
    feature-gated code is seen too), else, when they do not build together, its default
    ones. Returns which."""
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir, RUSTFLAGS="--cap-lints=allow")
    for features in (["--all-features"], []):
        with open(out, "w") as f:
            r = subprocess.run(["cargo", "+nightly", "rustc", "--lib", "-q"] + features +
                               ["--", "-Zunpretty=thir-flat"], cwd=build, env=env, stdout=f,
                               stderr=subprocess.PIPE, text=True, timeout=900)
        if r.returncode == 0:
            return "all features" if features else "default features"
    raise RuntimeError(r.stderr[-1500:])


def units(ps, tree, rel):
    with open(os.path.join(tree, rel), "rb") as f:
        src = f.read()
    root = ps.parse(src).root_node
    out = []

    def name_of_type(n):
        t = n.child_by_field_name("type")
        if t is None:
            return "?"
        while t.type in ("generic_type", "scoped_type_identifier", "reference_type") and t.named_children:
            t = t.child_by_field_name("type") or t.child_by_field_name("name") or t.named_children[-1]
        return src[t.start_byte:t.end_byte].decode(errors="replace").split("<")[0]

    def visit(node, chain, in_impl):
        for c in node.named_children:
            kind, name, nxt = None, None, chain
            if c.type == "function_item" and c.child_by_field_name("body") is not None:
                kind = "method" if in_impl else "function"
                nm = c.child_by_field_name("name")
                name = src[nm.start_byte:nm.end_byte].decode()
            elif c.type in ("impl_item", "trait_item"):
                kind = "class"
                name = name_of_type(c) if c.type == "impl_item" else src[
                    c.child_by_field_name("name").start_byte:c.child_by_field_name("name").end_byte].decode()
                nm = c.child_by_field_name("type") if c.type == "impl_item" else c.child_by_field_name("name")
            elif c.type == "macro_definition":
                nm = c.child_by_field_name("name")
                out.append({"kind": "macro", "name": src[nm.start_byte:nm.end_byte].decode(), "chain": list(chain),
                            "start": c.start_point[0] + 1, "name_line": nm.start_point[0] + 1,
                            "name_col": nm.start_point[1], "end_line": c.end_point[0] + 1,
                            "start_off": list(c.start_point), "end_off": list(c.end_point), "body": True})
                continue
            elif c.type == "mod_item" and c.child_by_field_name("body") is not None:
                nm = c.child_by_field_name("name")
                visit(c.child_by_field_name("body"), chain + [src[nm.start_byte:nm.end_byte].decode()], False)
                continue
            if kind:
                start = c.start_point[0]
                p = c.prev_named_sibling
                while p is not None and p.type == "attribute_item" and p.end_point[0] >= start - 1:
                    start = p.start_point[0]
                    p = p.prev_named_sibling
                out.append({"kind": kind, "name": name, "chain": list(chain), "start": start + 1,
                            "name_line": nm.start_point[0] + 1, "name_col": nm.start_point[1],
                            "end_line": c.end_point[0] + 1, "start_off": list(c.start_point),
                            "end_off": list(c.end_point), "body": True})
                nxt = chain + [name]
            visit(c, nxt, c.type in ("impl_item", "trait_item") or (in_impl and c.type == "declaration_list"))
    visit(root, [], False)
    return out


def read_dump(dump, body_key, callee_key):
    """A THIR dump's function bodies and direct calls: `bodies` maps body_key(crate, index,
    defpath) of each local fn item (closures, constants and impls left out) to the spans
    its body covers in the tree ([(path, line0, col0)]); `calls` lists (callee key, path,
    line0, col0) for each call written in the source (`from_hir_call: true`) whose callee
    callee_key(DEFID match) keys (None: left out)."""
    bodies, calls = {}, []
    cur, pending, want_def, callee, hir = None, False, False, None, False
    with open(dump, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = HEADER.match(line)
            if m:
                cur = body_key(m.group(1), m.group(2), m.group(3)) if m.group(1) == "0" and "{closure#" not in m.group(3) \
                    and not re.search(r"\{(constant|constructor|impl|use|opaque|synthetic)#\d+\}$", m.group(3)) else None
                pending = False
                continue
            s = line.strip()
            if s.startswith("kind: Call {"):
                pending, want_def, callee, hir = True, False, None, False
                continue
            if pending:
                if s.startswith("ty: FnDef("):
                    want_def = True
                    continue
                if want_def and callee is None:
                    d = DEFID.search(s)
                    if d:
                        callee = callee_key(d)
                    want_def = False
                    continue
                if s.startswith("from_hir_call:"):
                    hir = s.endswith("true,")
                    continue
                if s.startswith("fn_span:"):
                    sp = SPAN.search(s)
                    if sp and hir and callee:
                        calls.append((callee, sp.group(1), int(sp.group(2)) - 1, int(sp.group(3)) - 1))
                    pending = False
                    continue
            if cur is not None and "span:" in s:
                sp = SPAN.search(s)
                if sp and not sp.group(1).startswith("/"):
                    bodies.setdefault(cur, []).append((sp.group(1), int(sp.group(2)) - 1, int(sp.group(3)) - 1))
    return bodies, calls


def body_units(bodies, file_units):
    """{key: (path, unit)}: for each body of read_dump, the innermost fn item holding its
    spans in the file holding most of them (file_units(path): that file's units, or None)."""
    from .oracle import enclosing
    unit_of = {}
    for did, spans in bodies.items():
        by_path = {}
        for p, l, c in spans:
            by_path.setdefault(p, []).append((l, c))
        path = max(by_path, key=lambda p: len(by_path[p]))
        us = file_units(path)
        if not us:
            continue
        first = min(by_path[path])
        u = enclosing([x for x in us if x["kind"] in ("function", "method")], *first)
        if u is not None and tuple(u["end_off"]) >= max(by_path[path]):
            unit_of[did] = (path, u)
    return unit_of


def build_targets(dump, tree, ps):
    """The oracle's targets, in oracle.build's shape, from a THIR dump of the tree's crate."""
    from .oracle import enclosing
    units_of, lines_of = {}, {}

    def file_units(path):
        if path not in units_of:
            full = os.path.join(tree, path)
            units_of[path] = units(ps, tree, path) if os.path.isfile(full) else None
            if units_of[path] is not None:
                with open(full, encoding="utf-8", errors="replace") as f:
                    lines_of[path] = f.read().split("\n")
        return units_of[path]

    # local DefId -> [(path, line0, col0)] spans in tree files; (callee DefId, path, line0, col0)
    bodies, calls = read_dump(
        dump,
        lambda crate, index, _path: crate + ":" + index,
        lambda d: d.group(1) + ":" + d.group(2) if d.group(1) == "0" else None,
    )
    unit_of = body_units(bodies, file_units)  # DefId -> (path, unit)
    # A unit named by two DefIds (a macro writing several bodies there) is left out.
    count = {}
    for p, u in unit_of.values():
        count[id(u)] = count.get(id(u), 0) + 1
    targets = {}
    for did, (path, u) in unit_of.items():
        if count[id(u)] == 1:
            targets[did] = {"path": path, "name": u["name"], "chain": u["chain"], "kind": u["kind"],
                            "start": u["start"], "name_line": u["name_line"], "end_line": u["end_line"],
                            "sites": set(), "member_sites": set(), "callers": set()}
    for callee, path, l0, c0 in calls:
        t = targets.get(callee)
        us = file_units(path)
        if t is None or us is None or l0 >= len(lines_of[path]):
            continue
        if not re.search(r"\b" + re.escape(t["name"]) + r"\b", lines_of[path][l0]):
            continue
        u = enclosing(us, l0, c0)
        if u is not None and u["kind"] == "macro":
            continue  # written in a macro_rules! body: its caller is wherever it expands
        t["sites"].add((path, l0 + 1))
        if re.search(r"\.\s*" + re.escape(t["name"]) + r"\b", lines_of[path][l0]):
            t["member_sites"].add((path, l0 + 1))  # `x.f()`: a method call on a receiver
        if u is None:
            t["callers"].add((path, 0, 0, "<top level>"))
        else:
            t["callers"].add((path, u["start"], u["name_line"], ".".join(u["chain"] + [u["name"]])))
    out = []
    for t in targets.values():
        if t["sites"]:
            t["sites"] = sorted(t["sites"])
            t["member_sites"] = sorted(t["member_sites"])
            t["callers"] = sorted(t["callers"])
            out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    # The function items rustc compiled: code cfg'd out (tests, features off by default,
    # other targets) is invisible to it, so loci's answers there are not scored.
    compiled = {}
    for path, u in unit_of.values():
        compiled.setdefault(path, []).append((u["start"], u["end_line"]))
    return out, compiled


def in_compiled(compiled, path, line):
    return any(s - 1 <= line <= e for s, e in compiled.get(path, ()))
