"""PHP, Ruby and Swift caller ground truth from two independent hand labellings, reconciled.

No precise call resolver for PHP, Ruby or Swift installs here, so their callers are labelled
by hand, on candidates this module draws (labels/README.md has the labellers' rules):

* sources: PHP packages as Debian ships them under /usr/share/php (PHPUnit and its
  dependencies, PhpParser, Doctrine's Instantiator, ..): one entry per package folder,
  `php:/usr/share/php/VENDOR` when the vendor folder holds .php files itself (PHPUnit,
  PhpParser, DeepCopy), else `php:/usr/share/php/VENDOR/PACKAGE` per package; Ruby's
  standard library (/usr/lib/ruby/3.1.0), `ruby:LIB` for a top-level `LIB.rb` with its
  `LIB/` folder (or the folder alone: `net`, `rinda`, ..), and the bundled gems' lib/
  folders (/usr/lib/ruby/gems/3.1.0/gems), `rubygem:NAME-VERSION`; Swift: public
  pure-Swift library packages at pinned commits (SWIFT_POOL, `git:OWNER/NAME@COMMIT:FOLDERS`,
  read from the bare clone `$LOCI_SWIFT_GIT/OWNER+NAME/repo`, default /work/.mirror, and
  written out for the labellers under `$LOCI_SWIFT_SOURCES/OWNER+NAME`, default
  /tmp/loci-swift-sources: `.. handlabel sources swift` rewrites them);
* units: every function or method with a body, read by the language's own parser
  (`php_units.php`, nikic/PHP-Parser 4.15; `ruby_units.rb`, Ripper; Swift, which has none
  installable here: `swift_units.py`, tree-sitter-swift 0.7.4, also initializers, deinit,
  subscripts and properties with accessors); closures and blocks are not units, their
  calls belong to the enclosing one;
* a candidate target: a unit that is not a constructor or a magic method/hook (Swift: not
  an init, deinit, subscript, operator, property accessor or local function), is the
  only unit with its (path, chain, name) (Swift: the only unit of the entry with its
  (chain, name), in any file: overloads by argument labels or types, and `#if` branches,
  are left out), and whose name occurs as a whole word in the
  entry's tree outside its own definition line (PHP: case-insensitively, not as `$name`;
  Ruby: not as `@name`/`$name`, `foo` not as `foo?`/`foo!`, a setter `foo=` as `foo =`;
  Swift: not as `$name`);
* candidate lines: every line with such an occurrence but the definition's name line, at
  most 80 a target (the first by path and line; `truncated` counts the rest; Swift draws
  no target with more, since build_targets never scores a truncated one);
* draw: seed 29, the pool shuffled by `random.Random(f"29:{lang}")`, entries taken in
  order (those with < 5 or > 400 files skipped, said why) until 3 entries and
  MIN_TARGETS sampled targets (480 PHP, 380 Ruby: the first 270 gave fewer than 200
  targets with a site; 480 Swift, at PHP's and Ruby's rate of about half the candidates
  with a site); per entry `random.Random(f"29:{lang}:{spec}").sample(candidates, 90)`.

Commands (from scripts/): `python3 -m accuracy_oracle.handlabel candidates php|ruby|swift`
writes labels/LANG/candidates.json; `.. parts LANG` prints the four index ranges of the
targets with about equal candidate lines (the labellers' shares); `.. check LANG FILE`
validates one labeller's part file; `.. sources swift` writes the Swift entries' files
out for the labellers; `.. reconcile LANG` reads labels/LANG/labeller-a.partN.json
and labeller-b.partN.json (each labeller's shares of the targets) and writes
labels/LANG/labels.json: a line is a site when both labellers say "yes", disputed when
they differ or either says "unsure"; a target not answered by both is left out.
"""
import functools
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

