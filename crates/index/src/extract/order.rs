//! One order for a file's definitions, whoever produced them: by first byte, an
//! enclosing definition before what it encloses. The extractor emits some definitions
//! out of document order (a Rust macro's body is parsed after the file), and the index
//! keeps a definition's row id across syncs; a reader that compares two lists of
//! definitions (a diff's two sides, one extracted and one read from the index) needs
//! both in the same order, with `parent` pointing into it.

use super::Symbol;

/// `symbols` (parents given as positions in it) in document order: by first byte, then
/// the longer span first, then the shallower one (a definition spanning exactly its
/// parent's bytes follows it); `parent` renumbered to match. A parent position out of
/// range is dropped, and so is a parent chain longer than the list (a cycle).
pub fn in_document_order(symbols: Vec<Symbol>) -> Vec<Symbol> {
    let n = symbols.len();
    let depth = |mut i: usize| {
        let mut d = 0usize;
        while let Some(p) = symbols[i].parent.map(|p| p as usize).filter(|&p| p < n) {
            d += 1;
            if d > n {
                break;
            }
            i = p;
        }
        d
    };
    let mut order: Vec<usize> = (0..n).collect();
    let depths: Vec<usize> = (0..n).map(depth).collect();
    order.sort_by_key(|&i| {
        let s = &symbols[i].span;
        (s.start_byte, std::cmp::Reverse(s.end_byte), depths[i], i)
    });
    let mut position = vec![0u32; n];
    for (at, &i) in order.iter().enumerate() {
        position[i] = at as u32;
    }
    let mut slots: Vec<Option<Symbol>> = symbols.into_iter().map(Some).collect();
    order
        .into_iter()
        .map(|i| {
            let mut s = slots[i].take().expect("each position is taken once");
            s.parent = s
                .parent
                .filter(|&p| (p as usize) < n && depths[i] <= n)
                .map(|p| position[p as usize]);
            s
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Lang;

    fn names(symbols: &[Symbol]) -> Vec<(&str, Option<&str>)> {
        symbols
            .iter()
            .map(|s| {
                let parent = s.parent.map(|p| symbols[p as usize].name.as_str());
                (s.name.as_str(), parent)
            })
            .collect()
    }

    #[test]
    fn parents_keep_their_children_when_the_list_is_reordered() {
        let src = "mod m {\n    fn a() {}\n    fn b() {}\n}\nfn c() {}\n";
        let facts = crate::extract::extract(Lang::Rust, src).unwrap();
        let mut reversed = facts.symbols.clone();
        reversed.reverse();
        let n = reversed.len() as u32;
        for s in &mut reversed {
            s.parent = s.parent.map(|p| n - 1 - p);
        }
        let ordered = in_document_order(reversed);
        assert_eq!(
            names(&ordered),
            [("m", None), ("a", Some("m")), ("b", Some("m")), ("c", None)]
        );
        assert_eq!(in_document_order(facts.symbols.clone()), facts.symbols);
    }

    #[test]
    fn a_child_with_its_parents_span_follows_it_and_a_cycle_loses_its_parents() {
        let src = "fn a() {}\n";
        let one = crate::extract::extract(Lang::Rust, src).unwrap().symbols[0].clone();
        let mut parent = one.clone();
        parent.name = "outer".into();
        parent.parent = None;
        let mut child = one.clone();
        child.name = "inner".into();
        child.parent = Some(1);
        let ordered = in_document_order(vec![child.clone(), parent]);
        assert_eq!(names(&ordered), [("outer", None), ("inner", Some("outer"))]);

        let mut x = one.clone();
        x.parent = Some(1);
        let mut y = one;
        y.parent = Some(0);
        let ordered = in_document_order(vec![x, y]);
        assert!(ordered.iter().all(|s| s.parent.is_none()), "{ordered:?}");
    }
}
