//! The measurement: runs ctags and loci's extractor over one corpus, matches ctags'
//! definitions to loci's by (file, line, name), and reports recall per kind for each
//! half of the corpus (see [`super::trees::Half`]). Only the tune half's misses are
//! shown or written, so what gets fixed is chosen without looking at the held-out half.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use loci_index::Lang;
use loci_index::extract::extract;

use super::trees::{Half, Source};

const CTAGS_HINT: &str = "this test needs universal-ctags: install it with \
     `apt-get install universal-ctags` (the .ci/run script does), or put a `ctags` \
     built from https://github.com/universal-ctags/ctags on PATH";

/// A gap between the halves larger than this many points means the rules were shaped
/// by the tune half's files rather than by the language.
const OVERFIT_POINTS: f64 = 5.0;

/// One tree (or several) of one language to compare on.
pub struct Corpus {
    /// The language, for the report and the misses file's name.
    pub label: &'static str,
    /// The language a file is read as when its name does not tell (`Lang::detect`).
    pub lang: Lang,
    /// ctags' name for the language (`--language-force`).
    pub ctags_lang: &'static str,
    /// ctags' kind letters to compare (`--kinds-<lang>=`).
    pub ctags_kinds: &'static str,
    /// The same kinds by the long names ctags prints (other kinds are dropped, whatever
    /// the ctags version enables by default).
    pub kind_names: &'static [&'static str],
    /// Which of loci's lines ctags' line may be on.
    pub line_match: LineMatch,
    /// The sampled files, each with the half it belongs to.
    pub files: Vec<Source>,
    /// Rules for ctags definitions that are not definitions in loci's sense, left out
    /// (and counted, per rule).
    pub exclude: Vec<Exclusion>,
    /// Whether same-named functions or methods of one kind in one scope of one file are
    /// one definition: TypeScript's overload signatures and their implementation, which
    /// loci records once (the implementation stands for them all, so that calls reach
    /// one definition) and ctags once per signature. The one definition is found when
    /// loci has it at any of their lines.
    pub overloads_once: bool,
}

/// Where in loci's definition ctags' line (the line of the name) may fall.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum LineMatch {
    /// On loci's first line.
    First,
    /// In the head of loci's definition: from its first line up to the line that opens
    /// its body or ends it (`;`). Java's annotations (`@Override`) start a method or
    /// class on lines before its name.
    Head,
    /// Anywhere in loci's span: C puts return types and `typedef struct {` on lines
    /// before the name ctags reports, and `} Name;` after the body.
    Span,
}

/// A rule for ctags tags that are not compared: of these kinds, at a (line, name) that
/// `find` gives for the file's text. The rule reads the source, never loci's output.
pub struct Exclusion {
    /// What the excluded tags are, for the report.
    pub what: &'static str,
    /// The ctags kinds it applies to.
    pub kinds: &'static [&'static str],
    /// (line, name) of what the rule leaves out in one file's text.
    pub find: fn(&str) -> HashSet<(u32, String)>,
}

/// Matched and total ctags definitions of one half, per kind.
#[derive(Default)]
pub struct Figures {
    /// kind -> (total, matched).
    per_kind: BTreeMap<String, (usize, usize)>,
    /// Matched on loci's first line only (what [`LineMatch`] relaxes).
    strict: usize,
    files: usize,
    /// ctags tags left out by each of the corpus's [`Exclusion`]s (in their order; a
    /// tag two rules leave out counts for the first).
    excluded: Vec<usize>,
}

impl Figures {
    fn total(&self) -> (usize, usize) {
        self.per_kind
            .values()
            .fold((0, 0), |(n, m), (kn, km)| (n + kn, m + km))
    }

    /// Matched / total (1.0 when ctags found nothing).
    pub fn recall(&self) -> f64 {
        let (n, m) = self.total();
        if n == 0 { 1.0 } else { m as f64 / n as f64 }
    }
}

