"""Ground truth for the agent evaluation on tokio, built without loci.

    python3 -m agent_eval.truth build [--crate DIR] [--work DIR] [--out FILE]   (from scripts/)

Writes scripts/agent_eval/truth-tokio-VERSION.json. Sources, per kind of answer:

* call sites, callers and callees (tasks callers_add_permits, impact_sleep_reset,
  ambiguous_acquire, callees_poll_tick, and the THIR half of impact_notify_file):
  rustc's THIR (`cargo +nightly rustc ... -- -Zunpretty=thir-flat`), as
  scripts/accuracy_oracle/rust_thir.py reads it, over three kinds of compilation of a
  copy of the crate (its dev-dependencies kept, `[patch.crates-io] tokio = { path = "." }`
  so that tokio-test and tokio-stream see this copy): the library, the library's unit
  tests (`--profile test`, so `#[cfg(test)]` code such as `src/sync/tests/` is seen), and
  every integration test under `tests/` whose text names a target. All with
  `--features full,test-util,tracing` and `RUSTFLAGS=--cfg tokio_unstable`, so that the
  unstable and tracing code is compiled too. A call is a THIR `Call` with
  `from_hir_call: true` whose callee DefId is the target's (an integration test names the
  library's DefIds by path, matched with the crate hash left out), whose `fn_span` line
  holds the callee's name and that is not written inside a `macro_rules!` body. A call
  through a trait names the trait's method (static dispatch only). Code no compilation
  saw (`cfg(loom)`, other targets) is not labelled.
* definitions (units): tree-sitter-rust (the accuracy oracle's pinned versions), after
  blanking the `name! {` and `}` of every item-level brace macro (tokio wraps most of its
  items in `cfg_rt! { ... }` and the like, whose bodies tree-sitter leaves as token
  trees); blanking keeps every line and column.
* files that depend on src/sync/notify.rs (impact_notify_file): the files holding a THIR
  call of a function defined there, or a path rustc resolved to an item defined there
  (`-Zunpretty=hir-tree` of the same compilations: `use`s, types of fields and
  signatures, `Notify::new`), plus, for code no compilation saw (`cfg(loom)` tests, other
  targets), the files whose code names `Notify` or `OwnedNotified` as a tree-sitter
  identifier: no other item of the crate has those names (`Notified` and `NotifyGuard`
  have namesakes in src/runtime/task and src/sync/broadcast.rs, so only rustc decides
  those).
* outline of src/sync/semaphore.rs: tree-sitter items of the file (unwrapped as above)
  outside function bodies: functions and methods (with or without a body), structs,
  enums, unions, traits, type aliases, consts, statics, `macro_rules!`.
* `MSRV` lines: a plain scan of every file of the crate that decodes as UTF-8 text
  (no .gitignore, no index), counting lines that contain `MSRV`.
* files under src/sync/mpsc/ and their line counts: os.walk and the file's lines.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from accuracy_oracle import oracle, rust_thir  # noqa: E402

FEATURES = "full,test-util,tracing"
RUSTFLAGS = "--cfg tokio_unstable --cap-lints=allow"

# The definitions whose callers, sites or callees the tasks score: (path, enclosing chain, name).
CALL_TARGETS = {
    "add_permits": ("src/sync/semaphore.rs", ["Semaphore"], "add_permits"),
    "sleep_reset": ("src/time/sleep.rs", ["Sleep"], "reset"),
    "semaphore_acquire": ("src/sync/semaphore.rs", ["Semaphore"], "acquire"),
}
CALLEE_TARGETS = {
    "poll_tick": ("src/time/interval.rs", ["Interval"], "poll_tick"),
}
DEFINITIONS = {
    "spawn_blocking": ("src/task/blocking.rs", [], "spawn_blocking"),
    "joinset_spawn": ("src/task/join_set.rs", ["JoinSet"], "spawn"),
}
NOTIFY_FILE = "src/sync/notify.rs"
NOTIFY_TYPES = ("Notify", "Notified", "OwnedNotified", "NotifyGuard")
NOTIFY_UNIQUE = ("Notify", "OwnedNotified")  # no other item of the crate has these names
NOTIFY_MODULE = "tokio::sync::notify::"
OUTLINE_FILE = "src/sync/semaphore.rs"
MSRV = "MSRV"
MPSC_DIR = "src/sync/mpsc/"

HEADER = rust_thir.HEADER
SPAN = rust_thir.SPAN
DEFID = rust_thir.DEFID
HASH = re.compile(r"\[[0-9a-f]+\]")


def crate_dirs():
    """tokio-1.* directories in the cargo registry, highest version last."""
    found = glob.glob(os.path.expanduser("~/.cargo/registry/src/*/tokio-1.*"))
    found = [d for d in found if re.search(r"tokio-1\.\d+\.\d+$", d)]
    return sorted(found, key=lambda d: tuple(int(x) for x in d.rsplit("-", 1)[1].split(".")))


# ---------------------------------------------------------------- definitions (tree-sitter)

def unwrap_macros(ps, src):
    """`src` with the `name! {` and the closing `}` of every item-level brace macro
    invocation blanked (spaces), repeatedly, so that the items inside parse as items.
    Lines and columns stay where they were."""
    buf = bytearray(src)
    for _ in range(8):
        root = ps.parse(bytes(buf)).root_node
        spans = []

        def visit(node):
            for c in node.named_children:
                if c.type == "macro_invocation":
                    tt = [x for x in c.named_children if x.type == "token_tree"]
                    if tt and buf[tt[-1].start_byte:tt[-1].start_byte + 1] == b"{" \
                            and buf[tt[-1].end_byte - 1:tt[-1].end_byte] == b"}":
                        spans.append((c.start_byte, tt[-1].start_byte + 1))
                        spans.append((tt[-1].end_byte - 1, c.end_byte))
                    continue
                if c.type in ("declaration_list", "mod_item", "impl_item", "trait_item"):
                    visit(c)
        visit(root)
        if not spans:
            break
        for a, b in spans:
            for i in range(a, b):
                if buf[i] not in (0x0a, 0x0d):
                    buf[i] = 0x20
    return bytes(buf)


def shadow_tree(ps, tree, shadow):
    """Copies every .rs file of `tree` to `shadow` with its item-level macros unwrapped."""
    for d, dirs, fs in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if x not in (".loci", "target"))
        for f in fs:
            if f.endswith(".rs"):
                rel = os.path.relpath(os.path.join(d, f), tree)
                with open(os.path.join(tree, rel), "rb") as fh:
                    src = fh.read()
                os.makedirs(os.path.dirname(os.path.join(shadow, rel)), exist_ok=True)
                with open(os.path.join(shadow, rel), "wb") as fh:
                    fh.write(unwrap_macros(ps, src))


class Units:
    """tree-sitter units of the shadow tree's files, read once."""

    def __init__(self, ps, shadow):
        self.ps, self.shadow, self.cache, self.lines = ps, shadow, {}, {}

    def of(self, rel):
        if rel not in self.cache:
            full = os.path.join(self.shadow, rel)
            self.cache[rel] = rust_thir.units(self.ps, self.shadow, rel) if os.path.isfile(full) else None
            if self.cache[rel] is not None:
                with open(full, encoding="utf-8", errors="replace") as f:
                    self.lines[rel] = f.read().split("\n")
        return self.cache[rel]

    def find(self, path, chain, name):
        us = [u for u in self.of(path) or [] if u["kind"] in ("function", "method") and u["name"] == name
              and (u["chain"][-1:] == chain[-1:] if chain else not u["chain"])]
        if len(us) != 1:
            raise RuntimeError(f"{path}:{'::'.join(chain + [name])}: {len(us)} definitions")
        return us[0]


