"""Kotlin caller ground truth from the Kotlin compiler's own output: the JVM bytecode
kotlinc writes (every call instruction names the method it resolved, the line table
says where it sits) and the compiler's parser for the definitions (`kotlin_psi/Units.kt`).

Tools: the Kotlin compiler 2.4.20 from npm (`npm pack kotlin-compiler@2.4.20`: it ships
kotlinc, kotlin-compiler.jar and source jars of JetBrains' libraries), OpenJDK 17's `java`
and `javap` (Debian `openjdk-17-jdk`).

Sources (POOL, drawn by seed like every pool):
* `npm:kotlin-metadata-jvm`: kotlin-metadata-jvm's sources, shipped in that npm package
  as `lib/kotlin-metadata-jvm-sources.jar`, compiled against the package's own
  kotlin-metadata-jvm.jar (module descriptor removed) and kotlin-compiler.jar;
* `git:OWNER/NAME@COMMIT:FOLDERS`: public Kotlin repositories whose main sources compile
  with kotlinc alone (no dependency but the standard library and kotlin-reflect): the
  common and JVM source sets, compiled as two fragments of one multiplatform module.
  They are read from a bare clone in `$LOCI_KOTLIN_GIT/OWNER+NAME/repo` (default
  `/work/.mirror`): `git clone --bare` the repository there and the commit is taken.

The commands (see `compile`): `kotlinc FILES -d OUT -nowarn -cp CLASSPATH
-Xexpect-actual-classes -jvm-default=no-compatibility -Xreturn-value-checker=check
-api-version 2.0` (2.2 when 2.0 fails; multiplatform trees add `-Xmulti-platform
-Xfragments=common,jvm -Xfragment-refines=jvm:common -Xfragment-sources=..`), then
`javap -c -l -p -s -cp OUT CLASSES`, and `java -cp kotlin-compiler.jar:kotlin-stdlib.jar:
units.jar UnitsKt TREE FILES` for the definitions.

Rules:
* a definition: a named function with a body that is not `inline` (an inline function's
  calls leave no call instruction) and not local; its chain is its enclosing classes and
  objects (`Companion` for an unnamed companion object);
* a call: an invoke instruction (virtual, static, interface or special, never `<init>`)
  whose method, looked up from the instruction's owner class upward through the
  compiled superclasses and interfaces, is declared in the tree and compiled from one of
  those definitions (its line table lies in the definition, and its name, less the
  compiler's `$default` / `access$` / `-mangling`, is the definition's); static dispatch,
  as javac's oracle: a call through an interface or a base class names that type's
  method. The call's line is the line table's, and that line must spell the callee's
  name: calls the compiler writes (a data class's `compareTo`, a bridge), operator
  conventions (`a[i]` for `get`, `a + b`), property delegates (`by f()` for
  `getValue`) and callable references (`list.forEach(this::add)`, a function passed as a
  value) are not call sites. Lines past the file's end (code the compiler inlined
  from elsewhere) are dropped, and so is a call a definition's own bridge or `$default`
  stub makes on its declaration line;
* the caller: the innermost unit of `Units.kt` holding the line (a function, secondary
  constructor, init block, accessor or property, else the class or object), else the
  file's top-level code. Lambdas roll up to the function they are written in;
* overloads: as java_javac, by arity when it is unique, else by line.
"""
import functools
import glob
import hashlib
import os
import re
import shutil
import subprocess
import zipfile

from . import git_pool, labelled

VERSION = "2.4.20"
HERE = os.path.dirname(os.path.abspath(__file__))
UNITS_KT = os.path.join(HERE, "kotlin_psi", "Units.kt")
GIT_ROOT = os.environ.get("LOCI_KOTLIN_GIT", "/work/.mirror")

POOL = [
    "npm:kotlin-metadata-jvm",
    "git:square/kotlinpoet@be2de914ce6eb3694092ed4e0f28626cbce1ffe0:kotlinpoet/src/commonMain,kotlinpoet/src/jvmMain",
    "git:JetBrains/markdown@f2280ffb6623869d130c418606bddced66a118f9:src/commonMain,src/jvmMain",
    "git:Kotlin/kotlinx.collections.immutable@1d00eeaf6f4559a7953332cb6171c04b886d9a17:core/commonMain,core/jvmMain",
    "git:TheAlgorithms/Kotlin@e57a8888dec4454d39414082bbe6a672a9d27ad1:src/main",
]


def _run(cmd, cwd=None):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])} failed: " + "\n".join(
            l for l in r.stderr.splitlines() if "error:" in l)[:600] or r.stderr[-600:])
    return r.stdout


