//! `impact` follows links resolution proved and leaves out those made by name alone
//! (a same-named definition elsewhere is no proof of a dependency), counting what it
//! left out; asked, it follows them too. Callers keep every link, each labelled.

use crate::common;

use loci_index::Confidence;
use loci_index::graph::{self, Graph};

const STORE: &str = "class Store:
    def frobnicate(self):
        return 1


def helper():
    return 2
";

/// `typed` calls through a receiver whose type is known; `guessed` through one whose
/// type nothing says (linked by the method's name alone); `direct` imports `helper`.
const USERS: &str = "from store import Store, helper


def typed():
    s = Store()
    return s.frobnicate()


def guessed(thing):
    return thing.frobnicate()


def direct():
    return helper()
";

#[test]
fn impact_leaves_out_links_made_by_name_alone_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    common::write_tree(dir.path(), &[("store.py", STORE), ("users.py", USERS)]);
    common::index(dir.path());
    let g = Graph::open(dir.path()).unwrap();

    let callers = graph::callers(&g, "Store.frobnicate", 1).unwrap();
    let labelled: Vec<(String, Confidence)> = callers
        .reached
        .iter()
        .map(|r| (r.symbol.as_ref().unwrap().name.clone(), r.confidence))
        .collect();
    assert!(
        labelled.contains(&("guessed".into(), Confidence::Name)),
        "{labelled:?}"
    );
    assert!(
        labelled
            .iter()
            .any(|(n, c)| n == "typed" && *c != Confidence::Name),
        "{labelled:?}"
    );

    let proven = graph::impact(&g, "Store.frobnicate", 1, false).unwrap();
    assert_eq!(common::reached_names(&proven), ["typed"], "{proven:?}");
    assert_eq!(proven.name_only_left_out, 1);
    let all = graph::impact(&g, "Store.frobnicate", 1, true).unwrap();
    assert_eq!(common::reached_names(&all), ["guessed", "typed"], "{all:?}");
    assert_eq!(all.name_only_left_out, 0);

    // A file's impact: the same rule for every definition in it; a node a proven link
    // also reaches is not counted as left out.
    let file = graph::impact(&g, "store.py", 1, false).unwrap();
    let names = common::reached_names(&file);
    assert!(names.contains(&"typed".to_string()), "{names:?}");
    assert!(names.contains(&"direct".to_string()), "{names:?}");
    assert!(!names.contains(&"guessed".to_string()), "{names:?}");
    assert_eq!(file.name_only_left_out, 1, "{file:?}");
}
