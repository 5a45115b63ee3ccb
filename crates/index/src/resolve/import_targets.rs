//! Where an import points: a Python relative import's file, a Rust `use` through the
//! module graph.

use super::SymbolTable;
use super::rows::ImportRow;

impl SymbolTable {
    /// A Python relative import (`from .queues import Queue` in `asyncio/tasks.py`) names
    /// one file, relative to the importing file's package: the imported name's
    /// submodule (`asyncio/queues/Queue.py`, `.../Queue/__init__.py`) when there is one,
    /// else the module (`asyncio/queues.py`, `asyncio/queues/__init__.py`).
    pub(super) fn python_relative(
        &self,
        file: i64,
        module: &str,
        name: Option<&str>,
    ) -> Option<i64> {
        let path = self.files.get(&file).map(|f| &*f.path)?;
        if !path.ends_with(".py") {
            return None;
        }
        let dots = module.chars().take_while(|&c| c == '.').count();
        if dots == 0 {
            return None;
        }
        let mut dir: Vec<&str> = path.split('/').collect();
        dir.pop();
        for _ in 1..dots {
            dir.pop()?;
        }
        dir.extend(module[dots..].split('.').filter(|s| !s.is_empty()));
        let base = dir.join("/");
        let join = |tail: &str| {
            if base.is_empty() {
                tail.to_string()
            } else {
                format!("{base}/{tail}")
            }
        };
        let submodule = name.and_then(|n| {
            self.python_files
                .get(&join(&format!("{n}.py")))
                .or_else(|| self.python_files.get(&join(&format!("{n}/__init__.py"))))
        });
        let module_file = || {
            self.python_files
                .get(&format!("{base}.py"))
                .filter(|_| !base.is_empty())
                .or_else(|| self.python_files.get(&join("__init__.py")))
        };
        submodule.or_else(module_file).copied()
    }

    /// A Rust `use` through the module graph: the files it reaches, each with the
    /// definition it names there (none for a module or a glob). `None` when the path
    /// cannot be followed through the workspace's files (`std::..`, an inline module).
    pub(super) fn rust_import(
        &self,
        file: i64,
        imp: &ImportRow,
    ) -> Option<(Vec<i64>, Vec<Option<i64>>)> {
        // `#[path = "x.rs"] mod m;`: the file it names.
        if imp.module.contains('/') {
            let target = self.rust.declared_import(file, &imp.module, imp.line)?;
            return Some((vec![target], vec![None]));
        }
        let from = self.rust.scope_at_line(file, imp.line);
        let module = if imp.module.is_empty() {
            self.rust.module(from, imp.name.as_deref()?)?
        } else {
            self.rust.module(from, &imp.module)?
        };
        let name = match imp.name.as_deref() {
            None | Some("*") | Some("self") => return Some((vec![module.file], vec![None])),
            Some(_) if imp.module.is_empty() => return Some((vec![module.file], vec![None])),
            Some(name) => name,
        };
        if let Some(child) = self.rust.module(module, &format!("self::{name}")) {
            return Some((vec![child.file], vec![None]));
        }
        let found = self.rust.item(&self.by_name, file, module, name, &|_| true);
        if found.is_empty() {
            return None;
        }
        let mut files = Vec::new();
        let mut dst = Vec::new();
        for s in found {
            if !files.contains(&s.file_id) {
                files.push(s.file_id);
                dst.push(Some(s.id));
            }
        }
        Some((files, dst))
    }
}