@functools.lru_cache(maxsize=1)
def ensure(cache):
    """(kotlinc's lib folder, units.jar): the npm package unpacked once, Units.kt built."""
    home = os.path.join(cache, f"kotlin-compiler-{VERSION}")
    lib = os.path.join(home, "package", "lib")
    if not os.path.exists(os.path.join(lib, "kotlin-compiler.jar")):
        os.makedirs(home, exist_ok=True)
        _run(["npm", "pack", "--silent", f"kotlin-compiler@{VERSION}"], cwd=home)
        _run(["tar", "xzf", f"kotlin-compiler-{VERSION}.tgz"], cwd=home)
        for b in glob.glob(os.path.join(home, "package", "bin", "*")):
            os.chmod(b, 0o755)
    with open(UNITS_KT, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:12]
    units = os.path.join(home, f"units-{digest}.jar")
    if not os.path.exists(units):
        _run([kotlinc(lib), UNITS_KT, "-cp", os.path.join(lib, "kotlin-compiler.jar"), "-nowarn",
              "-opt-in=org.jetbrains.kotlin.compiler.plugin.ExperimentalCompilerApi", "-d", units])
    return lib, units


def kotlinc(lib):
    return os.path.join(os.path.dirname(lib), "bin", "kotlinc")


def version():
    return f"kotlinc {VERSION} (npm kotlin-compiler), " + subprocess.run(
        ["javap", "-version"], stdout=subprocess.PIPE, text=True).stdout.strip().join(["javap ", ""])


def pool():
    return list(POOL)


def prepare(spec, tree, cache):
    kind, rest = spec.split(":", 1)
    if kind == "npm":
        lib, _ = ensure(cache)
        with zipfile.ZipFile(os.path.join(lib, f"{rest}-sources.jar")) as z:
            for n in z.namelist():
                if n.endswith(".kt"):
                    z.extract(n, tree)
    else:
        repo, commit, folders = git_pool.parse(spec)
        git_pool.export(GIT_ROOT, repo, commit, folders, tree)
        for p in glob.glob(os.path.join(tree, "**", "*"), recursive=True):
            if os.path.isfile(p) and not p.endswith(".kt"):
                os.remove(p)
    n = len(_kt_files(tree))
    if n < 5:
        return None, f"{n} .kt files (< 5)"
    if n > 400:
        return None, f"{n} .kt files (> 400)"
    return "kotlin", n


def _kt_files(tree):
    return sorted(os.path.relpath(p, tree) for p in glob.glob(os.path.join(tree, "**", "*.kt"), recursive=True))


def compile_tree(spec, tree, out, lib):
    """Compiles the tree into `out` with the flags above; the first API version that
    compiles wins."""
    files = _kt_files(tree)
    cp = [os.path.join(lib, "kotlin-reflect.jar")]
    extra = []
    if spec.startswith("npm:"):
        name = spec.split(":", 1)[1]
        stripped = os.path.join(os.path.dirname(out), f"{name}-nomodule.jar")
        with zipfile.ZipFile(os.path.join(lib, f"{name}.jar")) as jar, zipfile.ZipFile(stripped, "w") as copy:
            for item in jar.infolist():  # a named module would hide its internal packages
                if not item.filename.endswith("module-info.class"):
                    copy.writestr(item, jar.read(item.filename))
        cp = [stripped, os.path.join(lib, "kotlin-compiler.jar")]
        extra = [f"-Xfriend-paths={stripped}", "-Xallow-kotlin-package", "-language-version", "2.5"]
    common = [f for f in files if "/commonMain/" in f"/{f}"]
    if common:
        sources = [f"common:{f}" for f in common] + [f"jvm:{f}" for f in files if f not in common]
        extra += ["-Xmulti-platform", "-Xfragments=common,jvm", "-Xfragment-refines=jvm:common",
                  "-Xfragment-sources=" + ",".join(sources)]
    last = None
    for api in ("2.0", "2.2"):
        shutil.rmtree(out, ignore_errors=True)
        try:
            _run([kotlinc(lib)] + files + ["-d", out, "-nowarn", "-cp", ":".join(cp), "-Xexpect-actual-classes",
                                          "-jvm-default=no-compatibility", "-Xreturn-value-checker=check",
                                          "-api-version", api] + extra, cwd=tree)
            return
        except RuntimeError as e:
            last = e
    raise last