from . import git_pool, swift_units

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = os.path.join(HERE, "labels")
PHP_ROOT = "/usr/share/php"
RUBY_LIB = "/usr/lib/ruby/3.1.0"
RUBY_GEMS = "/usr/lib/ruby/gems/3.1.0/gems"
SWIFT_GIT = os.environ.get("LOCI_SWIFT_GIT", "/work/.mirror")
SWIFT_SOURCES = os.environ.get("LOCI_SWIFT_SOURCES", "/tmp/loci-swift-sources")
SEED = 29
MIN_ENTRIES = 3
# The first 270 candidates gave 130 (PHP) and 151 (Ruby) targets with a call site, short of
# the 200 a language needs: the draws go on (the candidates drawn first stay as they were).
# Swift starts where PHP ended: about half of a draw's candidates had a site.
MIN_TARGETS = {"php": 480, "ruby": 380, "swift": 480}
PER_ENTRY = 90
MAX_LINES = 80
EXT = {"php": ".php", "ruby": ".rb", "swift": ".swift"}

# Swift's pool, written down before any draw and before loci ran on any of them (it never
# did): well-known public Swift library packages (Apple's swift-* libraries and widely
# used community ones, named before their code was read; all 13 named could be mirrored),
# one entry each, at the commit the mirror held on 2026-12-06. FOLDERS are the source
# folders of the Swift targets its library products are built from (with their
# in-package dependencies), never tests, test-support targets, examples, benchmarks,
# executables, plugins or macro implementations. An entry with < 5 or > 400 .swift files
# is skipped when drawn (SwiftyJSON has 1, swift-collections 565), as for PHP and Ruby.
SWIFT_POOL = [
    "git:Alamofire/Alamofire@7595cbcf59809f9977c5f6378500de2ad73b7ddb:Source",
    "git:SwiftyJSON/SwiftyJSON@8805b547079d605f61f9c7964296384ff6fe853e:Source",
    "git:apple/swift-algorithms@5b7143f8e291dee0e14c118fd0212487f0b37af5:Sources/Algorithms",
    "git:apple/swift-argument-parser@2f77f2fccb6e84fecff338c37b199e33e7dfd119:"
    "Sources/ArgumentParser,Sources/ArgumentParserToolInfo",
    "git:apple/swift-async-algorithms@3da39bbc4e687d4192af7c9cf4eab805745a0b9c:"
    "Sources/AsyncAlgorithms,Sources/AsyncStreaming",
    "git:apple/swift-collections@f425dffd5bf70fe2a880c5eb6568bbdcade9f4f5:"
    "Sources/BasicContainers,Sources/BitCollections,Sources/Collections,Sources/ContainersPreview,"
    "Sources/DequeModule,Sources/HashTreeCollections,Sources/HeapModule,Sources/InternalCollectionsUtilities,"
    "Sources/OrderedCollections,Sources/RopeModule,Sources/SortedCollections,Sources/TrailingElementsModule",
    "git:apple/swift-log@7af2de138f5f0fddf0bd5c7e19face6944ed76af:Sources/Logging,Sources/InMemoryLogging",
    "git:apple/swift-markdown@d21714073e0d16ba78eebdf36724863afc36871d:Sources/Markdown",
    "git:apple/swift-numerics@899af71c0256d0ad181e3b7eb3453c1065d928a5:"
    "Sources/ComplexModule,Sources/IntegerUtilities,Sources/Numerics,Sources/RealModule",
    "git:apple/swift-system@1b452c2996c677d8e435bf0b766fc927176d8c77:Sources/System",
    "git:pointfreeco/swift-case-paths@794f4b0a9cf32042592388d014f6a1ea987d323a:"
    "Sources/CasePaths,Sources/CasePathsCore,Sources/CasePathsMacrosSupport",
    "git:pointfreeco/swift-parsing@611f34414280af332137e56433d90d1840656921:Sources/Parsing",
    "git:vapor/console-kit@5acfda60e08b2d5bad3607a381e7948792585f44:Sources/ConsoleKit,Sources/ConsoleLogger",
]

PHP_MAGIC = {"__construct", "__destruct", "__call", "__callstatic", "__get", "__set", "__isset", "__unset",
             "__sleep", "__wakeup", "__serialize", "__unserialize", "__tostring", "__invoke", "__set_state",
             "__clone", "__debuginfo"}
