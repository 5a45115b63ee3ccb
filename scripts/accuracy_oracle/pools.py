"""Candidate pools the repositories are drawn from, by seed.

Written down once, before any measurement, from the registries' lists of popular
packages (npm by monthly downloads, PyPI pure-Python packages), each pinned to the
version those lists held, so a stranger gets the same sources. A draw shuffles a pool
with `random.Random(f"{seed}:{lang}")` and takes packages in that order until enough
fit the size rules of `oracle.py` (a TypeScript/JavaScript package needs >= 10 source
files, a Python wheel must be pure Python with >= 5 modules; at most 400 files). Nothing
here is chosen for how loci does on it.

C holds C libraries on hand: vendored in -sys crates of the same registry, and PyPI
source distributions of C extension modules (`pip download --no-binary :all:`).

RUST was drawn once from the crates unpacked in this machine's ~/.cargo/registry/src
(360 of them, the dependencies of loci's own workspace and its tools) by
`random.Random("29:rust-pool").sample(sorted(names), 40)`; a crate missing from a
machine's registry is fetched from crates.io (rust_thir.fetch).

GO is not listed here: it is every package folder of Go's standard library as Debian's
golang-1.19-src ships it (go_types.pool), a fixed set for that package's version.
"""

# npm packages (TypeScript ones that ship their .ts sources, and plain JavaScript ones).
NPM = [
    "rxjs@7.8.2",
    "zod@4.6.7",
    "immer@11.2.10",
    "mobx@7.1.3",
    "fp-ts@2.16.11",
    "ky@2.1.0",
    "ajv@8.20.0",
    "chevrotain@13.2.0",
    "@reduxjs/toolkit@2.14.0",
    "@tanstack/query-core@5.108.0",
    "@tanstack/table-core@9.3.1",
    "@trpc/server@11.25.2",
    "superjson@2.2.6",
    "json-schema-to-typescript@16.0.0",
    "io-ts@2.2.22",
    "effect@4.1.0",
    "express@5.3.0",
    "commander@15.1.0",
    "axios@1.21.1",
    "debug@4.4.3",
    "semver@7.8.6",
    "ws@8.23.0",
    "htmlparser2@12.0.0",
    "marked@18.2.1",
    "date-fns@4.4.0",
    "yaml@2.9.1",
    "cheerio@1.2.0",
    "inversify@8.2.3",
    "neverthrow@8.2.0",
    "valibot@1.5.0",
]

# Pure-Python PyPI packages (a wheel is downloaded with pip, no dependencies).
PYPI = [
    "requests==2.34.2",
    "click==8.5.1",
    "attrs==26.1.0",
    "idna==3.20",
    "urllib3==2.8.0",
    "jinja2==3.1.6",
    "packaging==26.3",
    "pyparsing==3.3.3",
    "python-dateutil==4.0.0",
    "more-itertools==11.2.1",
    "sortedcontainers==2.4.0",
    "humanize==4.17.0",
    "arrow==1.4.0",
    "marshmallow==4.4.0",
    "cattrs==26.2.1",
    "pluggy==1.7.0",
    "h11==0.16.0",
    "anyio==4.16.0",
    "httpx==0.28.1",
    "httpcore==1.0.9",
    "itsdangerous==2.2.0",
    "werkzeug==3.1.9",
    "flask==3.1.3",
    "boltons==26.2.0",
    "toolz==1.2.0",
    "cachetools==8.0.0",
    "jsonschema==4.26.0",
    "sqlparse==0.6.1",
    "parso==0.8.7",
    "tenacity==9.2.1",
    "pyasn1==0.6.5",
    "oauthlib==4.0.1",
    "webob==1.8.11",
    "mako==1.4.3",
    "markdown==3.11.3",
    "bleach==6.4.0",
    "html5lib==1.1",
]

# Crates (name-version), compiled with all their features (else their default ones).
RUST = [
    "macro_rules_attribute-0.2.3", "portable-atomic-1.15.0", "zerocopy-0.8.64", "icu_provider-2.4.0",
    "sha2-0.10.9", "tokenizers-0.23.2", "writeable-0.6.4", "serde_plain-1.0.2", "bumpalo-3.20.4",
    "is_terminal_polyfill-1.70.2", "proptest-1.12.0", "colorchoice-1.0.5", "winnow-0.7.15",
    "monostate-0.1.18", "tower-layer-0.3.3", "vcpkg-0.2.15", "find-msvc-tools-0.1.15", "indexmap-2.14.2",
    "yoke-derive-0.8.4", "futures-util-0.3.34", "bit-set-0.11.1", "rmcp-3.11.0", "foldhash-0.1.5",
    "bytes-1.12.2", "toml_datetime-0.7.5+spec-1.1.0", "tree-sitter-swift-0.7.4", "criterion-plot-0.6.0",
    "half-2.7.1", "tree-sitter-0.25.10", "block-buffer-0.12.1", "rand-0.9.5", "tower-http-0.6.11",
    "regex-automata-0.4.18", "time-core-0.1.9", "unicode-general-category-1.1.0", "zerotrie-0.2.5",
    "dyn-stack-macros-0.1.3", "subtle-2.6.1", "icu_normalizer_data-2.4.0", "rand_xorshift-0.5.0",
]

# C sources: `crate:NAME-VERSION:FOLDER` (a folder of a registry crate) or
# `sdist:NAME==VERSION` (a PyPI source distribution).
C = [
    "crate:zstd-sys-2.0.16+zstd.1.5.7:zstd/lib",
    "crate:libmimalloc-sys-0.1.49:c_src/mimalloc/v2",
    "sdist:brotli==1.2.1",
    "sdist:lz4==4.4.5",
    "sdist:cmarkgfm==2025.10.22",
    "sdist:bitarray==3.12.3",
    "sdist:xxhash==4.1.0",
    "sdist:ujson==6.1.0",
]
