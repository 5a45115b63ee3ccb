//! Go selector calls. `q.F()` in Go is one of two things, and the file's imports tell
//! which: `q` names an imported package (`http.Handle(..)` after `import "net/http"`),
//! and `F` is one of that package's top-level definitions, never a method; or `q` is a
//! value (`mux.Handle(..)`), and `F` is a method, never a free function. The receiver
//! rule ([`super::Ctx::resolve_on`]) has already taken the values whose type the file
//! says; what reaches here has an unknown receiver or names a package.

use super::{Confidence, Ctx, Sym, SymbolKind};

/// What a Go selector's qualifier is.
pub(super) enum Selector<'i> {
    /// Not a Go selector (another language, no qualifier, a `self`-like one).
    NotGo,
    /// An imported package: the files its import names.
    Package(&'i [i64]),
    /// A value: only methods can answer.
    Value,
}

/// Whether `qualifier` is the name a Go import's package is used by: the alias, else
/// the path's last segment without a major version (`github.com/go-chi/chi/v5` →
/// `chi`), or that segment's words run together or its last word besides `go`
/// (`go-sqlite3` → `gosqlite3`, `sqlite3`; `yaml-go` → `yaml`).
fn package_matches(alias: Option<&str>, segs: &[&str], qualifier: &str) -> bool {
    if let Some(alias) = alias {
        return alias == qualifier;
    }
    let mut last = segs.iter().rev().copied();
    let Some(mut name) = last.next() else {
        return false;
    };
    if name.len() > 1
        && name.starts_with('v')
        && name[1..].bytes().all(|b| b.is_ascii_digit())
        && let Some(before) = last.next()
    {
        name = before;
    }
    if name == qualifier {
        return true;
    }
    let words: Vec<&str> = name
        .split(['-', '_', '.'])
        .filter(|w| !w.is_empty() && *w != "go")
        .collect();
    words.len() > 1 && words.concat() == qualifier
        || words.last() == Some(&qualifier)
        || name.starts_with("go-") && name[3..] == *qualifier
}

impl<'a> Ctx<'a> {
    /// Which kind of Go selector `qualifier` is in the file being resolved.
    pub(super) fn go_selector(&self, qualifier: Option<&str>) -> Selector<'a> {
        let Some(q) = qualifier else {
            return Selector::NotGo;
        };
        let is_go = self.lang() == Some(crate::Lang::Go);
        if !is_go || super::SELF_QUALIFIERS.contains(&q) {
            return Selector::NotGo;
        }
        let plain = q.chars().all(|c| c.is_alphanumeric() || c == '_');
        if plain
            && let Some((_, _, _, files)) = self
                .imports
                .iter()
                .find(|(_, alias, segs, _)| package_matches(*alias, segs, q))
        {
            return Selector::Package(files);
        }
        Selector::Value
    }

    /// `pkg.F()`: a top-level definition `F` of the package, found in the files its
    /// import names (`import`), else, from a `_test.go` file (an external test package
    /// `pkg_test` sits beside `pkg`), in the caller's directory (`import`), else in a
    /// directory named after the package (`name`). A package the workspace does not
    /// hold (`fmt`) reaches nothing: a same-named method elsewhere is not it.
    pub(super) fn go_package_call(
        &self,
        package: &str,
        files: &[i64],
        candidates: &[&'a Sym],
    ) -> Vec<(&'a Sym, Confidence)> {
        let top: Vec<&'a Sym> = candidates
            .iter()
            .copied()
            .filter(|s| s.parent.is_none() && s.kind != SymbolKind::Method)
            .collect();
        let all = |keep: &dyn Fn(&Sym) -> bool, confidence| -> Vec<(&'a Sym, Confidence)> {
            top.iter()
                .copied()
                .filter(|s| keep(s))
                .map(|s| (s, confidence))
                .collect()
        };
        let imported = all(&|s| files.contains(&s.file_id), Confidence::Import);
        if !imported.is_empty() {
            return imported;
        }
        let info = |id: i64| self.table.files.get(&id);
        let in_test = info(self.file_id).is_some_and(|f| f.path.ends_with("_test.go"));
        if in_test {
            let beside = all(&|s| self.in_callers_dir(s), Confidence::Import);
            if !beside.is_empty() {
                return beside;
            }
        }
        all(
            &|s| info(s.file_id).is_some_and(|f| f.dir().next_back() == Some(package)),
            Confidence::Name,
        )
    }
}

impl<'a> Ctx<'a> {
    /// `x.F` in a Go file where `x` is a package imported through a module of the
    /// workspace: that package's top-level `F` only (never a same-named `F` elsewhere),
    /// none if it has no such definition. `None` when `x` is no such package.
    pub(super) fn go_package_member(
        &self,
        name: &str,
        qualifier: Option<&str>,
        wanted: &dyn Fn(&Sym) -> bool,
    ) -> Option<Vec<(&'a Sym, Confidence)>> {
        let q = qualifier?;
        let (_, files) = self.go_packages.iter().find(|(local, _)| *local == q)?;
        Some(
            self.table
                .by_name
                .get(name)
                .into_iter()
                .flatten()
                .filter(|s| {
                    s.parent.is_none()
                        && s.kind != SymbolKind::Method
                        && wanted(s)
                        && files.contains(&s.file_id)
                })
                .map(|s| (s, Confidence::Import))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::package_matches;

    #[test]
    fn import_paths_name_their_package() {
        assert!(package_matches(None, &["net", "http"], "http"));
        assert!(package_matches(
            None,
            &["github.com", "go-chi", "chi", "v5"],
            "chi"
        ));
        assert!(package_matches(
            None,
            &["github.com", "mattn", "go-sqlite3"],
            "sqlite3"
        ));
        assert!(package_matches(Some("h"), &["net", "http"], "h"));
        assert!(!package_matches(Some("h"), &["net", "http"], "http"));
        assert!(!package_matches(None, &["net", "http"], "mux"));
        assert!(!package_matches(None, &[], "http"));
        // A variable is not a package because a path ends with its letters.
        assert!(!package_matches(None, &["strings"], "s"));
    }
}