RUBY_MAGIC = {"initialize", "initialize_copy", "initialize_dup", "initialize_clone", "method_missing",
              "respond_to_missing?", "inherited", "included", "extended", "prepended", "method_added",
              "method_removed", "method_undefined", "singleton_method_added", "singleton_method_removed",
              "singleton_method_undefined", "const_missing", "included_modules", "append_features",
              "extend_object", "prepend_features"}
PHP_NAME = re.compile(r"^[A-Za-z_\x80-\uffff]\w*$")
RUBY_NAME = re.compile(r"^[A-Za-z_]\w*[?!=]?$")
SWIFT_NAME = re.compile(r"^[A-Za-z_]\w*$")
SWIFT_NOT_TARGETS = {"init": "initializer", "deinit": "deinitializer", "subscript": "subscript",
                     "operator": "operator", "property": "property accessor", "local function": "local"}


def lang_of(spec):
    if spec.startswith("php:"):
        return "php"
    return "swift" if spec.startswith("git:") else "ruby"  # `git:` entries are SWIFT_POOL's


# ---- pools ----------------------------------------------------------------------------

def _has_files(d, ext):
    return any(f.endswith(ext) for _, _, fs in os.walk(d) for f in fs)


def pool(lang):
    """The entries a draw picks from, sorted (the shuffle by seed comes after)."""
    out = []
    if lang == "php":
        for vendor in sorted(os.listdir(PHP_ROOT)):
            vd = os.path.join(PHP_ROOT, vendor)
            if not os.path.isdir(vd) or not _has_files(vd, ".php"):
                continue
            if any(f.endswith(".php") for f in os.listdir(vd)):  # the vendor folder is the package
                out.append(f"php:{vd}")
            else:
                out += [f"php:{os.path.join(vd, p)}" for p in sorted(os.listdir(vd))
                        if os.path.isdir(os.path.join(vd, p)) and _has_files(os.path.join(vd, p), ".php")]
    elif lang == "ruby":
        libs = set()
        for n in os.listdir(RUBY_LIB):
            p = os.path.join(RUBY_LIB, n)
            if n.endswith(".rb") and os.path.isfile(p):
                libs.add(n[:-3])
            elif os.path.isdir(p) and _has_files(p, ".rb"):
                libs.add(n)
        out += [f"ruby:{n}" for n in sorted(libs)]
        for g in sorted(os.listdir(RUBY_GEMS)):
            lib = os.path.join(RUBY_GEMS, g, "lib")
            if os.path.isdir(lib) and _has_files(lib, ".rb"):
                out.append(f"rubygem:{g}")
    elif lang == "swift":
        out = list(SWIFT_POOL)
    else:
        raise ValueError(lang)
    return sorted(out)


def draw(lang, seed=SEED):
    p = pool(lang)
    random.Random(f"{seed}:{lang}").shuffle(p)
    return p


def export_git(spec, dest):
    """Writes the entry's .swift files (paths relative to the repository) under `dest`."""
    repo, commit, _ = git_pool.parse(spec)
    _, files = source_files(spec)
    git_pool.export(SWIFT_GIT, repo, commit, files, dest)


def swift_root(spec):
    """Where the labellers read a Swift entry's files: SWIFT_SOURCES/OWNER+NAME."""
    return os.path.join(SWIFT_SOURCES, git_pool.parse(spec)[0].replace("/", "+"))


def export_sources(spec):
    root = swift_root(spec)
    if os.path.isdir(root):
        shutil.rmtree(root)
    export_git(spec, root)
    return root


def source_files(spec):
    """(root, [paths relative to root]) of an entry's source files."""
    kind, what = spec.split(":", 1)
    if kind == "git":
        repo, commit, folders = git_pool.parse(spec)
        listed = subprocess.run(["git", "--git-dir", git_pool.git_dir(SWIFT_GIT, repo), "ls-tree", "-r", "--name-only", commit, "--"]
                                + folders, stdout=subprocess.PIPE, check=True, text=True).stdout.splitlines()
        return swift_root(spec), sorted(f for f in listed if f.endswith(".swift"))
    if kind == "php":
        root = what
        files = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                 if f.endswith(".php")]
    elif kind == "ruby":
        root = RUBY_LIB
        files = [f"{what}.rb"] if os.path.isfile(os.path.join(root, f"{what}.rb")) else []
        sub = os.path.join(root, what)
        if os.path.isdir(sub):
            files += [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(sub) for f in fs
                      if f.endswith(".rb")]
    elif kind == "rubygem":
        root = os.path.join(RUBY_GEMS, what, "lib")
        files = [os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs
                 if f.endswith(".rb")]
    else:
        raise ValueError(spec)
    return root, sorted(files)


