//! Which files can hold a match: the strings a pattern's syntax tree guarantees every
//! match contains, turned into a query on the search index's trigram terms.
//!
//! The pattern is parsed with `regex-syntax` (the parser of the `regex` crate that
//! confirms the hits, with the same flags), so escapes, classes, repetitions, flags and
//! `(?x)` whitespace mean here exactly what they mean to the matcher. Each node of the
//! syntax tree gives either the small set of strings it matches exactly, or a condition
//! ([`Need`]) every match of it meets. Strings are kept case-folded as the index folds
//! them ([`crate::trigram`]), so a case-insensitive pattern's `[Hh][Ee]…` expands to one
//! string, not to every spelling. Anything not known for sure is [`Need::Any`]: the
//! prefilter may let through files without a match (the line scan drops them), never
//! hold back a file with one.

use std::collections::BTreeSet;

use regex_syntax::hir::{Class, Hir, HirKind};

/// Most strings kept as a node's exact set; past that, the set becomes a condition.
const MAX_EXACT: usize = 64;

/// Most (folded) characters a class may have to be expanded into strings.
const MAX_CLASS: usize = 8;

/// Most trigram terms taken from one required string.
const TERMS_PER_STRING: usize = 12;

/// Most trigram terms in one index query; more narrow little further and cost time.
const MAX_TERMS: usize = 48;

/// A condition every line that matches meets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Need {
    /// No condition is known: any file may match.
    Any,
    /// The line contains this (case-folded) string.
    Contains(String),
    /// Every one of these holds.
    All(Vec<Need>),
    /// At least one of these holds.
    OneOf(Vec<Need>),
}

/// What one syntax node says about its matches.
struct Info {
    /// Every string the node can match (folded), when there are few; `None` otherwise.
    exact: Option<BTreeSet<String>>,
    /// A condition every match meets (`Any` when `exact` says it all).
    need: Need,
}

impl Info {
    fn exact(set: BTreeSet<String>) -> Info {
        Info {
            exact: Some(set),
            need: Need::Any,
        }
    }

    fn unknown(need: Need) -> Info {
        Info { exact: None, need }
    }

    /// The condition this node's matches meet, whatever form it was kept in.
    fn into_need(self) -> Need {
        let from_exact = self.exact.map_or(Need::Any, contains_one_of);
        all(vec![from_exact, self.need])
    }
}

/// What every line matching `source` (regex syntax) contains. A pattern the parser
/// refuses gives [`Need::Any`]: the matcher built from it decides.
pub(crate) fn required(source: &str, ignore_case: bool) -> Need {
    let parsed = regex_syntax::ParserBuilder::new()
        .case_insensitive(ignore_case)
        .build()
        .parse(source);
    match parsed {
        Ok(hir) => info(&hir).into_need(),
        Err(_) => Need::Any,
    }
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(BTreeSet::from([String::new()])),
        HirKind::Literal(lit) => match std::str::from_utf8(&lit.0) {
            Ok(s) => Info::exact(BTreeSet::from([s
                .chars()
                .map(crate::trigram::fold)
                .collect()])),
            Err(_) => Info::unknown(Need::Any),
        },
        HirKind::Class(class) => match class_chars(class) {
            Some(chars) => Info::exact(chars.into_iter().map(String::from).collect()),
            None => Info::unknown(Need::Any),
        },
        HirKind::Capture(capture) => info(&capture.sub),
        HirKind::Repetition(rep) => repetition(rep.min, rep.max, info(&rep.sub)),
        HirKind::Concat(subs) => concat(subs),
        HirKind::Alternation(subs) => alternation(subs),
    }
}

/// The folded characters of a small class, or `None` when it has more than [`MAX_CLASS`].
fn class_chars(class: &Class) -> Option<BTreeSet<char>> {
    let mut out = BTreeSet::new();
    match class {
        Class::Unicode(u) => {
            for range in u.ranges() {
                for c in range.start()..=range.end() {
                    out.insert(crate::trigram::fold(c));
                    if out.len() > MAX_CLASS {
                        return None;
                    }
                }
            }
        }
        Class::Bytes(b) => {
            for range in b.ranges() {
                for byte in range.start()..=range.end() {
                    // A byte above ASCII is part of a character, not one.
                    if !byte.is_ascii() {
                        return None;
                    }
                    out.insert(crate::trigram::fold(char::from(byte)));
                    if out.len() > MAX_CLASS {
                        return None;
                    }
                }
            }
        }
    }
    Some(out)
}

fn repetition(min: u32, max: Option<u32>, sub: Info) -> Info {
    if max == Some(0) {
        return Info::exact(BTreeSet::from([String::new()]));
    }
    if min == 0 {
        // Zero occurrences match too: only `x?` keeps a known set.
        return match (max, sub.exact) {
            (Some(1), Some(mut set)) if set.len() < MAX_EXACT => {
                set.insert(String::new());
                Info::exact(set)
            }
            _ => Info::unknown(Need::Any),
        };
    }
    if max == Some(min)
        && min <= 4
        && let Some(set) = &sub.exact
    {
        let mut acc = BTreeSet::from([String::new()]);
        for _ in 0..min {
            match product(&acc, set) {
                Some(next) => acc = next,
                None => return Info::unknown(contains_one_of(set.clone())),
            }
        }
        return Info::exact(acc);
    }
    // At least one occurrence: whatever it needs is needed.
    Info::unknown(sub.into_need())
}

