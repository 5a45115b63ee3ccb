#!/usr/bin/env python3
"""Builds the labelled set loci's memory recall is measured on, from real text no one
working on loci wrote: the markdown files of the crates under ~/.cargo/registry/src
(READMEs, docs/, guides) and the mdBook HTML books of the Rust toolchain (the Book, the
Reference, Cargo, rustc, rustdoc, the Nomicon, Rust by Example, the edition guide...).

Each section becomes one memory (its text, without its heading) and one query (its
heading). Only headings that occur once in the whole set are kept, so every query has
exactly one right answer; sections under 20 words are dropped.

Each memory also carries the entities a calling agent would pass with it, by one rule
for every section (never from the heading, which is the query): the crate, book or
Python package it comes from (type `crate`, `book`, `package`), then the first 8
distinct identifiers written as inline code in its text (markdown `` `x` `` outside
fenced blocks, HTML `<code>` outside `<pre>`; type `identifier`).

Writes OUT/corpus.jsonl ({"id", "source", "text", "entities": [{"name", "type"}]}),
OUT/queries.jsonl ({"query", "expected"}) and OUT/manifest.json (the counts and where
they came from), stdlib only, deterministic (sources sorted).

Usage: scripts/quality_set.py OUT [--cargo-registry DIR] [--rust-docs DIR]
                               [--site-packages DIR] [--max N]
"""
import argparse
import collections
import glob
import html.parser
import json
import os
import email.parser
import re
import sys
import sysconfig
from pathlib import Path

SKIP_MD = re.compile(r"(?i)changelog|changes|release|history|license|licence|contributing|conduct|security|authors|notice")
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
MIN_WORDS = 20
MAX_CHARS = 4000
MAX_IDENTIFIERS = 8
FENCE = re.compile(r"^\s*```.*?^\s*```", re.M | re.S)
INLINE_CODE = re.compile(r"`([^`\n]+)`")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*!?")
VERSIONED = re.compile(r"^(.+?)-\d+(?:\.\d+)*")


def identifiers(spans):
    """The first MAX_IDENTIFIERS distinct identifiers among inline code spans (a
    trailing `()` dropped), in order."""
    out, seen = [], set()
    for span in spans:
        span = span.strip()
        if span.endswith("()"):
            span = span[:-2]
        if 2 <= len(span) <= 60 and IDENTIFIER.fullmatch(span) and span.lower() not in seen:
            seen.add(span.lower())
            out.append(span)
            if len(out) == MAX_IDENTIFIERS:
                break
    return out


def md_code_spans(body):
    return INLINE_CODE.findall(FENCE.sub("", body))


def origin(kind, src):
    """The crate, book or package a section comes from: the first path component,
    without its version (`serde-1.0.200/README.md` -> serde)."""
    first = src.split(os.sep, 1)[0]
    if first.endswith(".dist-info"):
        first = first[: -len(".dist-info")]
    m = VERSIONED.match(first)
    name = m.group(1) if m else first
    return name, {"crates": "crate", "rust-docs": "book", "python": "package"}[kind]


def clean_heading(h):
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)  # [text](link) -> text
    h = re.sub(r"<[^>]+>", "", h)
    h = h.replace("`", "").replace("*", "").strip()
    return re.sub(r"\s+", " ", h)


def md_sections(path, text=None):
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            return
    heading, body, in_code = None, [], False
    stack = {}  # level -> heading text, for each section's parent
    parent = ""
    for line in text.split("\n"):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        m = None if in_code else HEADING.match(line)
        if m:
            if heading:
                yield heading, parent, "\n".join(body)
            level = len(m.group(1))
            heading, body = clean_heading(m.group(2)), []
            parent = next((stack[l] for l in range(level - 1, 0, -1) if l in stack), "")
            stack = {l: h for l, h in stack.items() if l < level}
            stack[level] = heading
        else:
            body.append(line)
    if heading:
        yield heading, parent, "\n".join(body)