def prepare(spec, tree):
    """Copies the entry's source files into `tree` (paths relative to its root kept):
    (lang, file count), or (None, why) when it has < 5 or > 400 files."""
    root, files = source_files(spec)
    lang = lang_of(spec)
    if len(files) < 5:
        return None, f"{len(files)} {EXT[lang]} files (< 5)"
    if len(files) > 400:
        return None, f"{len(files)} {EXT[lang]} files (> 400)"
    if lang == "swift":  # from the pinned commit, not from the labellers' copy
        export_git(spec, tree)
        return lang, len(files)
    for f in files:
        dest = os.path.join(tree, f)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(root, f), dest)
    return lang, len(files)


# ---- units ----------------------------------------------------------------------------

def tree_files(tree, lang):
    return sorted(os.path.relpath(os.path.join(d, f), tree) for d, _, fs in os.walk(tree) for f in fs
                  if f.endswith(EXT[lang]))


def units(lang, tree):
    """{path: [unit]} of every source file of the tree, from the language's own parser."""
    files = tree_files(tree, lang)
    if lang == "swift":
        return {path: v["units"] for path, v in swift_units.units(tree, files).items()}
    cmd = (["php", os.path.join(HERE, "php_units.php")] if lang == "php"
           else ["ruby", os.path.join(HERE, "ruby_units.rb")])
    out = {}
    for i in range(0, len(files), 200):
        r = subprocess.run(cmd + files[i:i + 200], cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{cmd[1]} failed: {r.stderr.strip()[-300:]}")
        for path, v in json.loads(r.stdout).items():
            if "error" in v:
                raise RuntimeError(f"{path}: {v['error']}")
            out[path] = v["units"]
    return out


def innermost(file_units, line):
    """The innermost unit of a file holding `line`, or None."""
    best = None
    for u in file_units:
        if u["start"] <= line <= u["end_line"] and (
                best is None or (u["start"], -u["end_line"]) > (best["start"], -best["end_line"])):
            best = u
    return best


# ---- occurrences ----------------------------------------------------------------------

WORD = {"php": re.compile(r"(?<![\w$])([A-Za-z_\x80-\uffff]\w*)"),
        "ruby": re.compile(r"(?<![\w@$])([A-Za-z_]\w*)"),
        "swift": re.compile(r"(?<![\w$])([A-Za-z_]\w*)")}


def _read_lines(tree, path):
    with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
        return f.read().split("\n")


def word_index(lang, tree):
    """({base word: [(path, line)]}, {path: [line texts]}); PHP words lower-cased."""
    index, texts = {}, {}
    for path in tree_files(tree, lang):
        lines = texts[path] = _read_lines(tree, path)
        for i, text in enumerate(lines, 1):
            seen = set()
            for m in WORD[lang].finditer(text):
                w = m.group(1).lower() if lang == "php" else m.group(1)
                if w not in seen:
                    seen.add(w)
                    index.setdefault(w, []).append((path, i))
    return index, texts


def occurrence_re(lang, name):
    """A name's whole-word occurrence on a line."""
    if lang == "php":
        return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?!\w)", re.IGNORECASE)
    if lang == "swift":  # also `name` in backticks; not `$name` (a property wrapper's projection)
        return re.compile(r"(?<![\w$])" + re.escape(name) + r"(?!\w)")
    base = re.escape(name.rstrip("?!="))
    if name.endswith("?"):
        return re.compile(r"(?<![\w@$])" + base + r"\?")
    if name.endswith("!"):
        return re.compile(r"(?<![\w@$])" + base + r"!(?!=)")
    if name.endswith("="):  # a setter: `x.foo = v`, `x.foo ||= v`, `self.foo=(v)`
        return re.compile(r"(?<![\w@$])" + base + r"\s*(?:\|\||&&|\*\*|<<|>>|[-+*/%|&^])?=(?![=~>])")
    return re.compile(r"(?<![\w@$])" + base + r"(?![\w?]|!(?!=))")