INVOKE = re.compile(r"^\s+(\d+): invoke(virtual|static|interface|special)\s+#\d+(?:, *\d+)?\s+// (?:Interface)?Method (.+)$")
LINE = re.compile(r"^\s+line (\d+): (\d+)$")
HEADER = re.compile(r"^(?:[a-z]+ )*(?:class|interface|enum) ([\w.$]+)(?:<.*?>)?(?: extends ([^{]+?))?(?: implements ([^{]+?))? ?\{$")


def _strip_generics(s):
    out, depth = [], 0
    for ch in s:
        depth += ch == "<"
        if depth == 0:
            out.append(ch)
        depth -= ch == ">"
    return "".join(out)


def read_classes(out):
    """{class: {"source", "supers": [..], "methods": {(name, desc): {"lines": [..], "calls": [..]}}}}
    from javap; a call is (owner or None, name, desc, line)."""
    names = sorted(os.path.relpath(p, out)[:-6].replace("/", ".")
                   for p in glob.glob(os.path.join(out, "**", "*.class"), recursive=True))
    classes = {}
    for i in range(0, len(names), 200):
        text = _run(["javap", "-c", "-l", "-p", "-s", "-cp", out] + names[i:i + 200])
        cls = method = source = cname = None
        for line in text.splitlines():
            if line.startswith("Compiled from "):
                source = line.split('"')[1]
                continue
            if cls is None or (not line.startswith(" ") and line != "}"):
                m = HEADER.match(_strip_generics(line))
                if m:
                    supers = [s.strip() for part in (m.group(2), m.group(3)) if part for s in part.split(",")]
                    cname = m.group(1)
                    cls = classes[cname] = {"source": source, "supers": supers, "methods": {}}
                    method = None
                continue
            if line == "}":
                cls = None
                continue
            if line.startswith("  ") and not line.startswith("   ") and line.rstrip().endswith(";"):
                sig = line.strip()
                method = {"sig": sig, "lines": [], "offsets": [], "calls": [], "pending": []}
                continue
            if method is None:
                continue
            s = line.strip()
            if s.startswith("descriptor: ") and "desc" not in method:
                method["desc"] = s[len("descriptor: "):]
                name = method["sig"].split("(")[0].split()[-1] if "(" in method["sig"] else None
                if name:
                    simple = "<init>" if name == cname else name.rsplit(".", 1)[-1]
                    cls["methods"][(simple, method["desc"])] = method
                continue
            m = INVOKE.match(line)
            if m:
                target = m.group(3)
                if target.startswith('"['):
                    continue
                owner_name, desc = target.split(":", 1)
                owner, _, name = owner_name.rpartition(".")
                name = name.strip('"')
                if name == "<init>":
                    continue
                method["pending"].append((int(m.group(1)), owner.replace("/", ".") or None, name, desc))
                continue
            m = LINE.match(line)
            if m:
                method["lines"].append(int(m.group(1)))
                method["offsets"].append(int(m.group(2)))
    for c in classes.values():
        for meth in c["methods"].values():
            table = sorted(zip(meth["offsets"], meth["lines"]))
            for off, owner, name, desc in meth.pop("pending"):
                at = [l for o, l in table if o <= off]
                if at:
                    meth["calls"].append((owner, name, desc, at[-1]))
    return classes


def _declaring(classes, owner, name, desc):
    seen, queue = set(), [owner]
    while queue:
        c = queue.pop(0)
        if c in seen or c not in classes:
            continue
        seen.add(c)
        if (name, desc) in classes[c]["methods"]:
            return c
        queue += classes[c]["supers"]
    return None


def _plain(name):
    if name.startswith("access$"):
        name = name[len("access$"):]
    if name.endswith("$default"):
        name = name[: -len("$default")]
    return name.split("-")[0]


def read_units(tree, lib, units_jar):
    files = _kt_files(tree)
    text = _run(["java", "-cp", ":".join([os.path.join(lib, "kotlin-compiler.jar"),
                                         os.path.join(lib, "kotlin-stdlib.jar"), units_jar]),
                 "UnitsKt", tree] + files)
    packages, defs, units = {}, [], []
    for row in text.splitlines():
        f = row.split("\t")
        if f[0] == "P":
            packages[f[1]] = f[2]
        elif f[0] == "F":
            defs.append({"path": f[1], "name": f[2], "chain": f[3].split(".") if f[3] else [],
                         "start": int(f[4]), "name_line": int(f[5]), "end_line": int(f[6]),
                         "inline": f[7] == "true", "params": int(f[8]), "body": f[9] == "true",
                         "local": f[10] == "true", "varargs": False})
        elif f[0] == "U":
            units.append({"path": f[1], "name": f[2], "kind": f[3], "start": int(f[4]),
                          "name_line": int(f[5]), "end_line": int(f[6])})
    return packages, defs, units