class MdBookPage(html.parser.HTMLParser):
    """The h1-h6 headings of an mdBook page's <main> and the text between them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections, self.heading, self.body = [], None, []
        self.level, self.stack, self.parent = 0, {}, ""
        self.in_main = 0
        self.in_heading = False
        self.heading_text = []
        self.skip = 0
        self.in_pre = 0
        self.code = None  # the inline <code> span being read
        self.codes = []

    def handle_starttag(self, tag, attrs):
        if tag == "main":
            self.in_main += 1
        elif tag in ("script", "style", "nav"):
            self.skip += 1
        elif self.in_main and re.fullmatch(r"h[1-6]", tag):
            self.flush()
            self.in_heading, self.heading_text = True, []
            self.level = int(tag[1])
        elif self.in_main and tag in ("p", "li", "pre", "br", "tr", "div"):
            self.body.append("\n")
            if tag == "pre":
                self.in_pre += 1
        elif self.in_main and tag == "code" and not self.in_pre and not self.in_heading:
            self.code = []

    def handle_endtag(self, tag):
        if tag == "main":
            self.in_main -= 1
        elif tag in ("script", "style", "nav"):
            self.skip = max(0, self.skip - 1)
        elif tag == "pre":
            self.in_pre = max(0, self.in_pre - 1)
        elif tag == "code" and self.code is not None:
            if self.heading:
                self.codes.append("".join(self.code))
            self.code = None
        elif self.in_heading and re.fullmatch(r"h[1-6]", tag):
            self.in_heading = False
            self.heading = clean_heading("".join(self.heading_text))
            level = self.level
            self.parent = next((self.stack[l] for l in range(level - 1, 0, -1) if l in self.stack), "")
            self.stack = {l: h for l, h in self.stack.items() if l < level}
            self.stack[level] = self.heading

    def handle_data(self, data):
        if not self.in_main or self.skip:
            return
        if self.in_heading:
            self.heading_text.append(data)
        elif self.heading:
            self.body.append(data)
            if self.code is not None:
                self.code.append(data)

    def flush(self):
        if self.heading:
            self.sections.append((self.heading, self.parent, "".join(self.body), self.codes))
        self.heading, self.body, self.codes = None, [], []


def html_sections(path):
    parser = MdBookPage()
    try:
        parser.feed(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, OSError):
        return []
    parser.flush()
    return parser.sections


def mostly_ascii(text):
    """English headings only: the model is English, a translated book's would be noise."""
    return sum(c.isascii() for c in text) >= 0.9 * len(text)


