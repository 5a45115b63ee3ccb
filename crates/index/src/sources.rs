//! Which walked files are source, and in which language: by name, else by shebang.
//! The index run and drift use the same rules.

use std::path::{Path, PathBuf};

use crate::{Lang, walk};

/// Whether a file could be source by its name: a known extension, or no extension
/// (then its shebang decides).
pub(crate) fn could_be_source(path: &Path) -> bool {
    match path.extension() {
        Some(_) => Lang::detect(path, &[]).is_some(),
        None => true,
    }
}

/// The language an index run parses a walked file as: by its name, else by its shebang;
/// `None` for a file that is not source.
pub(crate) fn source_lang(path: &Path) -> Option<Lang> {
    Lang::detect(path, &[]).or_else(|| sniff_shebang(path))
}

/// Every file an index run of `root` would consider, with the language it would parse
/// it as: the same walk, ignore files and language rules (files too large or binary are
/// only found out by reading them). For tools that must see what the indexer sees, such
/// as the bench's tree-sitter-alone baseline.
pub fn source_files(root: &Path) -> Vec<(PathBuf, Lang)> {
    let walked = walk::walk(root, rayon::current_num_threads().max(1), &could_be_source);
    walked
        .files
        .into_iter()
        .filter_map(|found| source_lang(&found.abs).map(|lang| (found.abs, lang)))
        .collect()
}

fn sniff_shebang(path: &Path) -> Option<Lang> {
    use std::io::Read;
    let mut head = [0u8; 128];
    let mut file = std::fs::File::open(path).ok()?;
    let n = file.read(&mut head).ok()?;
    Lang::detect(Path::new(""), &head[..n])
}