fn concat(subs: &[Hir]) -> Info {
    let mut needs = Vec::new();
    // The strings the run of exact nodes so far can match, joined.
    let mut run = BTreeSet::from([String::new()]);
    let mut whole_is_exact = true;
    for sub in subs {
        let sub = info(sub);
        match sub.exact {
            Some(set) => match product(&run, &set) {
                Some(joined) => run = joined,
                None => {
                    // Too many spellings: what the run has so far is needed, then anew.
                    needs.push(contains_one_of(std::mem::replace(&mut run, set)));
                    whole_is_exact = false;
                }
            },
            None => {
                let before = std::mem::replace(&mut run, BTreeSet::from([String::new()]));
                needs.push(contains_one_of(before));
                needs.push(sub.need);
                whole_is_exact = false;
            }
        }
    }
    if whole_is_exact {
        return Info::exact(run);
    }
    needs.push(contains_one_of(run));
    Info::unknown(all(needs))
}

fn alternation(subs: &[Hir]) -> Info {
    let infos: Vec<Info> = subs.iter().map(info).collect();
    if infos.iter().all(|i| i.exact.is_some()) {
        let union: BTreeSet<String> = infos
            .iter()
            .flat_map(|i| i.exact.iter().flatten().cloned())
            .collect();
        if union.len() <= MAX_EXACT {
            return Info::exact(union);
        }
    }
    Info::unknown(one_of(infos.into_iter().map(Info::into_need).collect()))
}

/// Every string of `a` followed by every string of `b`, unless that is too many.
fn product(a: &BTreeSet<String>, b: &BTreeSet<String>) -> Option<BTreeSet<String>> {
    if a.len().saturating_mul(b.len()) > MAX_EXACT {
        return None;
    }
    Some(
        a.iter()
            .flat_map(|x| b.iter().map(move |y| format!("{x}{y}")))
            .collect(),
    )
}

/// The line contains one of `set`. An empty set (a node that matches nothing) is
/// left as `Any`: the scan finds nothing either way.
fn contains_one_of(set: BTreeSet<String>) -> Need {
    if set.is_empty() {
        return Need::Any;
    }
    one_of(set.into_iter().map(Need::Contains).collect())
}

/// `All`, without `Any`s, nested `All`s or a single child.
fn all(needs: Vec<Need>) -> Need {
    let mut out = Vec::new();
    for need in needs {
        match need {
            Need::Any => {}
            Need::All(inner) => out.extend(inner),
            Need::Contains(s) if s.is_empty() => {}
            other => {
                if !out.contains(&other) {
                    out.push(other);
                }
            }
        }
    }
    match out.len() {
        0 => Need::Any,
        1 => out.remove(0),
        _ => Need::All(out),
    }
}

/// `OneOf`, which is `Any` as soon as one child is.
fn one_of(needs: Vec<Need>) -> Need {
    let mut out = Vec::new();
    for need in needs {
        match need {
            Need::Any => return Need::Any,
            Need::Contains(s) if s.is_empty() => return Need::Any,
            Need::OneOf(inner) => out.extend(inner),
            other => {
                if !out.contains(&other) {
                    out.push(other);
                }
            }
        }
    }
    match out.len() {
        0 => Need::Any,
        1 => out.remove(0),
        _ => Need::OneOf(out),
    }
}

/// The FTS5 query (on `code_fts`'s trigram terms) a file must match to hold a line
/// meeting `need`, or `None` when nothing narrows it (every file is a candidate).
/// Strings shorter than a trigram narrow nothing; past [`MAX_TERMS`] terms, conditions
/// are dropped (an `All` keeps its first ones, a `OneOf` that does not fit is dropped
/// whole), which only ever lets more files through.
pub(crate) fn fts_query(need: &Need) -> Option<String> {
    let mut budget = MAX_TERMS;
    render(need, &mut budget)
}

fn render(need: &Need, budget: &mut usize) -> Option<String> {
    match need {
        Need::Any => None,
        Need::Contains(s) => render_terms(&crate::trigram::query_terms(s), budget),
        Need::All(needs) => {
            let parts: Vec<String> = needs.iter().filter_map(|n| render(n, budget)).collect();
            (!parts.is_empty()).then(|| group(&parts, " AND "))
        }
        Need::OneOf(needs) => {
            let mut local = *budget;
            let mut parts = Vec::new();
            for n in needs {
                match render(n, &mut local) {
                    Some(part) => parts.push(part),
                    // Too big for what is left, or an alternative that narrows nothing:
                    // the terms every alternative needs still narrow (if there are any).
                    None => return render_terms(&required_terms(need), budget),
                }
            }
            parts.dedup();
            *budget = local;
            Some(group(&parts, " OR "))
        }
    }
}