def normalise_body(text):
    text = re.sub(r"[ \t]+", " ", text)
    text = re.sub(r"\n\s*\n+", "\n\n", text).strip()
    return text[:MAX_CHARS]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--cargo-registry", default=os.path.expanduser("~/.cargo/registry/src"))
    ap.add_argument("--rust-docs", default=None)
    ap.add_argument("--site-packages", default=sysconfig.get_paths()["purelib"])
    ap.add_argument("--max", type=int, default=0, help="keep at most N sections (0: all)")
    args = ap.parse_args()
    if args.rust_docs is None:
        found = sorted(glob.glob(os.path.expanduser("~/.rustup/toolchains/*/share/doc/rust/html")))
        args.rust_docs = found[0] if found else ""

    raw = []  # (source, heading, body)
    for path in sorted(glob.glob(os.path.join(args.cargo_registry, "*", "*", "**", "*.md"), recursive=True)):
        if SKIP_MD.search(os.path.basename(path)):
            continue
        rel = os.path.relpath(path, args.cargo_registry).split(os.sep, 1)[1]
        for h, p, b in md_sections(path):
            raw.append(("crates", rel, h, p, b, md_code_spans(b)))
    if args.rust_docs:
        books = ["book", "reference", "cargo", "rustc", "rustdoc", "nomicon", "rust-by-example",
                 "edition-guide", "embedded-book", "unstable-book", "clippy", "style-guide"]
        for book in books:
            for path in sorted(glob.glob(os.path.join(args.rust_docs, book, "**", "*.html"), recursive=True)):
                if path.endswith(("print.html", "404.html", "toc.html")):
                    continue
                rel = os.path.relpath(path, args.rust_docs)
                for h, p, b, codes in html_sections(path):
                    raw.append(("rust-docs", rel, h, p, b, codes))

    if args.site_packages:
        root = args.site_packages
        for path in sorted(glob.glob(os.path.join(root, "**", "*.md"), recursive=True)):
            if not SKIP_MD.search(os.path.basename(path)):
                for h, p, b in md_sections(path):
                    raw.append(("python", os.path.relpath(path, root), h, p, b, md_code_spans(b)))
        for path in sorted(glob.glob(os.path.join(root, "*.dist-info", "METADATA"))):
            try:
                msg = email.parser.Parser().parsestr(Path(path).read_text(encoding="utf-8"))
            except (UnicodeDecodeError, OSError):
                continue
            if "markdown" not in (msg.get("Description-Content-Type") or ""):
                continue
            body = msg.get_payload() or msg.get("Description") or ""
            for h, p, b in md_sections(path, body):
                raw.append(("python", os.path.relpath(path, root), h, p, b, md_code_spans(b)))

    # The same file is often present in several versions of a crate: keep one copy of
    # each (heading, body).
    seen, unique = set(), []
    for kind, src, h, p, b, codes in raw:
        b = normalise_body(b)
        key = (h.lower(), b)
        if key in seen or len(b.split()) < MIN_WORDS or len(h) < 3 or not mostly_ascii(h):
            continue
        seen.add(key)
        name, typ = origin(kind, src)
        entities = [{"name": name, "type": typ}]
        entities += [{"name": i, "type": "identifier"} for i in identifiers(codes)
                     if i.lower() != name.lower()]
        unique.append((kind, src, h, p, b, entities))
    # The query is the heading when no other section has it, else "parent: heading"
    # when that is unique; a section whose query would still be ambiguous is dropped.
    alone = collections.Counter(h.lower() for _, _, h, _, _, _ in unique)
    qualified = collections.Counter(f"{p}: {h}".lower() for _, _, h, p, _, _ in unique)
    kept = []
    for kind, src, h, p, b, e in unique:
        if alone[h.lower()] == 1:
            kept.append((kind, src, h, b, e))
        elif p and qualified[f"{p}: {h}".lower()] == 1:
            kept.append((kind, src, f"{p}: {h}", b, e))
    if args.max:
        kept = kept[: args.max]

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w") as corpus, open(out / "queries.jsonl", "w") as queries:
        for i, (_, src, h, b, e) in enumerate(kept):
            doc_id = f"s{i:05d}"
            corpus.write(json.dumps({"id": doc_id, "source": src, "text": b, "entities": e}) + "\n")
            queries.write(json.dumps({"query": h, "expected": doc_id}) + "\n")
    by_kind = collections.Counter(k for k, _, _, _, _ in kept)
    origins = collections.Counter(f"{e[0]['type']}:{e[0]['name']}" for _, _, _, _, e in kept)
    manifest = {
        "sections": len(kept),
        "read": len(raw),
        "by_kind": dict(sorted(by_kind.items())),
        "origins": len(origins),
        "identifiers_per_section": round(sum(len(e) - 1 for *_, e in kept) / max(1, len(kept)), 2),
        "cargo_registry": args.cargo_registry,
        "rust_docs": args.rust_docs,
        "site_packages": args.site_packages,
        "by_origin": dict(sorted(origins.items())),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(kept)} sections ({dict(by_kind)}) from {len(raw)} read, "
          f"{len(origins)} crates/books/packages, written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
