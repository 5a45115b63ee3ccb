//! The passage of a memory's body that answers a recall: the line holding most of the
//! query's words, so an agent reads why a hit matters without another call.

/// Most characters a snippet holds.
pub const SNIPPET_CHARS: usize = 240;

/// The line of `body` holding most of `terms` (lower-case words, as
/// [`crate::recall::query_terms`] gives them), else the first line that is not blank,
/// cut to [`SNIPPET_CHARS`] around its first matching word; `None` for a blank body.
pub fn snippet(body: &str, terms: &[String]) -> Option<String> {
    let lines = || body.lines().map(str::trim).filter(|l| !l.is_empty());
    let score = |line: &str| {
        let lower = line.to_lowercase();
        terms.iter().filter(|t| lower.contains(t.as_str())).count()
    };
    let best = lines()
        .enumerate()
        .max_by_key(|(i, l)| (score(l), std::cmp::Reverse(*i)))
        .map(|(_, l)| l)?;
    let first_match = terms
        .iter()
        .filter_map(|t| find_ignoring_case(best, t))
        .min()
        .unwrap_or(0);
    Some(window(best, first_match))
}

/// The byte offset of `term` (lower case) in `line`, ignoring case: the line is
/// lower-cased once, each lowered byte mapped back to the character it came from (a
/// body's line may be 512 KiB long).
fn find_ignoring_case(line: &str, term: &str) -> Option<usize> {
    if term.is_empty() {
        return None;
    }
    let mut lower = String::with_capacity(line.len());
    let mut origin = Vec::with_capacity(line.len());
    for (i, ch) in line.char_indices() {
        lower.extend(ch.to_lowercase());
        origin.resize(lower.len(), i);
    }
    lower.find(term).map(|at| origin[at])
}

/// At most [`SNIPPET_CHARS`] characters of `line` around byte `at`, a `…` where cut.
fn window(line: &str, at: usize) -> String {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    if chars.len() <= SNIPPET_CHARS {
        return line.to_string();
    }
    let center = chars.partition_point(|(i, _)| *i < at);
    // A quarter of the room before the match, the rest after it.
    let start = center
        .saturating_sub(SNIPPET_CHARS / 4)
        .min(chars.len() - SNIPPET_CHARS);
    let end = start + SNIPPET_CHARS;
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(chars[start..end].iter().map(|(_, c)| c));
    if end < chars.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn the_line_with_most_query_words_is_the_snippet() {
        let body = "# Retry policy\n\nWe retry `fetch` three times.\nBackoff doubles: the retry waits 2^n s.\n";
        assert_eq!(
            snippet(body, &terms(&["retry", "backoff"])).unwrap(),
            "Backoff doubles: the retry waits 2^n s."
        );
        // Ties go to the earlier line; case does not matter.
        assert_eq!(
            snippet(body, &terms(&["fetch"])).unwrap(),
            "We retry `fetch` three times."
        );
    }

    #[test]
    fn without_a_matching_word_the_first_line_that_says_something() {
        assert_eq!(
            snippet("\n  \nfirst words\nsecond", &terms(&["absent"])).unwrap(),
            "first words"
        );
        assert_eq!(snippet("", &terms(&["x"])), None);
        assert_eq!(snippet(" \n\t\n", &[]), None);
    }

    #[test]
    fn a_long_line_is_cut_around_its_match_on_character_boundaries() {
        let line = format!("{}needle{}", "é".repeat(500), "ü".repeat(500));
        let s = snippet(&line, &terms(&["needle"])).unwrap();
        assert!(s.starts_with('…') && s.ends_with('…'), "{s}");
        assert!(s.contains("needle"));
        assert_eq!(s.chars().count(), SNIPPET_CHARS + 2);
        // A match at the very end keeps the window inside the line.
        let tail = format!("{}needle", "a".repeat(1000));
        let s = snippet(&tail, &terms(&["needle"])).unwrap();
        assert!(s.ends_with("needle") && s.starts_with('…'), "{s}");
        assert_eq!(s.chars().count(), SNIPPET_CHARS + 1);
    }

    #[test]
    fn a_match_is_found_in_one_pass_whatever_the_case_and_length() {
        // Letters whose lower case is longer (`İ` lowers to two characters) shift no
        // offset: the window is cut around the match in the original line.
        let line = format!("{}İx NEEDLE tail", "İ".repeat(200_000));
        let s = snippet(&line, &terms(&["needle"])).unwrap();
        assert!(s.contains("NEEDLE tail"), "{s}");
        assert_eq!(find_ignoring_case("aİB", "b"), Some(3));
        assert_eq!(find_ignoring_case("abc", "z"), None);
    }
}