/// Both halves' figures.
pub struct Recall {
    /// The half whose misses were looked at.
    pub tune: Figures,
    /// The half no rule was shaped by: what the tests assert on.
    pub held_out: Figures,
}

impl Recall {
    /// Fails unless the held-out half's recall is at least `floor`.
    pub fn assert_held_out_at_least(&self, label: &str, floor: f64) {
        let recall = self.held_out.recall();
        assert!(
            recall >= floor,
            "{label}: held-out recall of ctags' definitions {:.2}% is below {:.0}%",
            recall * 100.0,
            floor * 100.0
        );
    }
}

/// Prints per-kind recall of ctags' definitions, by half; returns both halves' figures.
pub fn measure(ctags: &Path, corpus: &Corpus) -> Recall {
    let half_of: HashMap<String, Half> = corpus
        .files
        .iter()
        .map(|f| (f.path.to_string_lossy().into_owned(), f.half))
        .collect();
    let mut expected = run_ctags(ctags, corpus);
    let excluded = excluded_tags(corpus, &mut expected);
    if corpus.overloads_once {
        expected = overloads_once(expected);
    }
    let (found, spans, loci_symbols) = loci_definitions(corpus);
    let strict = |tag: &Tag| {
        tag.lines()
            .any(|line| found.contains(&(tag.path.clone(), line, tag.name.clone())))
    };
    let matches = |tag: &Tag| {
        strict(tag)
            || (corpus.line_match != LineMatch::First
                && spans
                    .get(&(tag.path.clone(), tag.name.clone()))
                    .is_some_and(|s| {
                        s.iter()
                            .any(|(start, end)| tag.lines().any(|l| (*start..=*end).contains(&l)))
                    }))
    };

    let mut recall = Recall {
        tune: Figures::default(),
        held_out: Figures::default(),
    };
    for file in &corpus.files {
        figures(&mut recall, file.half).files += 1;
    }
    for fig in [&mut recall.tune, &mut recall.held_out] {
        fig.excluded = vec![0; corpus.exclude.len()];
    }
    for (rule, tag) in &excluded {
        let half = half_of.get(&tag.path).copied().unwrap_or(Half::Tune);
        figures(&mut recall, half).excluded[*rule] += 1;
    }
    let mut tune_misses: Vec<&Tag> = Vec::new();
    for tag in &expected {
        let half = half_of.get(&tag.path).copied().unwrap_or(Half::Tune);
        let hit = matches(tag);
        let fig = figures(&mut recall, half);
        let entry = fig.per_kind.entry(tag.kind.clone()).or_default();
        entry.0 += 1;
        if hit {
            entry.1 += 1;
        }
        if strict(tag) {
            fig.strict += 1;
        }
        if !hit && half == Half::Tune {
            tune_misses.push(tag);
        }
    }
    if let Some(dump) = std::env::var_os("LOCI_RECALL_MISSES") {
        write_misses(&PathBuf::from(dump), corpus.label, &tune_misses);
    }
    report(corpus, &recall, expected.len(), loci_symbols, &tune_misses);
    recall
}

/// Removes from `tags` those one of the corpus's exclusion rules leaves out; returns
/// them, each with the index of the first rule that left it out.
fn excluded_tags(corpus: &Corpus, tags: &mut Vec<Tag>) -> Vec<(usize, Tag)> {
    let mut out = Vec::new();
    // Each file is read once, whatever the number of rules that look at it.
    let mut sources: HashMap<String, String> = HashMap::new();
    for (index, rule) in corpus.exclude.iter().enumerate() {
        let mut per_file: HashMap<String, HashSet<(u32, String)>> = HashMap::new();
        let (left_out, kept): (Vec<Tag>, Vec<Tag>) =
            std::mem::take(tags).into_iter().partition(|tag| {
                if !rule.kinds.contains(&tag.kind.as_str()) {
                    return false;
                }
                let found = per_file.entry(tag.path.clone()).or_insert_with(|| {
                    let source = sources.entry(tag.path.clone()).or_insert_with(|| {
                        let bytes = std::fs::read(&tag.path).unwrap_or_default();
                        String::from_utf8_lossy(&bytes).into_owned()
                    });
                    (rule.find)(source)
                });
                found.contains(&(tag.line, tag.name.clone()))
            });
        *tags = kept;
        out.extend(left_out.into_iter().map(|tag| (index, tag)));
    }
    out
}

