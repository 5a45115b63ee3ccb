//! Which definitions a side's changed lines touch: a line belongs to the innermost
//! definition whose span holds it, so an edit inside a method touches the method, not
//! its class, and a new field between two methods touches the class.

use loci_git::LineRange;
use loci_index::extract::Symbol;

/// For each of `symbols` (a file's definitions, parents before children), whether one
/// of `ranges` (the side's removed or added lines) meets a line of its own: inside its
/// span and outside every child's.
pub(super) fn touched(symbols: &[Symbol], ranges: &[LineRange]) -> Vec<bool> {
    let mut children: Vec<Vec<(u32, u32)>> = vec![Vec::new(); symbols.len()];
    for s in symbols {
        if let Some(p) = s.parent.and_then(|p| children.get_mut(p as usize)) {
            p.push((s.span.start_line, s.span.end_line));
        }
    }
    for c in &mut children {
        c.sort_unstable();
    }
    symbols
        .iter()
        .zip(&children)
        .map(|(s, kids)| {
            let (start, end) = (s.span.start_line, s.span.end_line);
            ranges
                .iter()
                .filter(|r| r.overlaps(start, end))
                .any(|r| has_own_line(r.start.max(start), r.end.min(end), kids))
        })
        .collect()
}

/// Whether `lo..=hi` keeps a line once the (sorted) child spans are taken out.
fn has_own_line(lo: u32, hi: u32, kids: &[(u32, u32)]) -> bool {
    let mut next = lo;
    for &(start, end) in kids {
        if end < next {
            continue;
        }
        if start > hi {
            break;
        }
        if start > next {
            return true;
        }
        next = next.max(end.saturating_add(1));
        if next > hi {
            return false;
        }
    }
    next <= hi
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ranges(list: &[(u32, u32)]) -> Vec<LineRange> {
        list.iter()
            .map(|&(start, end)| LineRange { start, end })
            .collect()
    }

    #[test]
    fn a_line_belongs_to_the_innermost_definition() {
        let source =
            "struct S;\nimpl S {\n    fn a() {\n        1;\n    }\n\n    fn b() {}\n}\nfn c() {}\n";
        let facts = loci_index::extract::extract(loci_index::Lang::Rust, source).unwrap();
        let names: Vec<&str> = facts
            .symbols
            .iter()
            .map(|s| s.qualified_name.as_str())
            .collect();
        let hit = |list: &[(u32, u32)]| -> Vec<&str> {
            touched(&facts.symbols, &ranges(list))
                .iter()
                .zip(&names)
                .filter(|(t, _)| **t)
                .map(|(_, n)| *n)
                .collect()
        };
        assert_eq!(hit(&[(4, 4)]), ["S::a"], "{names:?}");
        assert!(
            !hit(&[(6, 6)]).contains(&"S::a"),
            "a blank line between methods"
        );
        assert_eq!(hit(&[(9, 9)]), ["c"]);
        assert!(hit(&[(10, 12)]).is_empty(), "past every definition");
        assert_eq!(hit(&[(3, 4), (9, 9)]), ["S::a", "c"]);
    }

    #[test]
    fn own_lines_skip_children() {
        assert!(!has_own_line(3, 5, &[(3, 5)]));
        assert!(has_own_line(3, 6, &[(3, 5)]));
        assert!(has_own_line(2, 5, &[(3, 5)]));
        assert!(!has_own_line(3, 8, &[(3, 5), (6, 8)]));
        assert!(has_own_line(3, 9, &[(3, 5), (7, 8)]));
    }
}
