"""Held-out split and scoring of loci's callers against the oracle's (pure functions).

Rules (docs/accuracy.md, "Callers against precise oracles"):
* split: sha256 of "lang:repo:path:name_line:name"; an even first byte is `tune`, an odd
  one `heldout`. It depends on nothing loci does, so a fix cannot move a target.
* function level: an oracle caller is (path, header start, name line) of the enclosing
  definition (header start = first decorator/modifier line), or (path, 0, 0) for a
  file's top-level code. A loci caller (path, line; line 0 for a null symbol) is the
  same caller when the paths are equal and header start - 1 <= line <= name line + 1
  (decorators, attributes and `export` may put the two tools' first lines apart), or,
  for a loci caller that also gives its last line and name, when the names are equal
  and its span holds the oracle's header start and name line (a TypeScript function
  with overload signatures starts, in loci, at its first signature).
  Top-level code matches loci's null symbol, or a definition of that file that is not a
  function or method (loci names `const x = f()` by `x`).
* site level: (path, line) of the call, equal.
* per target: recall = oracle items matched / oracle items; precision = loci items
  matched / loci items, undefined for an empty answer (left out of the precision mean,
  counted apart). A target loci answers with an error scores recall 0 and no precision.
* a language's, a repository's or a half's score is the mean over its targets (macro).
* member-site recall: site recall over the sites that call through a receiver
  (`x.f()`, `x?.f()`; Rust: a method call, not `f(..)`/`Type::f(..)`), over the targets
  that have such sites.
"""
import hashlib


def half(lang, repo, t):
    key = f"{lang}:{repo}:{t['path']}:{t['name_line']}:{t['name']}"
    return "tune" if hashlib.sha256(key.encode()).digest()[0] % 2 == 0 else "heldout"


def caller_matches(loci, oracle):
    lpath, lline = loci[0], loci[1]
    lkind = loci[2] if len(loci) > 2 else ""
    opath, ostart, oname = oracle[0], oracle[1], oracle[2]
    if lpath != opath:
        return False
    if ostart == 0:  # top-level code: loci's null symbol, or a top-level non-callable
        return lline == 0 or lkind not in ("", "function", "method")
    if lline != 0 and ostart - 1 <= lline <= oname + 1:
        return True
    # (path, line, kind, end line, name): the same definition, started at an overload
    return (len(loci) > 4 and len(oracle) > 3 and lline != 0 and loci[4] == oracle[3]
            and lline <= ostart and loci[3] >= oname)


def score_target(oracle_callers, oracle_sites, loci_callers, loci_sites, member_sites=()):
    """Per-target scores. oracle_callers: [(path, start, name_line, ..)],
    oracle_sites / loci_sites: [(path, line)], loci_callers: [(path, line[, kind])]."""
    oracle_callers = [tuple(c) for c in oracle_callers]
    loci_callers = sorted(set(tuple(c) for c in loci_callers))
    osites = set(tuple(s) for s in oracle_sites)
    lsites = set(tuple(s) for s in loci_sites)
    found = [o for o in oracle_callers if any(caller_matches(l, o) for l in loci_callers)]
    right = [l for l in loci_callers if any(caller_matches(l, o) for o in oracle_callers)]
    r = {
        "fn_recall": len(found) / len(oracle_callers) if oracle_callers else None,
        "fn_precision": len(right) / len(loci_callers) if loci_callers else None,
        "site_recall": len(osites & lsites) / len(osites) if osites else None,
        "site_precision": len(osites & lsites) / len(lsites) if lsites else None,
        # recall on the sites that call through a receiver (`x.f()`), apart
        "member_site_recall": (len(set(map(tuple, member_sites)) & lsites) / len(member_sites)
                               if member_sites else None),
        "missed_callers": [o for o in oracle_callers if o not in found],
        "extra_callers": [l for l in loci_callers if l not in right],
        "missed_sites": sorted(osites - lsites),
        "extra_sites": sorted(lsites - osites),
    }
    return r


def error_score(oracle_callers, oracle_sites, member_sites=()):
    return {"fn_recall": 0.0, "fn_precision": None, "site_recall": 0.0, "site_precision": None,
            "member_site_recall": 0.0 if member_sites else None,
            "missed_callers": [tuple(c) for c in oracle_callers], "extra_callers": [],
            "missed_sites": sorted(tuple(s) for s in oracle_sites), "extra_sites": []}


def mean(xs):
    xs = [x for x in xs if x is not None]
    return sum(xs) / len(xs) if xs else None


def aggregate(rows):
    """rows: [{"score": .., "error": kind or None}] -> the summary of one group."""
    answered = [r for r in rows if not r["error"]]
    return {
        "targets": len(rows),
        "errors": len(rows) - len(answered),
        "error_kinds": {k: sum(1 for r in rows if r["error"] == k) for k in sorted({r["error"] for r in rows if r["error"]})},
        "empty_answers": sum(1 for r in answered if r["score"]["fn_precision"] is None),
        "fn_recall": mean(r["score"]["fn_recall"] for r in rows),
        "fn_precision": mean(r["score"]["fn_precision"] for r in rows),
        "site_recall": mean(r["score"]["site_recall"] for r in rows),
        "site_precision": mean(r["score"]["site_precision"] for r in rows),
        "member_targets": sum(1 for r in rows if r["score"].get("member_site_recall") is not None),
        "member_site_recall": mean(r["score"].get("member_site_recall") for r in rows),
    }