def occurrences(lang, name, index, texts):
    base = name.lower() if lang == "php" else name.rstrip("?!=")
    rx = occurrence_re(lang, name)
    return [(p, l) for p, l in index.get(base, []) if rx.search(texts[p][l - 1])]


def excluded(lang, u):
    """Why a unit is no candidate target, or None."""
    if lang == "php":
        if u["name"].lower() in PHP_MAGIC:
            return "constructor or magic method"
        if u.get("anonymous"):
            return "method of an anonymous class"
        if not PHP_NAME.match(u["name"]):
            return "not a word"
    elif lang == "swift":
        if u["kind"] in SWIFT_NOT_TARGETS:
            return SWIFT_NOT_TARGETS[u["kind"]]
        if u.get("local"):
            return "local"
        if not SWIFT_NAME.match(u["name"]):
            return "not a word"
    else:
        if u["name"] in RUBY_MAGIC:
            return "constructor or hook"
        if not RUBY_NAME.match(u["name"]):
            return "operator"
    return None


def candidate_targets(lang, spec, root, tree):
    """(every candidate target of the tree, sorted, each with its candidate lines; unit count;
    Swift: files with a parse error, else 0)."""
    if lang == "swift":  # its parse also lists the protocols' requirements
        parsed = swift_units.units(tree, tree_files(tree, lang))
        us = {path: v["units"] for path, v in parsed.items()}
    else:
        parsed, us = {}, units(lang, tree)
    index, texts = word_index(lang, tree)
    key = (lambda u: u["name"].lower()) if lang == "php" else (lambda u: u["name"])
    # Swift overloads by argument labels and types, across a type's extensions in any file:
    # a (chain, name) defined more than once in the entry is left out whole.
    where = (lambda path: None) if lang == "swift" else (lambda path: path)
    counts = {}
    for path, fu in us.items():
        for u in fu:
            k = (where(path), tuple(u["chain"]), key(u))
            counts[k] = counts.get(k, 0) + 1
    requirements = {}  # Swift: {protocol chain: requirement names} over the entry
    for v in parsed.values():
        for proto, names in v["requirements"].items():
            requirements.setdefault(proto, set()).update(names)
    out = []
    for path, fu in sorted(us.items()):
        for u in fu:
            if excluded(lang, u) or counts[(where(path), tuple(u["chain"]), key(u))] > 1:
                continue
            lines = sorted(x for x in occurrences(lang, u["name"], index, texts) if x != (path, u["name_line"]))
            if not lines or (lang == "swift" and len(lines) > MAX_LINES):
                continue  # Swift: a truncated target is never scored (build_targets), so it is not drawn
            t = {"id": f"{spec}|{path}:{u['name_line']}:{u['name']}", "spec": spec, "root": root, "path": path,
                 "name": u["name"], "chain": u["chain"], "kind": u["kind"], "start": u["start"],
                 "name_line": u["name_line"], "end_line": u["end_line"], "params": u["params"]}
            if "signature" in u:
                t["signature"] = u["signature"]
            for flag in ("static", "singleton", "in_block", "override"):
                if u.get(flag):
                    t[flag] = True
            if u["name"] in requirements.get(".".join(u["chain"]), ()):
                t["requirement"] = True  # a protocol extension's default for a requirement
            t["lines"] = [[p, l, texts[p][l - 1].strip()[:200]] for p, l in lines[:MAX_LINES]]
            if len(lines) > MAX_LINES:
                t["truncated"] = len(lines) - MAX_LINES
            out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    errors = sum(1 for v in parsed.values() if v["parse_error"])
    return out, sum(len(fu) for fu in us.values()), errors