def label(u):
    return "::".join(u["chain"] + [u["name"]])


# ---------------------------------------------------------------- THIR

def thir(build, target_dir, kind, out):
    """One THIR dump: kind is "lib", "libtest" or ("test", NAME). Returns None or the
    compiler's complaint."""
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir, RUSTFLAGS=RUSTFLAGS)
    sel = ["--lib"] if kind == "lib" else ["--lib", "--profile", "test"] if kind == "libtest" else ["--test", kind[1]]
    with open(out, "w") as f:
        r = subprocess.run(["cargo", "+nightly", "rustc", "-q"] + sel + ["--features", FEATURES, "--",
                           "-Zunpretty=thir-flat"], cwd=build, env=env, stdout=f, stderr=subprocess.PIPE,
                           text=True, timeout=1800)
    return None if r.returncode == 0 else r.stderr[-800:]


def parse_dump(path):
    """bodies: {defpath of a crate-0 body: [(file, line0, col0)]};
    calls: [(callee crate, callee defpath, file, line0, col0)] for `from_hir_call` calls.
    Defpaths have their crate hash left out (`tokio::sync::semaphore::{impl#0}::add_permits`)."""
    bodies, calls = rust_thir.read_dump(
        path,
        lambda _crate, _index, defpath: HASH.sub("", defpath),
        lambda d: (d.group(1), HASH.sub("", d.group(3))),
    )
    # (callee crate, callee defpath, file, line0, col0), as the callers of this module read them.
    return bodies, [(c[0], c[1], p, line, col) for c, p, line, col in calls]