/// The trigram terms a file must hold to meet `need` at all: those of a string, all of
/// an `All`'s, and those common to every alternative of a `OneOf`.
fn required_terms(need: &Need) -> Vec<String> {
    match need {
        Need::Any => Vec::new(),
        Need::Contains(s) => crate::trigram::query_terms(s),
        Need::All(needs) => {
            let mut out: Vec<String> = Vec::new();
            for term in needs.iter().flat_map(required_terms) {
                if !out.contains(&term) {
                    out.push(term);
                }
            }
            out
        }
        Need::OneOf(needs) => {
            let mut sets = needs.iter().map(required_terms);
            let first = sets.next().unwrap_or_default();
            sets.fold(first, |acc, terms| {
                acc.into_iter().filter(|t| terms.contains(t)).collect()
            })
        }
    }
}

/// Some of `terms`, spread over them (every `step`-th and the last), ANDed.
fn render_terms(terms: &[String], budget: &mut usize) -> Option<String> {
    let cap = TERMS_PER_STRING.min(*budget);
    if terms.is_empty() || cap == 0 {
        return None;
    }
    let step = terms.len().div_ceil(cap).max(1);
    let mut picked: Vec<&String> = terms.iter().step_by(step).collect();
    if let Some(last) = terms.last()
        && !picked.contains(&last)
        && picked.len() < *budget
    {
        picked.push(last);
    }
    *budget -= picked.len();
    let quoted: Vec<String> = picked.iter().map(|t| format!("\"{t}\"")).collect();
    Some(group(&quoted, " AND "))
}

fn group(parts: &[String], op: &str) -> String {
    if parts.len() == 1 {
        parts[0].clone()
    } else {
        format!("({})", parts.join(op))
    }
}

#[cfg(test)]
mod tests {
    use super::{Need, fts_query, required};

    fn contains(s: &str) -> Need {
        Need::Contains(s.to_string())
    }

    #[test]
    fn escapes_flags_and_empty_repeats_give_the_literal_they_spell() {
        assert_eq!(required(r"\x41BCDEF", false), contains("abcdef"));
        assert_eq!(required(r"helloX{0}world", false), contains("helloworld"));
        assert_eq!(required(r"(?x) h e l l o", false), contains("hello"));
        assert_eq!(required(r"\pLxyz", false), contains("xyz"));
        assert_eq!(required(r"^foo$", false), contains("foo"));
    }

    #[test]
    fn case_insensitive_patterns_fold_to_one_spelling_except_true_variants() {
        assert_eq!(required("HeLLo", true), contains("hello"));
        // 's' also matches 'ſ' (U+017F), which does not fold to 's': both are needed.
        assert_eq!(
            required("ase", true),
            Need::OneOf(vec![contains("ase"), contains("aſe")])
        );
    }

    #[test]
    fn optional_and_alternative_parts_are_not_required() {
        assert_eq!(
            required(r"fn\s+parse_\w+", false),
            Need::All(vec![contains("fn"), contains("parse_")])
        );
        assert_eq!(
            required("foo|bar", false),
            Need::OneOf(vec![contains("bar"), contains("foo")])
        );
        assert_eq!(required("foo|.*", false), Need::Any);
        assert_eq!(
            required("abcd?e", false),
            Need::OneOf(vec![contains("abcde"), contains("abce")])
        );
        assert_eq!(
            required(r"(abc)+x", false),
            Need::All(vec![contains("abc"), contains("x")])
        );
        assert_eq!(required(r"a*", false), Need::Any);
    }

    #[test]
    fn queries_and_or_the_trigram_terms_and_narrow_nothing_when_unsure() {
        assert_eq!(
            fts_query(&contains("Parse")),
            Some(r#"("par" AND "ars" AND "rse")"#.into())
        );
        assert_eq!(fts_query(&contains("ab")), None);
        assert_eq!(fts_query(&required("foo|ab", false)), None);
        assert_eq!(
            fts_query(&required("foo|bar", false)),
            Some(r#"("bar" OR "foo")"#.into())
        );
    }

    #[test]
    fn alternatives_too_many_to_query_still_need_their_common_terms() {
        // Each 's' is also 'ſ' case-insensitively: 2^6 spellings, each its own terms.
        let query = fts_query(&required("sassafras_ss", true)).unwrap();
        assert!(query.contains("\"fra\""), "{query}");
        assert!(!query.contains("OR"), "{query}");
    }

    #[test]
    fn many_literal_runs_stay_within_the_term_budget() {
        let pattern: String = (0..30).map(|i| format!("run{i:02}x.")).collect();
        let query = fts_query(&required(&pattern, false)).unwrap();
        assert!(
            query.matches('"').count() / 2 <= super::MAX_TERMS,
            "{query}"
        );
        let long = "x".repeat(10) + "abcdefghijklmnopqrstuvwxyz0123456789";
        let query = fts_query(&contains(&long)).unwrap();
        assert!(query.matches('"').count() / 2 <= super::TERMS_PER_STRING + 1);
    }
}
