"""The corpora the trees are drawn from, by seed. Nothing here is chosen for how loci
(or any search) does on it; a draw shuffles a pool with `random.Random(f"{seed}:{lang}")`
and takes trees in that order until the language holds enough queries.

* py: every package folder (a directory with `__init__.py`) at the top of Python's
  standard library as Debian's `libpython3.11-stdlib` installs it in /usr/lib/python3.11
  (3.11.2-6+deb12u6 on the machine that built the first set), less the test suites and
  data-only packages listed in PY_EXCLUDED.
* rust: RUST below, drawn once from the 373 crates unpacked in this machine's
  ~/.cargo/registry/src (the dependencies of loci's workspace and its tools) by
  `random.Random("33:rust-pool").sample(sorted(names), 40)`; a crate missing from a
  machine's registry is fetched from crates.io with `cargo fetch`.
* ts (TypeScript and JavaScript): NPM below, pinned versions fetched with `npm pack`:
  the packages of the callers oracle's pool (scripts/accuracy_oracle/pools.py, popular
  packages by monthly downloads) plus four JavaScript libraries known for JSDoc
  (ramda, luxon, async, moment), written down before any measurement.
* go: every package folder of Go's standard library as Debian's `golang-1.19-src`
  installs it in /usr/share/go-1.19/src (1.19.8-2), less cmd/, vendor/, testdata/ and
  internal/ folders.
"""
import os

PY_ROOT = "/usr/lib/python3.11"
PY_EXCLUDED = {"test", "idlelib", "lib2to3", "turtledemo", "pydoc_data", "ensurepip", "encodings",
               "site-packages", "dist-packages", "__pycache__", "venv", "distutils"}
GO_ROOT = "/usr/share/go-1.19/src"

RUST = [
    "schemars_derive-1.2.3", "phf-0.13.1", "const-oid-0.10.3", "block-buffer-0.10.4", "nom-7.1.3",
    "errno-0.3.15", "unit-prefix-0.5.2", "notify-types-2.2.0", "hashbrown-0.16.1", "uuid-1.29.3",
    "tree-sitter-c-sharp-0.23.5", "dary_heap-0.3.9", "same-file-1.0.6", "futures-task-0.3.34", "cfg-if-1.0.5",
    "walkdir-2.5.1", "cobs-0.3.0", "libc-0.2.191", "safetensors-0.8.0", "regex-syntax-0.8.12",
    "embedded-io-0.4.0", "base64-0.13.1", "ring-0.17.14", "foldhash-0.2.0", "rusqlite-0.37.0",
    "libmimalloc-sys-0.1.49", "utf8-zero-0.8.1", "parking_lot-0.12.5", "mime-0.3.18", "gemm-f32-0.19.0",
    "syn-3.0.10", "tracing-log-0.2.0", "deranged-0.5.9", "libgit2-sys-0.18.8+1.9.7", "getrandom-0.3.4",
    "flate2-1.1.11", "clap_builder-4.6.7", "darling_macro-0.20.11", "typed-path-0.13.0", "seq-macro-0.3.6",
]

NPM = [
    "rxjs@7.8.2", "zod@4.6.7", "immer@11.2.10", "mobx@7.1.3", "fp-ts@2.16.11", "ky@2.1.0", "ajv@8.20.0",
    "chevrotain@13.2.0", "@reduxjs/toolkit@2.14.0", "@tanstack/query-core@5.108.0",
    "@tanstack/table-core@9.3.1", "@trpc/server@11.25.2", "superjson@2.2.6",
    "json-schema-to-typescript@16.0.0", "io-ts@2.2.22", "effect@4.1.0", "express@5.3.0",
    "commander@15.1.0", "axios@1.21.1", "debug@4.4.3", "semver@7.8.6", "ws@8.23.0",
    "htmlparser2@12.0.0", "marked@18.2.1", "date-fns@4.4.0", "yaml@2.9.1", "cheerio@1.2.0",
    "inversify@8.2.3", "neverthrow@8.2.0", "valibot@1.5.0",
    "ramda@0.30.1", "luxon@3.5.0", "async@3.2.6", "moment@2.30.1",
]


def py_pool():
    out = []
    for d in sorted(os.listdir(PY_ROOT)):
        if d in PY_EXCLUDED or d.startswith((".", "config-")):
            continue
        if os.path.isfile(os.path.join(PY_ROOT, d, "__init__.py")):
            out.append(d)
    return out


def go_pool():
    out = []
    for d, dirs, fs in os.walk(GO_ROOT):
        rel = os.path.relpath(d, GO_ROOT)
        dirs[:] = sorted(x for x in dirs if x not in ("testdata", "vendor", "internal", "cmd")
                         and not x.startswith((".", "_")))
        if rel != "." and any(f.endswith(".go") and not f.endswith("_test.go") for f in fs):
            out.append(rel)
    return sorted(out)


def pool(lang):
    return {"py": py_pool, "go": go_pool, "rust": lambda: list(RUST), "ts": lambda: list(NPM)}[lang]()