fn figures(recall: &mut Recall, half: Half) -> &mut Figures {
    match half {
        Half::Tune => &mut recall.tune,
        Half::HeldOut => &mut recall.held_out,
    }
}

/// (path, line, name) of every loci definition, (path, name) -> spans, and their count.
type Found = (
    HashSet<(String, u32, String)>,
    HashMap<(String, String), Vec<(u32, u32)>>,
    usize,
);

fn loci_definitions(corpus: &Corpus) -> Found {
    let mut found = HashSet::new();
    let mut spans: HashMap<(String, String), Vec<(u32, u32)>> = HashMap::new();
    let mut count = 0;
    for file in &corpus.files {
        let bytes = std::fs::read(&file.path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", file.path.display()));
        let source = String::from_utf8_lossy(&bytes);
        let lang = Lang::detect(&file.path, &bytes)
            .unwrap_or(corpus.lang)
            .for_content(&file.path, &source);
        let facts =
            extract(lang, &source).unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
        let path = file.path.to_string_lossy().into_owned();
        let lines: Vec<&str> = source.lines().collect();
        for symbol in facts.symbols {
            count += 1;
            let name = comparable(&symbol.name).to_string();
            let (start, end) = (symbol.span.start_line, symbol.span.end_line);
            let end = match corpus.line_match {
                LineMatch::Head => head_end(&lines, start, end),
                _ => end,
            };
            spans
                .entry((path.clone(), name.clone()))
                .or_default()
                .push((start, end));
            found.insert((path.clone(), symbol.span.start_line, name));
        }
    }
    (found, spans, count)
}

/// The last line of the head of the definition on lines `start..=end` (1-based): the
/// first line after which a brace stays open (the body) or on which a `;` ends it at
/// the top level; annotations' own braces and parentheses (`@Foo({"a"})`) close on it.
fn head_end(lines: &[&str], start: u32, end: u32) -> u32 {
    let mut depth = 0i32;
    for line in start..=end {
        let Some(text) = lines.get(line as usize - 1) else {
            return end;
        };
        for c in text.chars() {
            match c {
                '{' | '(' => depth += 1,
                '}' | ')' => depth -= 1,
                ';' if depth == 0 => return line,
                _ => {}
            }
        }
        if depth > 0 && text.contains('{') {
            return line;
        }
    }
    end
}

/// Every tune-half miss to `<dir>/<label>.misses`, one `kind path:line name` a line.
fn write_misses(dir: &Path, label: &str, misses: &[&Tag]) {
    let mut out = String::new();
    for tag in misses {
        out.push_str(&format!(
            "{} {}:{} {}\n",
            tag.kind, tag.path, tag.line, tag.name
        ));
    }
    let path = dir.join(format!("{label}.misses"));
    std::fs::write(&path, out).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

fn report(
    corpus: &Corpus,
    recall: &Recall,
    ctags_defs: usize,
    loci_symbols: usize,
    misses: &[&Tag],
) {
    let mut out = format!(
        "{}: {} files (tune {}, held-out {}), {ctags_defs} ctags definitions, {loci_symbols} loci symbols (all kinds)\n",
        corpus.label,
        corpus.files.len(),
        recall.tune.files,
        recall.held_out.files,
    );
    out.push_str(&format!(
        "  {:<16} {:>24} {:>24}\n",
        "kind", "tune", "held-out"
    ));
    let kinds: Vec<&String> = recall
        .tune
        .per_kind
        .keys()
        .chain(recall.held_out.per_kind.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let cell = |f: &Figures, kind: &str| {
        let (n, m) = f.per_kind.get(kind).copied().unwrap_or_default();
        format!(
            "{m:>6} / {n:<6} {:>7.2}%",
            100.0 * m as f64 / n.max(1) as f64
        )
    };
    for kind in kinds {
        out.push_str(&format!(
            "  {kind:<16} {:>24} {:>24}\n",
            cell(&recall.tune, kind),
            cell(&recall.held_out, kind)
        ));
    }
    let total = |f: &Figures| {
        let (n, m) = f.total();
        format!("{m:>6} / {n:<6} {:>7.2}%", 100.0 * f.recall())
    };
    out.push_str(&format!(
        "  {:<16} {:>24} {:>24}\n",
        "total",
        total(&recall.tune),
        total(&recall.held_out)
    ));
    let gap = 100.0 * (recall.tune.recall() - recall.held_out.recall());
    out.push_str(&format!(
        "  gap (tune - held-out): {gap:+.2} points{}\n",
        if gap.abs() > OVERFIT_POINTS {
            " — over 5 points: the rules may fit the tune half's files"
        } else {
            ""
        }
    ));
    for (index, rule) in corpus.exclude.iter().enumerate() {
        out.push_str(&format!(
            "  not compared ({}): tune {}, held-out {}\n",
            rule.what, recall.tune.excluded[index], recall.held_out.excluded[index]
        ));
    }
    if corpus.line_match != LineMatch::First {
        let strict = |f: &Figures| 100.0 * f.strict as f64 / f.total().0.max(1) as f64;
        out.push_str(&format!(
            "  (ctags' line inside loci's span; on loci's first line only: tune {:.2}%, held-out {:.2}%)\n",
            strict(&recall.tune),
            strict(&recall.held_out)
        ));
    }
    for miss in misses.iter().take(12) {
        out.push_str(&format!(
            "      tune miss: {} {}:{} {}\n",
            miss.kind, miss.path, miss.line, miss.name
        ));
    }
    eprint!("{out}");
}

struct Tag {
    path: String,
    line: u32,
    name: String,
    kind: String,
    /// The enclosing scope ctags names (a class, a function), or empty.
    scope: String,
    /// The lines of the overloads folded into this tag ([`Corpus::overloads_once`]).
    overloads: Vec<u32>,
}

impl Tag {
    /// The line ctags gives and those of the overloads folded into it.
    fn lines(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::once(self.line).chain(self.overloads.iter().copied())
    }
}

/// Functions and methods of one name, kind and scope in one file, folded into the first.
fn overloads_once(tags: Vec<Tag>) -> Vec<Tag> {
    let mut out: Vec<Tag> = Vec::with_capacity(tags.len());
    let mut first: HashMap<(String, String, String, String), usize> = HashMap::new();
    for tag in tags {
        if !matches!(tag.kind.as_str(), "function" | "method") {
            out.push(tag);
            continue;
        }
        let key = (
            tag.path.clone(),
            tag.kind.clone(),
            tag.name.clone(),
            tag.scope.clone(),
        );
        match first.get(&key) {
            Some(&i) => out[i].overloads.push(tag.line),
            None => {
                first.insert(key, out.len());
                out.push(tag);
            }
        }
    }
    out
}

fn run_ctags(ctags: &Path, corpus: &Corpus) -> Vec<Tag> {
    let mut child = Command::new(ctags)
        .args([
            "--output-format=json",
            "--fields=+nKz",
            &format!("--language-force={}", corpus.ctags_lang),
            &format!("--kinds-{}={}", corpus.ctags_lang, corpus.ctags_kinds),
            "-L",
            "-",
            "-f",
            "-",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; {CTAGS_HINT}", ctags.display()));
    let mut list = String::new();
    for file in &corpus.files {
        list.push_str(&file.path.to_string_lossy());
        list.push('\n');
    }
    let mut stdin = child.stdin.take().expect("piped stdin");
    // Written from a thread so a large output cannot deadlock against a full input pipe.
    let writer = std::thread::spawn(move || stdin.write_all(list.as_bytes()));
    let output = child.wait_with_output().expect("ctags output");
    writer
        .join()
        .expect("writer thread")
        .expect("write the file list to ctags");
    assert!(
        output.status.success(),
        "ctags failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut tags = Vec::new();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if value["_type"] != "tag" {
            continue;
        }
        let name = comparable(value["name"].as_str().unwrap_or_default()).to_string();
        // ctags names anonymous structs, classes and functions (`__anon<hash>`,
        // `AnonymousFunction<hash>`, a Kotlin lambda's `<lambda>`); loci does not
        // record what has no name.
        if name.starts_with("__anon")
            || name.starts_with("AnonymousClass")
            || name.starts_with("AnonymousFunction")
            || name == "<lambda>"
        {
            continue;
        }
        let kind = value["kind"].as_str().unwrap_or_default().to_string();
        if !corpus.kind_names.contains(&kind.as_str())
            || unread_name(&value, corpus.ctags_lang == "Kotlin")
        {
            continue;
        }
        // A C# explicit interface implementation, `IEnumerable.GetEnumerator` to ctags,
        // is the method `GetEnumerator` (what a call through the interface names).
        let name = match (corpus.ctags_lang, kind.as_str()) {
            ("C#", "method") => name.rsplit('.').next().unwrap_or(&name).to_string(),
            _ => name,
        };
        tags.push(Tag {
            path: value["path"].as_str().unwrap_or_default().to_string(),
            line: value["line"].as_u64().unwrap_or(0) as u32,
            name,
            kind,
            scope: value["scope"].as_str().unwrap_or_default().to_string(),
            overloads: Vec::new(),
        });
    }
    tags
}

/// Whether ctags made up the tag's name or its scope's: its Kotlin parser (5.9) names a
/// function with a backquoted name (`` fun `is`() ``) from memory it never filled, so that
/// run after run the same file gives such a function and what is inside it a name of
/// control characters or other bytes (`ɼc'WV`), an empty one (a tag with a `scopeKind`
/// but no `scope`), or nothing. In Kotlin a name or scope of anything but ASCII letters,
/// digits, `_`, `$`, `.` and `<lambda>`'s brackets is taken as made up (a Kotlin name of
/// other letters, rare, is then not compared); elsewhere, one with a control character.
fn unread_name(tag: &serde_json::Value, kotlin: bool) -> bool {
    let made_up = |field: &str| {
        tag[field].as_str().is_some_and(|s| {
            s.chars().any(|c| {
                c.is_control() || (kotlin && !(c.is_ascii_alphanumeric() || "_$.<>".contains(c)))
            })
        })
    };
    let lost_scope =
        tag["scopeKind"].is_string() && tag["scope"].as_str().is_none_or(str::is_empty);
    made_up("name") || made_up("scope") || lost_scope
}

/// A definition's name as compared: C++ operators are written differently by ctags
/// (`operator ()`, `operator basic_string_view<Char>`) and loci (`operator()`, the
/// conversion's type without its arguments), so any operator is `operator` (the line
/// still has to match); ctags drops the `#` of a JavaScript private member (`#adopt`),
/// which loci keeps because `this.#adopt()` names it so.
fn comparable(name: &str) -> &str {
    let name = name.strip_prefix('#').unwrap_or(name);
    if name.starts_with("operator")
        && !name[8..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
    {
        "operator"
    } else {
        name
    }
}

/// universal-ctags, or a failure that says how to install it.
pub fn ctags() -> PathBuf {
    let candidates = [PathBuf::from("/usr/bin/ctags"), PathBuf::from("ctags")];
    for candidate in candidates {
        if let Ok(out) = Command::new(&candidate).arg("--version").output()
            && String::from_utf8_lossy(&out.stdout).contains("Universal Ctags")
        {
            return candidate;
        }
    }
    panic!("no universal-ctags found at /usr/bin/ctags or on PATH; {CTAGS_HINT}");
}