def unit_map(bodies, units):
    """{defpath: (path, unit)}: the innermost function item holding a body's spans (in the
    file holding most of them), as rust_thir.build_targets decides."""
    return rust_thir.body_units(bodies, units.of)

def calls_to(units, dumps, want):
    """Every labelled call whose callee is a unit in `want` (a set of (path, name_line)):
    [(callee (path, name_line), site path, site line, caller unit or None)]. `dumps` is
    [(calls, {defpath: (path, unit)} of the library the calls name, whether that library
    is the dump's own crate 0)]."""
    out = set()
    for calls, lib_units, own_crate in dumps:
        for crate, defpath, path, l0, c0 in calls:
            if own_crate and crate != "0":
                continue
            if not own_crate and not defpath.startswith("tokio::"):
                continue
            hit = lib_units.get(defpath)
            if hit is None:
                continue
            tpath, tu = hit
            key = (tpath, tu["name_line"])
            if key not in want:
                continue
            us = units.of(path)
            if us is None or l0 >= len(units.lines[path]):
                continue
            if not re.search(r"\b" + re.escape(tu["name"]) + r"\b", units.lines[path][l0]):
                continue
            u = oracle.enclosing(us, l0, c0)
            if u is not None and u["kind"] == "macro":
                continue
            caller = None if u is None or u["kind"] not in ("function", "method") else \
                (path, u["start"], u["name_line"], u["end_line"], label(u))
            out.add((key, path, l0 + 1, caller))
    return sorted(out, key=lambda x: (x[0], x[1], x[2]))


def hir_files(build, target_dir, kind, module):
    """Files whose code refers, by a path rustc resolved, to an item defined in `module`
    (`tokio::sync::notify::`): `-Zunpretty=hir-tree` of one compilation, read as it is
    printed (it runs to hundreds of MB). A resolution (`Def(KIND, DefId(.. ~ path))`) is
    attributed to the file of the span printed last before it (the path's own)."""
    env = dict(os.environ, CARGO_TARGET_DIR=target_dir, RUSTFLAGS=RUSTFLAGS)
    sel = ["--lib"] if kind == "lib" else ["--lib", "--profile", "test"] if kind == "libtest" else ["--test", kind[1]]
    p = subprocess.Popen(["cargo", "+nightly", "rustc", "-q"] + sel + ["--features", FEATURES, "--",
                          "-Zunpretty=hir-tree"], cwd=build, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors="replace")
    files = hir_read(p.stdout, module)
    return files if p.wait() == 0 else None


def hir_read(lines, module):
    files, last_file, window = set(), None, 0
    for line in lines:
        s = line.strip()
        if s.startswith(("span: ", "span_ext: ")):
            sp = SPAN.search(s)
            if sp and not sp.group(1).startswith("/"):
                last_file = sp.group(1)
        elif s == "Def(" or s.endswith(" Def("):  # `res: Def(`, or `Some(` then `Def(`
            window = 6  # the DefKind (one line, or a few for `Ctor(..)`), then the DefId
        elif window:
            window -= 1
            if s.startswith("DefId("):
                window = 0
                d = DEFID.search(s)
                if d and last_file and HASH.sub("", d.group(3)).startswith(module):
                    files.add(last_file)
    return files


# ---------------------------------------------------------------- scans

