"""Java caller ground truth from javac's own attribution, by `java_javac/Labeller.java`.

Sources are packages of the JDK's own source as Debian ships it (`openjdk-17-source`,
`/usr/lib/jvm/openjdk-17/src.zip`), compiled and attributed by the JDK beside it:

* the tree: the package's `.java` files at their package path (`java/util/regex/..`);
  javac compiles them as part of their module (`--patch-module`), the rest of the
  module and the JDK coming from the runtime image;
* a definition: a method with a body (not a constructor, not in an anonymous class);
  its chain is its enclosing classes' names, outermost first (`Pattern.Node.match`);
* a call: a method invocation javac resolved to one of those definitions, at the line
  of the method's name; static dispatch (a call through an interface or a base class
  names that type's method); `new X()` is not a call of a method;
* the caller: the innermost method or constructor holding the call (lambdas roll up to
  it), else the innermost class (field initialisers, initialiser blocks);
* overloads: a method sharing its file, chain and name with another is named by its
  arity (`Matcher.appendReplacement/2`, `/1+` for one fixed parameter and a variadic
  rest), else by its line (`path:LINE`): loci's selectors for one overload.
"""
import functools
import json
import os
import subprocess
import zipfile

from . import labelled

SRC_ZIP = "/usr/lib/jvm/openjdk-17/src.zip"
HERE = os.path.dirname(os.path.abspath(__file__))
LABELLER = os.path.join(HERE, "java_javac", "Labeller.java")


def version():
    r = subprocess.run(["java", "-version"], stderr=subprocess.PIPE, text=True)
    return r.stderr.splitlines()[0].strip()


@functools.lru_cache(maxsize=1)
def _packages():
    """{(module, package folder): [zip member names of its .java files]}, read once."""
    if not os.path.exists(SRC_ZIP):
        raise RuntimeError("the JDK's sources are not installed: apt-get install openjdk-17-source")
    out = {}
    with zipfile.ZipFile(SRC_ZIP) as z:
        for n in z.namelist():
            if n.endswith(".java") and n.count("/") >= 2 and not n.endswith(("module-info.java", "package-info.java")):
                module, rest = n.split("/", 1)
                out.setdefault((module, os.path.dirname(rest)), []).append(n)
    return out


def pool():
    """Every package of the JDK's source (`java:MODULE:PACKAGE/FOLDER`)."""
    return sorted(f"java:{m}:{p}" for m, p in _packages())


def prepare(spec, tree):
    _, module, folder = spec.split(":", 2)
    members = sorted(_packages().get((module, folder), []))
    if len(members) < 5:
        return None, f"{len(members)} .java files (< 5)"
    if len(members) > 400:
        return None, f"{len(members)} .java files (> 400)"
    with zipfile.ZipFile(SRC_ZIP) as z:
        for n in members:
            dest = os.path.join(tree, n.split("/", 1)[1])
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with z.open(n) as a, open(dest, "wb") as b:
                b.write(a.read())
    return "java", len(members)


def selector_arity(d, overloads):
    """The arity that names `d` among its overloads, or None when another shares it."""
    def arity(x):
        return f"{x['params'] - 1}+" if x["varargs"] else str(x["params"])
    mine = arity(d)
    if d["varargs"]:
        same = [x for x in overloads if arity(x) == mine]
    else:  # `/N` keeps every overload a call with N arguments fits: variadic ones too
        n = d["params"]
        same = [x for x in overloads if (not x["varargs"] and x["params"] == n)
                or (x["varargs"] and x["params"] - 1 <= n)]
    return mine if len(same) == 1 else None


def build_targets(spec, tree):
    """(targets, every file as a whole-file range) of the package, as javac sees it."""
    module = spec.split(":", 2)[1]
    r = subprocess.run(["java", LABELLER, module, tree], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip()[-300:])
    got = json.loads(r.stdout)
    if got["errors"]:
        raise RuntimeError(f"{got['errors']} compile errors: {got['first_errors'][:1]}")
    defs, units = got["defs"], got["units"]
    by_name = {}
    for d in defs:
        by_name.setdefault((d["path"], tuple(d["chain"]), d["name"]), []).append(d)
    def target_of(i):
        d = defs[i]
        if d["anonymous"]:
            return None
        t = {"path": d["path"], "name": d["name"], "chain": d["chain"], "kind": "method",
             "start": d["start"], "name_line": d["name_line"], "end_line": d["end_line"]}
        overloads = by_name[(d["path"], tuple(d["chain"]), d["name"])]
        if len(overloads) > 1:
            t["arity"] = selector_arity(d, overloads)
            t["overloaded"] = True
        return t

    out = labelled.targets_from_calls(got["calls"], target_of, units.__getitem__)
    files = {os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs}
    return out, {f: [(1, 1 << 30)] for f in files}
