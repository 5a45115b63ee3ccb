//! Which rules extracted a file. Each extractor names its rules' version (`VERSION` in
//! its module), and the rules every language shares (the walker, receiver types, the
//! second parse of Rust macros) have one of their own; a file's row stores the version
//! it was extracted with (`files.extractor`), so a run re-extracts a file whose rules
//! changed since, even when the file itself did not.
//!
//! Bump the language's `VERSION` when a change to its extractor changes the facts it
//! gives for some file; bump [`SHARED`] when a change in the shared modules does.

use crate::Lang;

/// The version of the rules every extractor shares (`collector.rs`, `receivers.rs`,
/// `embedded.rs`, `rust_tokens.rs`, `c_macros.rs`, the header rule).
const SHARED: u32 = 6;

/// The version of the rules that extract `lang`'s facts: the shared rules' version times
/// 1,000 plus the language's own, so a change to either tells.
pub fn version(lang: Lang) -> u32 {
    let own = match lang {
        Lang::Rust => super::rust::VERSION,
        Lang::Python => super::python::VERSION,
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => super::javascript::VERSION,
        Lang::Go => super::go::VERSION,
        Lang::Java => super::java::VERSION,
        Lang::C => super::c::VERSION,
        Lang::Cpp => super::cpp::VERSION,
        Lang::CSharp => super::csharp::VERSION,
        Lang::Ruby => super::ruby::VERSION,
        Lang::Php => super::php::VERSION,
        Lang::Kotlin => super::kotlin::VERSION,
        Lang::Swift => super::swift::VERSION,
        Lang::Bash => super::bash::VERSION,
    };
    SHARED * 1000 + own
}

/// Whether a file stored as `lang` (its stored name) with `stored` version was extracted
/// by other rules than this build's: an unknown language name counts as outdated.
pub(crate) fn is_outdated(lang: &str, stored: i64) -> bool {
    Lang::from_name(lang).is_none_or(|lang| i64::from(version(lang)) != stored)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_language_has_a_version_above_the_unversioned_rows() {
        for lang in Lang::ALL {
            assert!(version(lang) > 1000, "{}", lang.name());
            assert!(!is_outdated(lang.name(), i64::from(version(lang))));
            assert!(is_outdated(lang.name(), 0), "{}", lang.name());
        }
    }
}
