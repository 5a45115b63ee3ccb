"""C# caller ground truth from Mono's C# compiler, by `cs_mono/Labeller.cs`.

Sources are C# projects whose upstream tarballs Debian ships as source packages (the
`.orig.tar.*` of `apt-get source --download-only SRC=VERSION`; bookworm, needs a
`deb-src` line for `http://deb.debian.org/debian bookworm main`), compiled by Debian's
Mono (`apt-get install mono-mcs mono-devel`; mcs 6.8.0.105, Mono.Cecil 0.11 from its
GAC). A pool entry `cs:deb:SRC=VERSION:PROJECT.csproj` names one project file in the
unpacked tarball:

* the tree: the project's `<Compile>` files under the project's folder, at their paths
  from it; the project is compiled as its file says (its files, the release
  configuration's `DefineConstants`, `AllowUnsafeBlocks`, its framework references, its
  `ProjectReference`s built first; a file signing the assembly with `AssemblyKeyFile`,
  attributes only, left out) by
  `mcs -target:library -debug -warn:0 [-unsafe] -define:.. -r:.. -out:X.dll FILES`, and
  `mono Labeller.exe X.dll` reads the IL (Mono.Cecil) and the `.mdb` line table (Mono's
  own reader, Mono.CompilerServices.SymbolWriter);
* a definition: a method with a body and a sequence point (not a constructor, accessor,
  operator, nor anything the compiler generated); an explicit interface implementation
  (`IEnumerable.GetEnumerator`) is no target but counts as a definition of its name;
  its chain is its enclosing types' names, outermost first, without the namespace
  (`JsonReader.ReadAsInt32`); its lines come from the source: the name is looked for
  backwards from the body's first sequence point (an iterator's or async method's body
  is in the compiler's `<Name>c__..` class), the start is the declaration's first line
  (attributes and modifiers included), the end its closing brace or `;`;
* a call: a `call`/`callvirt` whose callee resolves to one of those definitions
  (static dispatch: a call through an interface or a base class names that type's
  method; `new X()` is no method call), at the line of the sequence point mcs marks it
  with, which must spell the callee's name (else the only `Name(` on that line): a call
  the compiler writes (foreach's `GetEnumerator`, using's `Dispose`, a collection
  initialiser's `Add`) is not in the source and is left out, as is a call without a
  sequence point or with a hidden one (mcs 6.8 gives an expression-bodied member none);
  `member` when it goes through a value (`x.M()`, `this.M()`, `base.M()`, `x?.M()`, and
  an extension method `x.Ext()`);
* the caller: the method, constructor, operator or property/indexer/event (for its
  accessors) the call is written in; lambdas, anonymous methods, iterators and async
  methods roll up to the member around them in the source; field initialisers to the
  innermost type;
* overloads: a method sharing its file, chain and name with another is named by its
  arity (`/2`, `/1+` for one fixed parameter and a `params` rest), else by its line
  (`path:LINE`); one sharing its arity too with another is left out.
"""
import functools
import glob
import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import xml.etree.ElementTree as ET

from . import labelled
from .java_javac import selector_arity as _selector_arity

HERE = os.path.dirname(os.path.abspath(__file__))
LABELLER = os.path.join(HERE, "cs_mono", "Labeller.cs")
CECIL = "/usr/lib/mono/gac/Mono.Cecil/0.11.0.0__0738eb9f132ed756/Mono.Cecil.dll"
FRAMEWORK = "/usr/lib/mono/4.5"
DROPPED = {}  # {spec: {why a call or definition was left out: count}}, for reading
CACHE = os.environ.get("LOCI_ACCURACY_CACHE", os.path.expanduser("~/.cache/loci-accuracy"))

# Projects of Debian bookworm's C# source packages (the ones whose upstream tarball this
# machine could fetch), one project file each, not tests: those that build with Mono's
# framework assemblies and their own project references.
POOL = [
    "cs:deb:dbus-sharp=0.8.1-2.1:dbus-sharp-0.8.1/src/dbus-sharp.csproj",
    "cs:deb:dnlib=2.1-3:dnlib-2.1_VS2010/src/dnlib.csproj",
    "cs:deb:keepass2=2.47+dfsg-2:KeePassLib/KeePassLib.csproj",
    "cs:deb:keepass2=2.47+dfsg-2:Translation/TrlUtil/TrlUtil.csproj",
    "cs:deb:newtonsoft-json=6.0.8+dfsg-1.1:newtonsoft-json-6.0.8/Src/Newtonsoft.Json/Newtonsoft.Json.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/ClientUtilities/util/nunit.util.dll.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/GuiComponents/UiKit/nunit.uikit.dll.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/GuiException/UiException/nunit.uiexception.dll.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/GuiRunner/nunit-gui/nunit-gui.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/NUnitCore/core/nunit.core.dll.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/NUnitCore/interfaces/nunit.core.interfaces.dll.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/NUnitFramework/framework/nunit.framework.dll.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/NUnitMocks/mocks/nunit.mocks.csproj",
    "cs:deb:nunit=2.6.4+dfsg-1.1:nunit-2.6.4/src/ProjectEditor/editor/nunit-editor.csproj",
]


