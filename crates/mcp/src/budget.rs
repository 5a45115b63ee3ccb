//! Output budgets: every result, its structured content and its text together, fits the
//! call's `max_chars` (default [`DEFAULT_MAX_CHARS`], about 5k tokens under Claude
//! Code's 25k-token cap on one result). A list keeps its order (most relevant first),
//! stops at the item that would overflow, and says how many more exist and the cursor
//! that continues right after the last item shown.

use serde_json::{Map, Value, json};

/// The budget of a result when the call names none.
pub const DEFAULT_MAX_CHARS: usize = 20_000;
/// The smallest budget a call may ask for (room for the envelope and one item).
pub const MIN_MAX_CHARS: usize = 1_000;
/// The largest budget a call may ask for.
pub const MAX_MAX_CHARS: usize = 200_000;
/// Room kept for numbers that grow while the page fields are filled in.
const SLACK: usize = 96;

/// One page of a list, before it is fitted to the budget.
#[derive(Debug, Default)]
pub struct Listing {
    /// The list's name in the structured content (`symbols`, `hits`, ...).
    pub key: &'static str,
    /// The items, most relevant first.
    pub items: Vec<Value>,
    /// One short text line per item.
    pub lines: Vec<String>,
    /// Where the page starts in the whole list (the cursor it was asked with).
    pub offset: usize,
    /// Items in the whole list (a lower bound unless `exact`).
    pub total: u64,
    /// Whether `total` is exact.
    pub exact: bool,
    /// Other fields of the structured content (the target, the engine...).
    pub head: Map<String, Value>,
    /// The text rendering's first line.
    pub title: String,
}

/// A result ready to send: its structured content and its text rendering.
#[derive(Debug)]
pub struct Fitted {
    /// The structured content.
    pub structured: Value,
    /// The text rendering.
    pub text: String,
}

/// The size a result counts against its budget: its structured content serialized, and
/// its text.
pub fn size(structured: &Value, text: &str) -> usize {
    structured.to_string().len() + text.len()
}

/// Fits `list` into `max_chars`, with `extra` (the index note, notices) added to the
/// structured content and `tail` (their text) to the text.
pub fn fit(list: Listing, extra: Map<String, Value>, tail: &str, max_chars: usize) -> Fitted {
    let Listing {
        key,
        items,
        lines,
        offset,
        total,
        exact,
        head,
        title,
    } = list;
    let assemble = |shown: Vec<Value>, text_lines: &[String], cut: bool| -> Fitted {
        let n = shown.len();
        let after = offset + n;
        let more = total.saturating_sub(after as u64);
        let has_more = more > 0 || cut;
        let mut page = Map::new();
        page.insert("shown".into(), json!(n));
        page.insert("total".into(), json!(total));
        page.insert("total_exact".into(), json!(exact));
        page.insert("more".into(), json!(more));
        if has_more {
            page.insert("next_cursor".into(), json!(after.to_string()));
        }
        page.insert("cut_by_budget".into(), json!(cut));
        let mut obj = head.clone();
        obj.insert(key.into(), Value::Array(shown));
        obj.insert("page".into(), Value::Object(page));
        obj.extend(extra.clone());
        let mut text = title.clone();
        let total_text = if exact {
            total.to_string()
        } else {
            format!("at least {total}")
        };
        text.push_str(&format!(" ({n} shown of {total_text}"));
        if has_more {
            text.push_str(&format!("; {more} more: pass cursor \"{after}\""));
        }
        text.push(')');
        for l in text_lines {
            text.push('\n');
            text.push_str(l);
        }
        if !tail.is_empty() {
            text.push('\n');
            text.push_str(tail);
        }
        Fitted {
            structured: Value::Object(obj),
            text,
        }
    };
    let empty = assemble(Vec::new(), &[], false);
    let mut used = size(&empty.structured, &empty.text) + SLACK;
    let mut keep = 0;
    for (item, line) in items.iter().zip(&lines) {
        let cost = item.to_string().len() + 1 + line.len() + 1;
        if used + cost > max_chars {
            break;
        }
        used += cost;
        keep += 1;
    }
    let cut = keep < items.len();
    let (mut items, mut lines) = (items, lines);
    items.truncate(keep);
    lines.truncate(keep);
    let mut fitted = assemble(items, &lines, cut);
    // The estimate is conservative; should it ever miss, drop items until it fits.
    while size(&fitted.structured, &fitted.text) > max_chars && !lines.is_empty() {
        lines.pop();
        let shown: Vec<Value> = fitted.structured[key]
            .as_array()
            .map(|a| a[..lines.len()].to_vec())
            .unwrap_or_default();
        fitted = assemble(shown, &lines, true);
    }
    fitted
}

/// Fits a single answer: `structured` as is, its text cut to what the budget leaves.
pub fn fit_one(
    mut structured: Value,
    text: String,
    extra: Map<String, Value>,
    tail: &str,
    max_chars: usize,
) -> Fitted {
    if let Value::Object(obj) = &mut structured {
        obj.extend(extra);
    }
    let mut text = text;
    if !tail.is_empty() {
        text.push('\n');
        text.push_str(tail);
    }
    let room = max_chars.saturating_sub(structured.to_string().len());
    if text.len() > room {
        let mut end = room.saturating_sub(20);
        while end > 0 && !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[cut by budget]");
    }
    Fitted { structured, text }
}

/// Cuts `s` to at most `max` characters, marking the cut.
pub fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listing(n: usize) -> Listing {
        Listing {
            key: "items",
            items: (0..n)
                .map(|i| json!({"name": format!("item_{i:05}"), "path": "src/some/long/path.rs"}))
                .collect(),
            lines: (0..n)
                .map(|i| format!("src/some/long/path.rs:{i} item_{i:05}"))
                .collect(),
            offset: 10,
            total: (10 + n) as u64,
            exact: true,
            head: Map::new(),
            title: "items".into(),
        }
    }

    #[test]
    fn a_huge_list_fits_its_budget_and_says_where_to_continue() {
        for budget in [MIN_MAX_CHARS, 5_000, DEFAULT_MAX_CHARS] {
            let f = fit(listing(5_000), Map::new(), "", budget);
            assert!(size(&f.structured, &f.text) <= budget, "{budget}");
            let page = &f.structured["page"];
            let shown = page["shown"].as_u64().unwrap();
            assert!(shown > 0 && shown < 5_000);
            assert_eq!(page["more"].as_u64().unwrap(), 5_000 - shown);
            assert_eq!(page["next_cursor"], json!((10 + shown).to_string()));
            assert_eq!(page["cut_by_budget"], json!(true));
        }
    }

    #[test]
    fn a_list_within_budget_is_whole_and_has_no_cursor() {
        let f = fit(listing(3), Map::new(), "", DEFAULT_MAX_CHARS);
        assert_eq!(f.structured["page"]["shown"], json!(3));
        assert!(f.structured["page"].get("next_cursor").is_none());
        assert_eq!(f.structured["page"]["cut_by_budget"], json!(false));
    }
}