def candidates(lang, log=lambda *a: print(*a, file=sys.stderr, flush=True)):
    """Draws the entries and samples their targets: the content of candidates.json."""
    result = {"lang": lang, "seed": SEED, "entries": [], "targets": []}
    picked = sampled = 0
    for spec in draw(lang):
        if picked >= MIN_ENTRIES and sampled >= MIN_TARGETS[lang]:
            break
        root, _ = source_files(spec)
        tree = tempfile.mkdtemp(prefix="loci-handlabel-")
        try:
            mode, why = prepare(spec, tree)
            entry = {"spec": spec, "root": root, "files": why}
            if mode is None:
                log(f"{lang}: skip {spec}: {why}")
                result["entries"].append({"spec": spec, "root": root, "skipped": why})
                continue
            cands, n_units, parse_errors = candidate_targets(lang, spec, root, tree)
            if lang == "swift":
                export_sources(spec)
        finally:
            shutil.rmtree(tree, ignore_errors=True)
        sample = random.Random(f"{SEED}:{lang}:{spec}").sample(cands, min(PER_ENTRY, len(cands)))
        sample.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
        if lang == "swift":  # files where tree-sitter-swift left an ERROR node
            entry["parse_errors"] = parse_errors
        result["entries"].append(dict(entry, units=n_units, candidates=len(cands), sampled=len(sample)))
        result["targets"] += sample
        picked += 1
        sampled += len(sample)
        log(f"{lang}: {spec}: {why} files, {n_units} units, {len(cands)} candidates, {len(sample)} sampled")
    return result


def write_candidates(lang):
    got = candidates(lang)
    d = os.path.join(LABELS, lang)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "candidates.json"), "w") as f:
        json.dump(got, f, indent=1, ensure_ascii=False)
        f.write("\n")
    ts = got["targets"]
    n = [len(t["lines"]) for t in ts]
    print(f"{lang}: {len([e for e in got['entries'] if 'skipped' not in e])} entries, {len(ts)} targets, "
          f"{sum(n)} candidate lines (mean {sum(n) / max(len(n), 1):.1f}, max {max(n, default=0)}), "
          f"{sum(1 for t in ts if 'truncated' in t)} truncated")
    return got


# ---- labels ---------------------------------------------------------------------------

def _load(path):
    with open(path) as f:
        return json.load(f)


def _answers(d, who):
    merged = {}
    for path in sorted(glob.glob(os.path.join(d, f"labeller-{who}.part*.json"))):
        merged.update(_load(path))
    return merged