def version():
    r = subprocess.run(["mcs", "--version"], stdout=subprocess.PIPE, text=True)
    return r.stdout.strip()


def pool():
    return sorted(POOL)


def _parse(spec):
    _, _, rest = spec.split(":", 2)
    src, project = rest.split(":", 1)
    name, ver = src.split("=", 1)
    return name, ver, project


@functools.lru_cache(maxsize=None)
def _unpacked(name, ver):
    """The folder of the source package's unpacked upstream tarball (downloaded once)."""
    root = os.path.join(CACHE, "cs-deb", f"{name}_{ver}")
    if os.path.isdir(os.path.join(root, "src")):
        return os.path.join(root, "src")
    os.makedirs(root, exist_ok=True)
    upstream = ver.split(":")[-1].rsplit("-", 1)[0]
    origs = glob.glob(os.path.join(root, f"{name}_{upstream}.orig.tar.*"))
    if not origs:  # the Debian part may fail to download: only the upstream tarball is used
        subprocess.run(["apt-get", "source", "--download-only", "-q", f"{name}={ver}"], cwd=root,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        origs = glob.glob(os.path.join(root, f"{name}_{upstream}.orig.tar.*"))
    if not origs:
        raise RuntimeError(f"apt-get source {name}={ver} brought no upstream tarball (is there a deb-src line?)")
    tmp = tempfile.mkdtemp(dir=root)
    with tarfile.open(origs[0]) as t:
        t.extractall(tmp)
    os.rename(tmp, os.path.join(root, "src"))
    return os.path.join(root, "src")


def _project(path):
    """(files, defines, unsafe, references, project references) of a .csproj, every path
    absolute."""
    folder = os.path.dirname(path)
    root = ET.parse(path).getroot()
    ns = root.tag[:root.tag.index("}") + 1] if root.tag.startswith("{") else ""

    def local(p):
        return os.path.normpath(os.path.join(folder, p.replace("\\", "/")))
    files, refs, projects = [], [], []
    defines, unsafe = {}, False
    for group in root.iter(f"{ns}PropertyGroup"):
        cond = group.get("Condition", "")
        for el in group:
            tag = el.tag[len(ns):]
            if tag == "DefineConstants":
                defines["Release" if "Release" in cond else "Debug" if "Debug" in cond else ""] = el.text or ""
            elif tag == "AllowUnsafeBlocks" and (el.text or "").strip().lower() == "true":
                unsafe = True
    for el in root.iter(f"{ns}Compile"):
        inc = el.get("Include", "")
        if inc.endswith(".cs"):
            files += sorted(glob.glob(local(inc), recursive=True)) if "*" in inc else [local(inc)]
    for el in root.iter(f"{ns}Reference"):
        refs.append(el.get("Include", "").split(",")[0].strip())
    for el in root.iter(f"{ns}ProjectReference"):
        projects.append(local(el.get("Include", "")))
    chosen = defines.get("Release", defines.get("", defines.get("Debug", "")))
    return (sorted(set(files)), [d.strip() for d in chosen.replace(",", ";").split(";") if d.strip()],
            unsafe, refs, projects)


def prepare(spec, tree):
    name, ver, project = _parse(spec)
    path = os.path.join(_unpacked(name, ver), project)
    if not os.path.exists(path):
        return None, f"{project} is not in {name} {ver}"
    folder = os.path.dirname(path)
    files = [f for f in _project(path)[0] if os.path.relpath(f, folder).split(os.sep)[0] != ".."]
    missing = [f for f in files if not os.path.exists(f)]
    if missing:
        return None, f"{len(missing)} missing .cs files ({os.path.relpath(missing[0], folder)})"
    if len(files) < 5:
        return None, f"{len(files)} .cs files (< 5)"
    if len(files) > 400:
        return None, f"{len(files)} .cs files (> 400)"
    for f in files:
        dest = os.path.join(tree, os.path.relpath(f, folder))
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(f, dest)
    return "cs", len(files)


def _labeller():
    """Labeller.exe, built once per version of its source."""
    with open(LABELLER, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    exe = os.path.join(CACHE, "cs-labeller", digest, "Labeller.exe")
    if not os.path.exists(exe):
        os.makedirs(os.path.dirname(exe), exist_ok=True)
        r = subprocess.run(["mcs", "-optimize+", "-r:" + CECIL, "-r:Mono.CompilerServices.SymbolWriter",
                            "-out:" + exe + ".tmp", LABELLER], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stdout[-500:])
        os.rename(exe + ".tmp", exe)
    return exe


def _compile(csproj, files, out, build, debug):
    """Compiles a project (its project references first, into `build`) to `out`."""
    _, defines, unsafe, refs, projects = _project(csproj)
    args = ["mcs", "-target:library", "-warn:0", "-out:" + out]
    if debug:
        args.append("-debug")
    if unsafe:
        args.append("-unsafe")
    if defines:
        args.append("-define:" + ";".join(defines))
    for ref in refs:
        if os.path.exists(os.path.join(FRAMEWORK, ref + ".dll")):
            args.append("-r:" + ref + ".dll")
    for p in projects:
        dll = os.path.join(build, os.path.splitext(os.path.basename(p))[0] + ".dll")
        if not os.path.exists(dll):
            _compile(p, _project(p)[0], dll, build, False)
        args.append("-r:" + dll)
    # A file that signs the assembly (`[assembly: AssemblyKeyFile(..)]`, attributes only)
    # names a key the tarball may not ship: it is not compiled.
    files = [f for f in files if "AssemblyKeyFile" not in open(f, encoding="utf-8", errors="replace").read()]
    r = subprocess.run(args + files, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        errors = [l for l in r.stdout.splitlines() if "error" in l]
        raise RuntimeError(f"{len(errors)} compile errors in {os.path.basename(csproj)}: {errors[:1]}")


def build_targets(spec, tree):
    """(targets, every file as a whole-file range) of the project, as mcs compiles it."""
    name, ver, project = _parse(spec)
    csproj = os.path.join(_unpacked(name, ver), project)
    folder = os.path.dirname(csproj)
    tree = os.path.abspath(tree)
    # The tree's copies, and the files the project links from outside its folder.
    files = [f if os.path.relpath(f, folder).split(os.sep)[0] == ".." else
             os.path.join(tree, os.path.relpath(f, folder)) for f in _project(csproj)[0]]
    exe = _labeller()
    build = tempfile.mkdtemp(prefix="cs-mono-")
    try:
        dll = os.path.join(build, "out", os.path.splitext(os.path.basename(csproj))[0] + ".dll")
        os.makedirs(os.path.dirname(dll))
        _compile(csproj, files, dll, build, True)
        r = subprocess.run(["mono", exe, dll], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, MONO_PATH=os.pathsep.join([os.path.dirname(CECIL), build])))
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip()[-300:])
        got = json.loads(r.stdout)
        DROPPED[spec] = got["dropped"]
    finally:
        shutil.rmtree(build, ignore_errors=True)

    def rel(path):
        p = os.path.relpath(path, tree)
        return None if p.split(os.sep)[0] == ".." else p
    defs, units = got["defs"], got["units"]
    for x in defs + units:
        x["path"] = rel(x["path"])
    calls = []
    for c in got["calls"]:
        c["path"] = rel(c["path"])
        if c["path"] is not None:  # a call in a file linked from outside the tree is not seen
            calls.append(c)
    by_name = {}
    for d in defs:
        by_name.setdefault((d["path"], tuple(d["chain"]), d["name"]), []).append(d)

    def target_of(i):
        d = defs[i]
        if d["path"] is None or d["explicit"]:
            return None
        t = {"path": d["path"], "name": d["name"], "chain": d["chain"], "kind": "method",
             "start": d["start"], "name_line": d["name_line"], "end_line": d["end_line"]}
        overloads = by_name[(d["path"], tuple(d["chain"]), d["name"])]
        if len(overloads) > 1:
            if any(x is not d and (x["params"], x["varargs"]) == (d["params"], d["varargs"]) for x in overloads):
                return None  # `M<T>(x)` beside `M(x)`: no selector names one
            t["arity"] = _selector_arity(d, overloads)
            t["overloaded"] = True
        return t

    def unit_of(i):
        u = units[i]
        return u if u["path"] is not None else {"path": "", "start": 0, "name_line": 0, "name": u["name"]}

    out = labelled.targets_from_calls(calls, target_of, unit_of)
    paths = {os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs}
    return out, {f: [(1, 1 << 30)] for f in paths}
