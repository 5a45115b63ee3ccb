//! Java and Kotlin packages: each file's declared package (`package a.b;`) and each
//! package's files, whatever folders they sit in, and the files an import names. The
//! data the binding rules ([`super::java_rules`]) look names up in.

use std::collections::HashMap;

use super::sym::SymbolsByName;

/// Whether `path` is a Java or Kotlin source file.
pub(super) fn is_java_like(path: &str) -> bool {
    path.ends_with(".java") || path.ends_with(".kt") || path.ends_with(".kts")
}

/// Each Java/Kotlin file's package and each package's files.
#[derive(Default)]
pub(super) struct JavaPackages {
    /// Java/Kotlin files (path, id), with the package each declares, if any.
    files: Vec<(String, i64)>,
    declared: HashMap<i64, String>,
    /// File → its package (`""`: the default package), filled by [`Self::finish`].
    pub(super) package_of: HashMap<i64, String>,
    /// Package → its files in path order, filled by [`Self::finish`].
    pub(super) files_of: HashMap<String, Vec<i64>>,
    /// Whether some file declares a package (else imports are matched by folders only).
    any_declared: bool,
}

impl JavaPackages {
    pub(super) fn add_file(&mut self, id: i64, path: &str) {
        if is_java_like(path) {
            self.files.push((path.to_string(), id));
        }
    }

    /// Records that file `id` declares `package`.
    pub(super) fn set_package(&mut self, id: i64, package: &str) {
        self.declared.insert(id, package.to_string());
    }

    /// Groups the files by package, in path order (the same for an incremental and a
    /// fresh index).
    pub(super) fn finish(&mut self) {
        self.files.sort();
        self.files.dedup();
        for (_, id) in &self.files {
            let package = self.declared.get(id).cloned().unwrap_or_default();
            self.any_declared |= !package.is_empty();
            self.files_of.entry(package.clone()).or_default().push(*id);
            self.package_of.insert(*id, package);
        }
    }

    /// The package file `id` declares (`""`: the default one), for a Java/Kotlin file.
    pub(super) fn package_of(&self, id: i64) -> Option<&str> {
        self.package_of.get(&id).map(String::as_str)
    }

    /// The files of `package`, in path order.
    pub(super) fn files_of(&self, package: &str) -> &[i64] {
        self.files_of.get(package).map_or(&[], Vec::as_slice)
    }

    /// The longest prefix of `segs` that is a package of the workspace, as the number
    /// of segments it takes (at least `min`).
    pub(super) fn package_prefix(&self, segs: &[&str], min: usize) -> Option<(usize, &[i64])> {
        (min.max(1)..=segs.len()).rev().find_map(|k| {
            self.files_of
                .get(&segs[..k].join("."))
                .map(|files| (k, files.as_slice()))
        })
    }

    /// The files an import of a Java/Kotlin file names, by package: `import a.b.C` and
    /// `import a.b.*` → the files of package `a.b` (narrowed to `C`'s by the caller);
    /// `import static a.b.C.m` → the files of `a.b` that define `C`. `Some(empty)` for a
    /// package the workspace does not declare when it declares some; `None` when the
    /// file is no Java/Kotlin file or no file declares a package (folders decide).
    pub(super) fn import_files(
        &self,
        by_name: &SymbolsByName,
        from: i64,
        module: &str,
    ) -> Option<Vec<i64>> {
        if !self.package_of.contains_key(&from) || !self.any_declared {
            return None;
        }
        let segs: Vec<&str> = module.split('.').filter(|s| !s.is_empty()).collect();
        let Some((k, files)) = self.package_prefix(&segs, 1) else {
            return Some(Vec::new());
        };
        let rest = &segs[k..];
        let Some(last) = rest.last() else {
            return Some(files.to_vec());
        };
        let qualified = rest.join(".");
        let defs = by_name.get(*last).map(Vec::as_slice).unwrap_or(&[]);
        Some(
            files
                .iter()
                .copied()
                .filter(|f| {
                    defs.iter()
                        .any(|s| s.file_id == *f && s.qualified_name == qualified)
                })
                .collect(),
        )
    }
}
