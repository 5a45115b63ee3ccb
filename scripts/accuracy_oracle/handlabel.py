"""PHP and Ruby caller ground truth from two independent hand labellings, reconciled.

No precise call resolver for PHP or Ruby installs here, so their callers are labelled by
hand, on candidates this module draws (labels/README.md has the labellers' rules):

* sources: PHP packages as Debian ships them under /usr/share/php (PHPUnit and its
  dependencies, PhpParser, Doctrine's Instantiator, ..): one entry per package folder,
  `php:/usr/share/php/VENDOR` when the vendor folder holds .php files itself (PHPUnit,
  PhpParser, DeepCopy), else `php:/usr/share/php/VENDOR/PACKAGE` per package; Ruby's
  standard library (/usr/lib/ruby/3.1.0), `ruby:LIB` for a top-level `LIB.rb` with its
  `LIB/` folder (or the folder alone: `net`, `rinda`, ..), and the bundled gems' lib/
  folders (/usr/lib/ruby/gems/3.1.0/gems), `rubygem:NAME-VERSION`;
* units: every function or method with a body, read by the language's own parser
  (`php_units.php`, nikic/PHP-Parser 4.15; `ruby_units.rb`, Ripper); closures and blocks
  are not units, their calls belong to the enclosing one;
* a candidate target: a unit that is not a constructor or a magic method/hook, is the
  only unit with its (path, chain, name), and whose name occurs as a whole word in the
  entry's tree outside its own definition line (PHP: case-insensitively, not as `$name`;
  Ruby: not as `@name`/`$name`, `foo` not as `foo?`/`foo!`, a setter `foo=` as `foo =`);
* candidate lines: every line with such an occurrence but the definition's name line, at
  most 80 a target (the first by path and line; `truncated` counts the rest);
* draw: seed 29, the pool shuffled by `random.Random(f"29:{lang}")`, entries taken in
  order (those with < 5 or > 400 files skipped, said why) until 3 entries and
  MIN_TARGETS sampled targets (480 PHP, 380 Ruby: the first 270 gave fewer than 200
  targets with a site); per entry `random.Random(f"29:{lang}:{spec}").sample(candidates, 90)`.

Commands (from scripts/): `python3 -m accuracy_oracle.handlabel candidates php|ruby`
writes labels/LANG/candidates.json; `.. reconcile php|ruby` reads labels/LANG/labeller-a.partN.json
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

HERE = os.path.dirname(os.path.abspath(__file__))
LABELS = os.path.join(HERE, "labels")
PHP_ROOT = "/usr/share/php"
RUBY_LIB = "/usr/lib/ruby/3.1.0"
RUBY_GEMS = "/usr/lib/ruby/gems/3.1.0/gems"
SEED = 29
MIN_ENTRIES = 3
# The first 270 candidates gave 130 (PHP) and 151 (Ruby) targets with a call site, short of
# the 200 a language needs: the draws go on (the candidates drawn first stay as they were).
MIN_TARGETS = {"php": 480, "ruby": 380}
PER_ENTRY = 90
MAX_LINES = 80
EXT = {"php": ".php", "ruby": ".rb"}

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


def lang_of(spec):
    return "php" if spec.startswith("php:") else "ruby"


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
    else:
        raise ValueError(lang)
    return sorted(out)


def draw(lang, seed=SEED):
    p = pool(lang)
    random.Random(f"{seed}:{lang}").shuffle(p)
    return p


def source_files(spec):
    """(root, [paths relative to root]) of an entry's source files."""
    kind, what = spec.split(":", 1)
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
        "ruby": re.compile(r"(?<![\w@$])([A-Za-z_]\w*)")}


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
    else:
        if u["name"] in RUBY_MAGIC:
            return "constructor or hook"
        if not RUBY_NAME.match(u["name"]):
            return "operator"
    return None


def candidate_targets(lang, spec, root, tree):
    """(every candidate target of the tree, sorted, each with its candidate lines; unit count)."""
    us = units(lang, tree)
    index, texts = word_index(lang, tree)
    key = (lambda u: u["name"].lower()) if lang == "php" else (lambda u: u["name"])
    counts = {}
    for path, fu in us.items():
        for u in fu:
            k = (path, tuple(u["chain"]), key(u))
            counts[k] = counts.get(k, 0) + 1
    out = []
    for path, fu in sorted(us.items()):
        for u in fu:
            if excluded(lang, u) or counts[(path, tuple(u["chain"]), key(u))] > 1:
                continue
            lines = sorted(x for x in occurrences(lang, u["name"], index, texts) if x != (path, u["name_line"]))
            if not lines:
                continue
            t = {"id": f"{spec}|{path}:{u['name_line']}:{u['name']}", "spec": spec, "root": root, "path": path,
                 "name": u["name"], "chain": u["chain"], "kind": u["kind"], "start": u["start"],
                 "name_line": u["name_line"], "end_line": u["end_line"], "params": u["params"]}
            for flag in ("static", "singleton", "in_block"):
                if u.get(flag):
                    t[flag] = True
            t["lines"] = [[p, l, texts[p][l - 1].strip()[:200]] for p, l in lines[:MAX_LINES]]
            if len(lines) > MAX_LINES:
                t["truncated"] = len(lines) - MAX_LINES
            out.append(t)
    out.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
    return out, sum(len(fu) for fu in us.values())


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
            cands, n_units = candidate_targets(lang, spec, root, tree)
        finally:
            shutil.rmtree(tree, ignore_errors=True)
        sample = random.Random(f"{SEED}:{lang}:{spec}").sample(cands, min(PER_ENTRY, len(cands)))
        sample.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
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
    known = {t["id"]: {f"{p}:{l}" for p, l, _ in t["lines"]} for t in cands["targets"]}
    for who, labels in (("a", a), ("b", b)):
        for tid, lines in labels.items():
            if tid not in known:
                problems.append(f"labeller-{who}: unknown target {tid}")
                continue
            for k, v in lines.items():
                if k not in known[tid]:
                    problems.append(f"labeller-{who}: {tid}: {k} is no candidate line")
                if v not in ("yes", "no", "unsure"):
                    problems.append(f"labeller-{who}: {tid}: {k}: {v!r} is not yes/no/unsure")
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


def main(argv):
    if len(argv) != 2 or argv[0] not in ("candidates", "reconcile") or argv[1] not in ("php", "ruby"):
        sys.exit("usage: python3 -m accuracy_oracle.handlabel candidates|reconcile php|ruby")
    if argv[0] == "candidates":
        write_candidates(argv[1])
    else:
        reconcile(argv[1])


if __name__ == "__main__":
    main(sys.argv[1:])