def text_lines(tree, needle):
    """(path, line) of every line holding `needle` in every UTF-8 text file of the tree."""
    hits = []
    for d, dirs, fs in os.walk(tree):
        dirs[:] = sorted(x for x in dirs if x not in (".loci",))
        for f in sorted(fs):
            full = os.path.join(d, f)
            try:
                with open(full, "rb") as fh:
                    data = fh.read()
                text = data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if b"\0" in data:
                continue
            rel = os.path.relpath(full, tree)
            for i, line in enumerate(text.split("\n")):
                if needle in line:
                    hits.append([rel, i + 1])
    return sorted(hits)


def identifier_files(ps, shadow, names, exclude):
    """Files (other than `exclude`) whose code names one of `names` as an identifier."""
    out = []
    for d, dirs, fs in os.walk(shadow):
        dirs.sort()
        for f in sorted(fs):
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(d, f), shadow)
            if rel == exclude:
                continue
            with open(os.path.join(shadow, rel), "rb") as fh:
                src = fh.read()
            if not any(n.encode() in src for n in names):
                continue
            stack, found = [ps.parse(src).root_node], False
            while stack and not found:
                n = stack.pop()
                if n.type in ("identifier", "type_identifier") and src[n.start_byte:n.end_byte].decode() in names:
                    found = True
                stack.extend(n.children)
            # Inside a macro's token tree (`cfg_x! { ... }` left, `vec![..]`), identifiers are
            # plain tokens: `identifier` nodes there too, as tree-sitter-rust parses them.
            if found:
                out.append(rel)
    return out


OUTLINE_KINDS = {"function_item": "function", "function_signature_item": "function", "struct_item": "struct",
                 "enum_item": "enum", "union_item": "union", "trait_item": "trait", "type_item": "type",
                 "const_item": "constant", "static_item": "static", "macro_definition": "macro"}


def outline(ps, shadow, rel):
    """[name, kind, name_line] of the items of a file outside function bodies."""
    with open(os.path.join(shadow, rel), "rb") as fh:
        src = fh.read()
    out = []

    def visit(node):
        for c in node.named_children:
            if c.type in OUTLINE_KINDS:
                nm = c.child_by_field_name("name")
                if nm is not None:
                    out.append([src[nm.start_byte:nm.end_byte].decode(), OUTLINE_KINDS[c.type], nm.start_point[0] + 1])
            if c.type in ("impl_item", "trait_item", "mod_item", "declaration_list"):
                visit(c)
    visit(ps.parse(src).root_node)
    return sorted(out, key=lambda x: x[2])


def file_lines(path):
    with open(path, "rb") as f:
        data = f.read()
    return data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)


# ---------------------------------------------------------------- build

def prepare_build(crate, build):
    shutil.copytree(crate, build, symlinks=True)
    with open(os.path.join(build, "Cargo.toml")) as f:
        manifest = f.read()
    sections = re.split(r"(?m)^(?=\[)", manifest)
    keep = [x for x in sections if not re.match(r"\[\[(bench|example)\]\]", x)]
    if not any(x.startswith("[workspace]") for x in keep):
        keep.append("\n[workspace]\n")
    keep.append('\n[patch.crates-io]\ntokio = { path = "." }\n')
    with open(os.path.join(build, "Cargo.toml"), "w") as f:
        f.write("".join(keep))


def test_targets(crate):
    with open(os.path.join(crate, "Cargo.toml")) as f:
        manifest = f.read()
    out = []
    for sec in re.split(r"(?m)^(?=\[)", manifest):
        if sec.startswith("[[test]]"):
            name = re.search(r'(?m)^name\s*=\s*"([^"]+)"', sec)
            path = re.search(r'(?m)^path\s*=\s*"([^"]+)"', sec)
            if name:
                out.append((name.group(1), path.group(1) if path else f"tests/{name.group(1)}.rs"))
    return out


