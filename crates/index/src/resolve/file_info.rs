//! What resolution knows of one file, kept for every file of the tree for the whole
//! run: its path alone, with its directory, module name and extension read from it on
//! demand. One path per file instead of a string per component keeps the run's
//! resident skeleton small on a large tree (about 0.9 KB less per file).

use crate::Lang;

/// One file as resolution sees it: where it sits and its language.
pub(super) struct FileInfo {
    /// The relative path, also for a deterministic order of candidates.
    pub(super) path: Box<str>,
    /// Bytes of `path` before the file name's `/` (0 at the root).
    dir_len: u32,
    /// The file name's stem names a module (it is not `mod`, `__init__`, `index`,
    /// `lib`, `main` or empty).
    stem_is_module: bool,
    /// The language of its extension ([`Lang::from_extension`]), for the rules that
    /// apply to one language only.
    pub(super) lang: Option<Lang>,
}

impl FileInfo {
    pub(super) fn new(path: &str) -> FileInfo {
        let dir_len = path.rfind('/').unwrap_or(0);
        let mut info = FileInfo {
            path: path.into(),
            dir_len: u32::try_from(dir_len).unwrap_or(0),
            stem_is_module: false,
            lang: None,
        };
        info.stem_is_module = !matches!(
            info.stem(),
            "mod" | "__init__" | "index" | "lib" | "main" | ""
        );
        info.lang = Lang::from_extension(info.ext());
        info
    }

    /// The directory, as written in the path (`a/b` for `a/b/c.rs`; empty at the root).
    pub(super) fn dir_str(&self) -> &str {
        &self.path[..self.dir_len as usize]
    }

    /// The directory's components.
    pub(super) fn dir(&self) -> impl DoubleEndedIterator<Item = &str> + Clone {
        let dir = self.dir_str();
        dir.split('/').filter(move |_| !dir.is_empty())
    }

    fn file_name(&self) -> &str {
        match self.dir_len {
            0 => self.path.strip_prefix('/').unwrap_or(&self.path),
            n => &self.path[n as usize + 1..],
        }
    }

    /// The file name up to its first dot.
    fn stem(&self) -> &str {
        let name = self.file_name();
        name.split_once('.').map_or(name, |(stem, _)| stem)
    }

    /// The file name's extension (`rs`, `hpp`; `ts` of `a.test.ts`), empty if none.
    pub(super) fn ext(&self) -> &str {
        let name = self.file_name();
        name.split_once('.')
            .map_or("", |(_, rest)| rest.rsplit('.').next().unwrap_or(""))
    }

    /// Path components without the extension; a stem of `mod`, `__init__`, `index`,
    /// `lib` or `main` dropped.
    pub(super) fn module_path(&self) -> impl DoubleEndedIterator<Item = &str> + Clone {
        let stem = self.stem_is_module.then(|| self.stem());
        self.dir().chain(stem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The directory, module path and extension of `path`, as one line.
    fn parts(path: &str) -> String {
        let info = FileInfo::new(path);
        let dir: Vec<&str> = info.dir().collect();
        let module: Vec<&str> = info.module_path().collect();
        format!(
            "dir={dir:?} module={module:?} dir_str={:?} ext={:?}",
            info.dir_str(),
            info.ext()
        )
    }

    #[test]
    fn a_path_reads_as_directory_module_and_extension() {
        let cases = [
            (
                "src/a/parser.rs",
                r#"dir=["src", "a"] module=["src", "a", "parser"] dir_str="src/a" ext="rs""#,
            ),
            (
                "pkg/__init__.py",
                r#"dir=["pkg"] module=["pkg"] dir_str="pkg" ext="py""#,
            ),
            ("a.test.ts", r#"dir=[] module=["a"] dir_str="" ext="ts""#),
            (
                "Makefile",
                r#"dir=[] module=["Makefile"] dir_str="" ext="""#,
            ),
            (
                "d/.bashrc",
                r#"dir=["d"] module=["d"] dir_str="d" ext="bashrc""#,
            ),
            ("lib.rs", r#"dir=[] module=[] dir_str="" ext="rs""#),
        ];
        for (path, expected) in cases {
            assert_eq!(parts(path), expected, "{path}");
        }
        assert_eq!(FileInfo::new("x/y.hpp").lang, Some(Lang::Cpp));
    }
}