def reconcile(lang):
    """labels.json from labeller a's and b's answers (each in `labeller-X.partN.json`, one
    file per share of the targets): {target id: {"yes": [[path, line], ..], "disputed":
    [[path, line], ..]}} over every candidate target both labellers answered."""
    d = os.path.join(LABELS, lang)
    cands = _load(os.path.join(d, "candidates.json"))
    a, b = _answers(d, "a"), _answers(d, "b")
    out, tally, problems = {}, {}, []
    for who, labels in (("a", a), ("b", b)):
        problems += [f"labeller-{who}: {p}" for p in check_answers(cands["targets"], labels)[0]]
    unanswered = 0
    for t in cands["targets"]:
        if t["id"] not in a or t["id"] not in b:
            unanswered += 1  # not labelled twice: no ground truth
            continue
        la, lb = a[t["id"]], b[t["id"]]
        yes, disputed = [], []
        for p, l, _ in t["lines"]:
            k = f"{p}:{l}"
            va, vb = la.get(k, "no"), lb.get(k, "no")
            tally[(va, vb)] = tally.get((va, vb), 0) + 1
            if va == vb == "yes":
                yes.append([p, l])
            elif va != vb or "unsure" in (va, vb):
                disputed.append([p, l])
        out[t["id"]] = {"yes": yes, "disputed": disputed}
    with open(os.path.join(d, "labels.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    agree = sum(v for (x, y), v in tally.items() if x == y)
    total = sum(tally.values())
    print(f"{lang}: {len(out)} targets, {total} lines, agreement {agree}/{total}; "
          + ", ".join(f"a={x} b={y}: {v}" for (x, y), v in sorted(tally.items())))
    print(f"{lang}: {unanswered} targets not answered by both labellers, left out")
    print(f"{lang}: {sum(1 for v in out.values() if v['yes'])} targets with a site, "
          f"{sum(len(v['yes']) for v in out.values())} sites, {sum(len(v['disputed']) for v in out.values())} disputed")
    for p in problems[:50]:
        print("  " + p)
    return out


def _member(lang, name, text):
    """Does the line call `name` through a value receiver (`$x->name(`, `x.name`)?"""
    n = re.escape(name.rstrip("=") if lang == "ruby" else name)
    if lang == "php":
        return re.search(r"(?:->|\?->)\s*" + n + r"\s*\(", text, re.IGNORECASE) is not None
    if lang == "swift":  # x.name, x?.name, x!.name, self.name, `.name` continuing a chain; not Type.name, super.name
        for m in re.finditer(r"[?!]?\.\s*`?" + n + r"(?![\w`])", text):
            before = text[:m.start()].rstrip()
            if not before:
                return True
            recv = re.search(r"([A-Za-z_]\w*|[)\]}\"])$", before)
            if recv and not recv.group(1)[0].isupper() and recv.group(1) != "super":
                return True
        return False
    # x.name / x&.name where x is no constant (`Foo.name`, `Foo::Bar.name` are not)
    for m in re.finditer(r"(&?\.)\s*" + n + r"(?![\w?!])" if not name.endswith(("?", "!")) else
                         r"(&?\.)\s*" + n, text):
        before = text[:m.start()].rstrip()
        if not before:  # `.name` continuing a chain from the line before
            return True
        recv = re.search(r"([A-Za-z_]\w*[?!]?|[)\]}'\"]|@\w+)$", before)
        if recv and not recv.group(1)[0].isupper():
            return True
    return False


@functools.lru_cache(maxsize=2)
def _labels(lang):
    return _load(os.path.join(LABELS, lang, "candidates.json")), _load(os.path.join(LABELS, lang, "labels.json"))


def drawn_entries(lang, seed):
    """The entries candidates.json drew, in draw order (the harness's pool for `lang`)."""
    cands = _load(os.path.join(LABELS, lang, "candidates.json"))
    if cands["seed"] != seed:
        raise RuntimeError(f"{lang}'s labels were drawn with seed {cands['seed']}, not {seed}")
    return [e["spec"] for e in cands["entries"]]


def build_targets(spec, tree):
    """(targets, every file as a whole-file range) of an entry, from the reconciled labels:
    the sites are the lines both labellers call a call; a target without one is dropped, and
    so is one whose candidate lines were truncated (its sites are not all known)."""
    lang = lang_of(spec)
    cands, labels = _labels(lang)
    us = units(lang, tree)
    texts = {}
    out = []
    for c in cands["targets"]:
        if c["spec"] != spec or "truncated" in c:
            continue
        got = labels.get(c["id"], {})
        sites = sorted((p, l) for p, l in got.get("yes", []))
        if not sites:
            continue
        member, callers = set(), set()
        for p, l in sites:
            if p not in texts:
                texts[p] = _read_lines(tree, p)
            if _member(lang, c["name"], texts[p][l - 1]):
                member.add((p, l))
            u = innermost(us.get(p, []), l)
            callers.add((p, u["start"], u["name_line"], u["name"]) if u else (p, 0, 0, "<top level>"))
        out.append({"path": c["path"], "name": c["name"], "chain": c["chain"],
                    "kind": "method" if c["chain"] else "function", "start": c["start"],
                    "name_line": c["name_line"], "end_line": c["end_line"], "sites": sites,
                    "member_sites": sorted(member), "callers": sorted(callers),
                    "disputed": sorted((p, l) for p, l in got.get("disputed", []))})
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    return out, {f: [(1, 1 << 30)] for f in tree_files(tree, lang)}


def parts(targets, n=4):
    """Splits the targets, in order, into `n` index ranges [first, last] of about equal
    candidate-line counts (the labellers' shares)."""
    acc, running = [], 0
    for t in targets:
        running += len(t["lines"])
        acc.append(running)  # lines of targets 0..i
    out, first = [], 0
    for k in range(1, n):
        if first >= len(targets) - 1:
            break
        goal = running * k / n  # the last target of part k: its running count nearest the goal
        last = min(range(first, len(targets) - 1), key=lambda i: (abs(acc[i] - goal), i))
        out.append((first, last))
        first = last + 1
    if first < len(targets):
        out.append((first, len(targets) - 1))
    return out


def check_answers(targets, answers):
    """(problems, missing lines) of one labeller's answers against the targets they were
    given: every key a target id and a candidate line of it, every value yes/no/unsure."""
    known = {t["id"]: {f"{p}:{l}" for p, l, _ in t["lines"]} for t in targets}
    problems, missing = [], 0
    if not isinstance(answers, dict):
        return ["not a JSON object"], 0
    for tid, lines in answers.items():
        if tid not in known:
            problems.append(f"unknown target {tid}")
            continue
        if not isinstance(lines, dict):
            problems.append(f"{tid}: not an object of lines")
            continue
        for k, v in lines.items():
            if k not in known[tid]:
                problems.append(f"{tid}: {k} is no candidate line")
            if v not in ("yes", "no", "unsure"):
                problems.append(f"{tid}: {k}: {v!r} is not yes/no/unsure")
    for tid, lines in known.items():
        missing += len(lines - set(answers.get(tid, {}) if isinstance(answers.get(tid), dict) else ()))
    return problems, missing


def check(lang, path):
    """Validates a labeller's part file `labeller-X.partN.json` against its share of the
    targets (the part's range of `parts`); exit status 1 on a problem or a missing line.
    (Swift's shares are `parts`' ranges; PHP's and Ruby's were cut by hand, a little
    differently, so for them only its problems count.)"""
    cands = _load(os.path.join(LABELS, lang, "candidates.json"))
    m = re.search(r"labeller-[ab]\.part(\d+)\.json$", path)
    if not m:
        sys.exit(f"{path}: the name must be labeller-a.partN.json or labeller-b.partN.json")
    ranges = parts(cands["targets"])
    k = int(m.group(1))
    if not 1 <= k <= len(ranges):
        sys.exit(f"{path}: there are parts 1..{len(ranges)}")
    first, last = ranges[k - 1]
    try:
        answers = _load(path)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: {e}")
    problems, missing = check_answers(cands["targets"][first:last + 1], answers)
    for p in problems[:50]:
        print("  " + p)
    n = sum(len(v) for v in answers.values() if isinstance(v, dict)) if isinstance(answers, dict) else 0
    print(f"{path}: part {k} = targets {first}..{last}; {len(answers)} targets, {n} lines answered, "
          f"{len(problems)} problems, {missing} candidate lines not answered")
    if problems or missing:
        sys.exit(1)


def main(argv):
    langs = ("php", "ruby", "swift")
    usage = ("usage: python3 -m accuracy_oracle.handlabel candidates|reconcile|parts LANG | check LANG FILE"
             " | sources swift   (LANG: php, ruby, swift)")
    if not argv or argv[0] not in ("candidates", "reconcile", "parts", "check", "sources") or len(argv) < 2 \
            or argv[1] not in langs or len(argv) != (3 if argv[0] == "check" else 2):
        sys.exit(usage)
    if argv[0] == "candidates":
        write_candidates(argv[1])
    elif argv[0] == "parts":
        ts = _load(os.path.join(LABELS, argv[1], "candidates.json"))["targets"]
        for k, (first, last) in enumerate(parts(ts), 1):
            print(f"part {k}: targets {first}..{last} ({last - first + 1} targets, "
                  f"{sum(len(t['lines']) for t in ts[first:last + 1])} candidate lines)")
    elif argv[0] == "check":
        check(argv[1], argv[2])
    elif argv[0] == "sources":
        if argv[1] != "swift":
            sys.exit("only Swift's sources are written out (PHP's and Ruby's are installed)")
        for spec in drawn_entries("swift", SEED):
            if not any(e["spec"] == spec and "skipped" not in e
                       for e in _load(os.path.join(LABELS, "swift", "candidates.json"))["entries"]):
                continue
            print(export_sources(spec))
    else:
        reconcile(argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])
