#!/usr/bin/env python3
"""Builds a second labelled set for loci's memory recall, of question-shaped queries: the
questions of FAQs no one working on loci wrote, each recalling its own answer.

Sources (installed with `apt-get install -y python3-doc debian-faq`):
  - Python's FAQ (python3-doc: /usr/share/doc/python3/html/faq/*.html, Sphinx HTML)
  - the Debian FAQ (debian-faq: /usr/share/doc/debian/FAQ/*.en.html, DocBook HTML)

Each heading that is a question (ends with "?") becomes one query, as written (only a
DocBook section number such as "11.2. " in front of it is dropped); the text after it,
up to the next heading, becomes its memory, without the question line. A question
asked twice is dropped (every query has exactly one right memory), as is an answer
under MIN_WORDS words. Each memory carries the entities a calling agent would pass, by
quality_set.py's rule: the FAQ it comes from (type `book`), then the first 8 distinct
identifiers written as `<code>` outside `<pre>` in its answer (type `identifier`).

**Halves**: a query is in the held-out half when the first byte of the SHA-256 of its
question (UTF-8) is odd, else in the tune half; written as `"half"` in queries.jsonl,
which recall_eval reports separately. A question's half never depends on the others.

Writes OUT/corpus.jsonl ({"id", "source", "text", "entities"}), OUT/queries.jsonl
({"query", "expected", "half"}) and OUT/manifest.json (counts, sources and their
Debian package versions), stdlib only, deterministic (files sorted).

Usage: scripts/quality_questions.py OUT [--python-faq DIR] [--debian-faq DIR]
"""
import argparse
import collections
import glob
import hashlib
import html.parser
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from quality_set import identifiers, normalise_body  # noqa: E402

MIN_WORDS = 20
SECTION_NUMBER = re.compile(r"^(?:\d+(?:\.\d+)*\.?|\(\d+\))\s+")
# SQLite's FAQ writes its questions in bold, numbered: "(1) How do I ...?".
NUMBERED = re.compile(r"^\(\d+\)\s")
# Page furniture that is neither a question nor an answer: Sphinx's permalinks,
# sidebars and footers, DocBook's navigation bars and tables of contents.
SKIP_CLASSES = {"headerlink", "sphinxsidebar", "related", "footer", "navheader",
                "navfooter", "toc", "mini-toc"}