def build(crate, work, out_path, log=print):
    version = crate.rsplit("-", 1)[1]
    ps = rust_thir.parser(oracle.ensure_pylib(os.environ.get("LOCI_ACCURACY_CACHE",
                                                              os.path.expanduser("~/.cache/loci-accuracy"))))
    # The work directory is rebuilt, but its cargo target directory kept: a second build
    # compiles no dependency again.
    os.makedirs(work, exist_ok=True)
    for x in os.listdir(work):
        if x != "target":
            p = os.path.join(work, x)
            shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.remove(p)
    bdir, shadow, tdir = os.path.join(work, "build"), os.path.join(work, "shadow"), os.path.join(work, "target")
    prepare_build(crate, bdir)
    shadow_tree(ps, crate, shadow)
    units = Units(ps, shadow)

    targets = {k: units.find(*v) for k, v in {**CALL_TARGETS, **CALLEE_TARGETS, **DEFINITIONS}.items()}
    notify_units = [u for u in units.of(NOTIFY_FILE) if u["kind"] in ("function", "method")]
    # A test is compiled when its text names a target, or a type or public method of
    # notify.rs (`Notify::new()` names `Notify`).
    names = {targets[k]["name"] for k in CALL_TARGETS} | set(NOTIFY_TYPES) | \
        {u["name"] for u in notify_units if u["name"].startswith(("notif", "enable"))}

    log(f"THIR: library of tokio {version}")
    failed = {}
    dumps = []
    lib_dump = os.path.join(work, "lib.thir")
    err = thir(bdir, tdir, "lib", lib_dump)
    if err:
        raise RuntimeError("the library does not build: " + err)
    lib_bodies, lib_calls = parse_dump(lib_dump)
    lib_units = unit_map(lib_bodies, units)
    dumps.append((lib_calls, lib_units, True))
    compiled_maps = [lib_units]
    log("THIR: library unit tests (--profile test)")
    lt_dump = os.path.join(work, "libtest.thir")
    err = thir(bdir, tdir, "libtest", lt_dump)
    if err:
        failed["lib (test profile)"] = err
    else:
        b, c = parse_dump(lt_dump)
        lt_units = unit_map(b, units)
        dumps.append((c, lt_units, True))
        compiled_maps.append(lt_units)
        os.remove(lt_dump)
    tests = []
    for name, path in test_targets(crate):
        with open(os.path.join(crate, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        if any(re.search(r"\b" + re.escape(n) + r"\b", text) for n in names):
            tests.append((name, path))
    log("HIR: paths resolved to items of " + NOTIFY_FILE)
    by_hir = set()
    for kind in ["lib", "libtest"] + [("test", n) for n, _ in tests]:
        got = hir_files(bdir, tdir, kind, NOTIFY_MODULE)
        if got is None:
            failed[f"hir {kind}"] = "did not build"
        else:
            by_hir |= got
    by_hir.discard(NOTIFY_FILE)
    log(f"THIR: {len(tests)} integration tests that name a target")
    compiled_tests = []
    for name, path in tests:
        d = os.path.join(work, f"test-{name}.thir")
        err = thir(bdir, tdir, ("test", name), d)
        if err:
            failed[path] = err
            continue
        b, c = parse_dump(d)
        dumps.append((c, lib_units, False))
        compiled_maps.append(unit_map(b, units))
        compiled_tests.append(path)
        os.remove(d)
    os.remove(lib_dump)

    def key(u, path):
        return (path, u["name_line"])

    out = {"tokio_version": version, "crate": os.path.basename(crate),
           "built_with": {"rustc": subprocess.run(["rustc", "+nightly", "--version"], capture_output=True,
                                                  text=True).stdout.strip(),
                          "features": FEATURES, "rustflags": RUSTFLAGS,
                          "tree_sitter": "tree-sitter 0.26.1, tree-sitter-rust 0.24.2",
                          "integration_tests_compiled": compiled_tests,
                          "not_compiled": {k: v[-300:] for k, v in failed.items()}},
           "sources": {
               "callers": "call sites and callers: rustc THIR Call (from_hir_call) whose callee DefId is the "
                          "target's, over the library, its unit tests and the integration tests naming it",
               "callees": "the crate functions THIR Calls inside the target's body name",
               "definitions": "tree-sitter-rust function items, item-level brace macros unwrapped",
               "notify_dependents": "files with a THIR call of, or a HIR path resolved to, an item of the file; "
                                    "for uncompiled code, files naming its unique type names",
               "outline": "tree-sitter-rust items of the file outside function bodies",
               "msrv": "plain scan of every UTF-8 text file of the crate, lines containing the pattern",
               "mpsc_files": "os.walk of the folder, each .rs file's line count",
               "compiled": "function items some compilation saw: answers elsewhere are left out of precision"},
           "callers": {}, "callees": {}, "definitions": {}}
    for k, (path, chain, name) in CALL_TARGETS.items():
        u = targets[k]
        rows = calls_to(units, dumps, {key(u, path)})
        out["callers"][k] = {
            "target": {"path": path, "qualified_name": label(u), "name_line": u["name_line"], "start": u["start"],
                       "end": u["end_line"]},
            "sites": sorted({(p, l) for _, p, l, _ in rows}),
            "callers": sorted({c for _, _, _, c in rows if c is not None}),
            "top_level_sites": sorted({(p, l) for _, p, l, c in rows if c is None}),
        }
    labels = {(p, x["name_line"]): (x["start"], label(x)) for _, m, _ in dumps for p, x in m.values()}
    for k, (path, chain, name) in CALLEE_TARGETS.items():
        u = targets[k]
        rows = calls_to(units, dumps, set(labels))
        mine = [r for r in rows if r[3] is not None and r[3][0] == path and r[3][2] == u["name_line"]]
        out["callees"][k] = {
            "target": {"path": path, "qualified_name": label(u), "name_line": u["name_line"], "start": u["start"],
                       "end": u["end_line"]},
            "callees": sorted({(cp, labels[(cp, cl)][0], cl, labels[(cp, cl)][1]) for (cp, cl), _, _, _ in mine}),
        }
    for k, (path, chain, name) in DEFINITIONS.items():
        u = targets[k]
        with open(os.path.join(crate, path), encoding="utf-8") as f:
            sig = f.read().split("\n")[u["name_line"] - 1].strip()
        out["definitions"][k] = {"path": path, "qualified_name": label(u), "name_line": u["name_line"],
                                 "start": u["start"], "end": u["end_line"], "line_text": sig}
    want = {(NOTIFY_FILE, u["name_line"]) for u in notify_units}
    by_thir = sorted({p for _, p, _, _ in calls_to(units, dumps, want)} - {NOTIFY_FILE})
    by_names = identifier_files(ps, shadow, set(NOTIFY_UNIQUE), NOTIFY_FILE)
    out["notify_dependents"] = {"file": NOTIFY_FILE, "files": sorted(set(by_thir) | set(by_hir) | set(by_names)),
                                "by_thir_calls": by_thir, "by_hir_paths": sorted(by_hir),
                                "by_unique_type_names": by_names, "unique_type_names": list(NOTIFY_UNIQUE)}
    # The function items some compilation saw: an answer's item outside them is neither
    # right nor wrong (precision leaves it out), as in the accuracy oracle.
    compiled = {}
    for m in compiled_maps:
        for p, u in m.values():
            compiled.setdefault(p, set()).add((u["start"], u["end_line"]))
    out["compiled"] = {p: sorted(v) for p, v in sorted(compiled.items())}
    out["outline"] = {"path": OUTLINE_FILE, "items": outline(ps, shadow, OUTLINE_FILE)}
    out["msrv"] = {"pattern": MSRV, "lines": text_lines(crate, MSRV)}
    mpsc = []
    for d, dirs, fs in os.walk(os.path.join(crate, MPSC_DIR)):
        for f in fs:
            if f.endswith(".rs"):
                full = os.path.join(d, f)
                mpsc.append([os.path.relpath(full, crate), file_lines(full)])
    out["mpsc_files"] = {"dir": MPSC_DIR, "files": sorted(mpsc)}
    with open(out_path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    log(f"wrote {out_path}")
    return out


def main():
    ap = argparse.ArgumentParser(prog="agent_eval.truth")
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--crate", help="the tokio crate's directory (default: the highest tokio-1.* in the cargo registry)")
    b.add_argument("--work", default="/tmp/agent-eval-truth")
    b.add_argument("--out", help="default: scripts/agent_eval/truth-tokio-VERSION.json")
    a = ap.parse_args()
    crate = a.crate or crate_dirs()[-1]
    out = a.out or os.path.join(HERE, f"truth-tokio-{crate.rsplit('-', 1)[1]}.json")
    build(os.path.abspath(crate), os.path.abspath(a.work), out)


if __name__ == "__main__":
    main()