def _innermost(spans, path, line):
    """The index of the shortest span of `path` holding `line`, or None."""
    best = None
    for i, u in spans.get(path, ()):
        if u["start"] <= line <= u["end_line"] and (best is None or u["end_line"] - u["start"] < best[1]):
            best = (i, u["end_line"] - u["start"])
    return None if best is None else best[0]


def _is_member(text, name):
    """`x.name(`, `x?.name`, `f().name`: through a value, not a type or object name."""
    for m in re.finditer(r"([\w)\]]+)\s*\??\.\s*`?" + re.escape(name) + r"\b", text):
        recv = m.group(1)
        if not recv[-1:].isalpha() or not recv[0].isupper():
            return True
    return False


def build_targets(spec, tree, cache):
    """(targets, every file as a whole-file range) of the tree, as kotlinc compiled it."""
    lib, units_jar = ensure(cache)
    out = os.path.join(os.path.dirname(tree), "classes")
    compile_tree(spec, tree, out, lib)
    classes = read_classes(out)
    packages, defs, units = read_units(tree, lib, units_jar)
    by_file = {}
    for path, pkg in packages.items():
        by_file.setdefault((pkg, os.path.basename(path)), []).append(path)
    lengths = {}
    for path in packages:
        with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
            lengths[path] = f.read().count("\n") + 1
    def_spans, unit_spans = {}, {}
    for i, d in enumerate(defs):
        def_spans.setdefault(d["path"], []).append((i, d))
    for i, u in enumerate(units):
        unit_spans.setdefault(u["path"], []).append((i, u))

    def source_of(cls):
        pkg = cls.rsplit(".", 1)[0] if "." in cls else ""
        paths = by_file.get((pkg, classes[cls]["source"] or ""), [])
        return paths[0] if len(paths) == 1 else None

    def def_of(cls, name, desc):
        """The definition a compiled method comes from, or None."""
        path = source_of(cls)
        meth = classes[cls]["methods"].get((name, desc))
        if path is None or meth is None:
            return None
        lines = [l for l in meth["lines"] if l <= lengths[path]]
        if not lines:
            return None
        i = _innermost(def_spans, path, min(lines))
        return i if i is not None and defs[i]["name"] == _plain(name) else None

    texts = {}
    calls = []
    for cname, c in classes.items():
        path = source_of(cname)
        if path is None:
            continue
        for (mname, mdesc), meth in c["methods"].items():
            for owner, name, desc, line in meth["calls"]:
                if line > lengths[path]:
                    continue  # inlined from elsewhere
                decl = _declaring(classes, owner or cname, name, desc)
                if decl is None:
                    continue
                callee = def_of(decl, name, desc)
                if callee is None:
                    continue
                d = defs[callee]
                if def_of(cname, mname, mdesc) == callee and line in (d["start"], d["name_line"]):
                    continue  # a bridge or `$default` stub of the definition itself
                if path not in texts:
                    with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
                        texts[path] = f.read().split("\n")
                if not re.search(r"(?<![\w$:])" + re.escape(d["name"]) + r"(?![\w$])", texts[path][line - 1]):
                    continue  # not written here (an operator, a delegate, code the compiler made) or `::f`
                caller = _innermost(unit_spans, path, line)
                calls.append({"callee": callee, "path": path, "line": line, "caller": -1 if caller is None else caller,
                              "member": _is_member(texts[path][line - 1], d["name"])})
    by_name = {}
    for d in defs:
        by_name.setdefault((d["path"], tuple(d["chain"]), d["name"]), []).append(d)

    def target_of(i):
        d = defs[i]
        if not d["body"] or d["inline"] or d["local"] or "<anonymous>" in d["chain"]:
            return None
        t = {"path": d["path"], "name": d["name"], "chain": d["chain"], "kind": "method" if d["chain"] else "function",
             "start": d["start"], "name_line": d["name_line"], "end_line": d["end_line"]}
        overloads = by_name[(d["path"], tuple(d["chain"]), d["name"])]
        if len(overloads) > 1:
            same = [x for x in overloads if x["params"] == d["params"]]
            t["arity"] = str(d["params"]) if len(same) == 1 else None
            t["overloaded"] = True
        return t

    targets = labelled.targets_from_calls(calls, target_of, units.__getitem__)
    return targets, {f: [(1, 1 << 30)] for f in packages}