class FaqPage(html.parser.HTMLParser):
    """The h1-h6 headings of a page and the text between them, without its furniture."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections = []  # (heading, text, code spans)
        self.heading, self.body, self.codes = None, [], []
        self.in_heading, self.heading_text = None, []
        self.skip_tag, self.skip_depth = None, 0
        self.in_pre, self.code = 0, None

    def handle_starttag(self, tag, attrs):
        if self.skip_tag:
            self.skip_depth += tag == self.skip_tag
            return
        classes = set((dict(attrs).get("class") or "").split())
        if tag in ("script", "style") or classes & SKIP_CLASSES:
            self.skip_tag, self.skip_depth = tag, 1
        elif not self.in_heading and (re.fullmatch(r"h[1-6]", tag) or tag == "b"
                                      or (tag == "dt" and "hdlist1" in classes)):
            self.in_heading, self.heading_text = tag, []
        elif tag in ("p", "li", "pre", "br", "tr", "div", "dt", "dd"):
            self.body.append("\n")
            self.in_pre += tag == "pre"
        elif tag == "code" and not self.in_pre and not self.in_heading:
            self.code = []

    def handle_endtag(self, tag):
        if self.skip_tag:
            if tag == self.skip_tag:
                self.skip_depth -= 1
                if self.skip_depth == 0:
                    self.skip_tag = None
            return
        if tag == "pre":
            self.in_pre = max(0, self.in_pre - 1)
        elif tag == "code" and self.code is not None:
            self.codes.append("".join(self.code))
            self.code = None
        elif tag == self.in_heading:
            self.in_heading = None
            text = re.sub(r"\s+", " ", "".join(self.heading_text)).strip()
            if tag.startswith("h") or (question(text) and (tag == "dt" or NUMBERED.match(text))):
                self.flush()
                self.heading = text
            elif self.heading is not None:
                self.body.append(" ".join(self.heading_text))

    def handle_data(self, data):
        if self.skip_tag:
            return
        if self.in_heading:
            self.heading_text.append(data)
        elif self.heading is not None:
            self.body.append(data)
            if self.code is not None:
                self.code.append(data)

    def flush(self):
        if self.heading is not None:
            self.sections.append((self.heading, "".join(self.body), self.codes))
        self.heading, self.body, self.codes = None, [], []


def page_sections(path):
    parser = FaqPage()
    try:
        parser.feed(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, OSError):
        return []
    parser.close()
    parser.flush()
    return parser.sections


def question(heading):
    """The heading as its question, or None when it is not one."""
    q = SECTION_NUMBER.sub("", heading.replace("¶", "")).strip()
    return q if q.endswith("?") and len(q) > 3 else None


def held_out(q):
    return hashlib.sha256(q.encode("utf-8")).digest()[0] % 2 == 1


def package_version(package):
    try:
        out = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", package],
                             capture_output=True, text=True, check=False)
        return out.stdout.strip() or None
    except OSError:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--python-docs", default="/usr/share/doc/python3/html")
    ap.add_argument("--debian-faq", default="/usr/share/doc/debian/FAQ")
    ap.add_argument("--git-docs", default="/usr/share/doc/git-doc")
    ap.add_argument("--sqlite-docs", default="/usr/share/doc/sqlite3")
    args = ap.parse_args()

    def pages(root, pattern):
        return sorted(glob.glob(os.path.join(root, pattern), recursive=True))

    sources = [  # (origin, Debian package, the pages)
        ("Python documentation", "python3-doc", pages(args.python_docs, "**/*.html")),
        ("Debian FAQ", "debian-faq", pages(args.debian_faq, "*.en.html")),
        ("Git documentation", "git-doc", pages(args.git_docs, "*.html")),
        ("SQLite documentation", "sqlite3-doc", pages(args.sqlite_docs, "**/*.html")),
    ]
    raw = []  # (faq, page, question, answer, code spans)
    for faq, _, pages in sources:
        for path in pages:
            for heading, body, codes in page_sections(path):
                q = question(heading)
                if q:
                    page = os.path.relpath(path, os.path.commonpath(pages) if len(pages) > 1
                                           else os.path.dirname(path))
                    raw.append((faq, page, q, normalise_body(body), codes))
    asked = collections.Counter(q.lower() for _, _, q, _, _ in raw)
    kept = [r for r in raw if asked[r[2].lower()] == 1 and len(r[3].split()) >= MIN_WORDS]
    if not kept:
        sys.exit("no questions found: install python3-doc and debian-faq (apt-get install -y)")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "corpus.jsonl", "w") as corpus, open(out / "queries.jsonl", "w") as queries:
        for i, (faq, page, q, answer, codes) in enumerate(kept):
            doc_id = f"q{i:04d}"
            entities = [{"name": faq, "type": "book"}]
            entities += [{"name": x, "type": "identifier"} for x in identifiers(codes)]
            corpus.write(json.dumps({"id": doc_id, "source": f"{faq}/{page}", "text": answer,
                                     "entities": entities}) + "\n")
            half = "held-out" if held_out(q) else "tune"
            queries.write(json.dumps({"query": q, "expected": doc_id, "half": half}) + "\n")
    by_faq = collections.Counter(faq for faq, *_ in kept)
    halves = collections.Counter("held-out" if held_out(q) else "tune" for _, _, q, _, _ in kept)
    manifest = {
        "questions": len(kept),
        "read": len(raw),
        "by_faq": dict(sorted(by_faq.items())),
        "halves": dict(sorted(halves.items())),
        "sources": {faq: {"package": pkg, "version": package_version(pkg),
                          "pages": len(pages)} for faq, pkg, pages in sources},
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"{len(kept)} questions ({dict(by_faq)}; {dict(halves)}) from {len(raw)} read, "
          f"written to {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
