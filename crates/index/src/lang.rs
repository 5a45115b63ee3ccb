//! Which language a file is written in, decided from its name or its shebang line.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// A language loci parses. The set is closed: adding one means adding a grammar,
/// an extractor in `extract/` and a fixture test.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    PartialOrd,
    Ord,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Lang {
    /// Rust (`.rs`).
    Rust,
    /// Python (`.py`, `.pyi`, python shebang).
    Python,
    /// JavaScript (`.js`, `.mjs`, `.cjs`, `.jsx`, node shebang).
    JavaScript,
    /// TypeScript (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// TypeScript with JSX (`.tsx`).
    Tsx,
    /// Go (`.go`).
    Go,
    /// Java (`.java`).
    Java,
    /// C (`.c`, `.h`).
    C,
    /// C++ (`.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`).
    Cpp,
    /// C# (`.cs`).
    CSharp,
    /// Ruby (`.rb`, ruby shebang).
    Ruby,
    /// PHP (`.php`).
    Php,
    /// Kotlin (`.kt`, `.kts`).
    Kotlin,
    /// Swift (`.swift`).
    Swift,
    /// Bash and POSIX shell (`.sh`, `.bash`, sh/bash shebang).
    Bash,
}

impl Lang {
    /// Every language, in a stable order (used by `stats` and tests).
    pub const ALL: [Lang; 15] = [
        Lang::Rust,
        Lang::Python,
        Lang::JavaScript,
        Lang::TypeScript,
        Lang::Tsx,
        Lang::Go,
        Lang::Java,
        Lang::C,
        Lang::Cpp,
        Lang::CSharp,
        Lang::Ruby,
        Lang::Php,
        Lang::Kotlin,
        Lang::Swift,
        Lang::Bash,
    ];

    /// The stable lowercase name stored in the index and accepted by `--lang`.
    pub fn name(self) -> &'static str {
        match self {
            Lang::Rust => "rust",
            Lang::Python => "python",
            Lang::JavaScript => "javascript",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::Java => "java",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::CSharp => "csharp",
            Lang::Ruby => "ruby",
            Lang::Php => "php",
            Lang::Kotlin => "kotlin",
            Lang::Swift => "swift",
            Lang::Bash => "bash",
        }
    }

    /// Parses a name as given to `--lang` (the stable name, or a common alias).
    pub fn from_name(name: &str) -> Option<Lang> {
        let lower = name.to_ascii_lowercase();
        let found = match lower.as_str() {
            "js" => Lang::JavaScript,
            "ts" => Lang::TypeScript,
            "c++" | "cxx" => Lang::Cpp,
            "c#" | "cs" => Lang::CSharp,
            "rb" => Lang::Ruby,
            "py" => Lang::Python,
            "rs" => Lang::Rust,
            "kt" => Lang::Kotlin,
            "sh" | "shell" => Lang::Bash,
            other => return Lang::ALL.into_iter().find(|l| l.name() == other),
        };
        Some(found)
    }

    /// Detects the language from the file name, then from a `#!` first line.
    pub fn detect(path: &Path, head: &[u8]) -> Option<Lang> {
        if let Some(ext) = path.extension().and_then(|e| e.to_str())
            && let Some(lang) = Self::from_extension(ext)
        {
            return Some(lang);
        }
        Self::from_shebang(head)
    }

    /// The language of a file name's extension (`rs`, `kts`), the one mapping every part
    /// of the index uses.
    pub(crate) fn from_extension(ext: &str) -> Option<Lang> {
        Some(match ext {
            "rs" => Lang::Rust,
            "py" | "pyi" | "pyw" => Lang::Python,
            "js" | "mjs" | "cjs" | "jsx" => Lang::JavaScript,
            "ts" | "mts" | "cts" => Lang::TypeScript,
            "tsx" => Lang::Tsx,
            "go" => Lang::Go,
            "java" => Lang::Java,
            "c" | "h" => Lang::C,
            "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" => {
                Lang::Cpp
            }
            "cs" => Lang::CSharp,
            "rb" | "rake" | "gemspec" => Lang::Ruby,
            "php" | "phtml" => Lang::Php,
            "kt" | "kts" => Lang::Kotlin,
            "swift" => Lang::Swift,
            "sh" | "bash" | "zsh" | "ksh" => Lang::Bash,
            _ => return None,
        })
    }

    fn from_shebang(head: &[u8]) -> Option<Lang> {
        let line = head.strip_prefix(b"#!")?;
        let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
        let line = std::str::from_utf8(line).ok()?;
        let mut words = line.split_whitespace();
        let mut interpreter = words.next()?.rsplit('/').next()?;
        if interpreter == "env" {
            interpreter = words.find(|w| !w.starts_with('-'))?;
        }
        let base = interpreter.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        Some(match base {
            "python" | "pypy" => Lang::Python,
            "node" | "nodejs" | "deno" | "bun" => Lang::JavaScript,
            "ruby" => Lang::Ruby,
            "php" => Lang::Php,
            "sh" | "bash" | "dash" | "zsh" | "ksh" => Lang::Bash,
            _ => return None,
        })
    }

    /// The language of a file whose name gave `self`, now that its text is known: a `.h`
    /// file is C unless its text reads as C++ (a namespace, class, template, `::` or
    /// access label outside comments and literals), then C++.
    pub fn for_content(self, path: &Path, text: &str) -> Lang {
        if self == Lang::C
            && path.extension().is_some_and(|e| e == "h")
            && crate::header::looks_like_cpp(text)
        {
            Lang::Cpp
        } else {
            self
        }
    }

    /// The tree-sitter grammar for this language.
    pub fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
            Lang::Ruby => tree_sitter_ruby::LANGUAGE.into(),
            Lang::Php => tree_sitter_php::LANGUAGE_PHP.into(),
            Lang::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
            Lang::Swift => tree_sitter_swift::LANGUAGE.into(),
            Lang::Bash => tree_sitter_bash::LANGUAGE.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_by_extension_then_shebang() {
        let cases: &[(&str, &[u8], Option<Lang>)] = &[
            ("a/b.rs", b"", Some(Lang::Rust)),
            ("x.tsx", b"", Some(Lang::Tsx)),
            ("x.hpp", b"", Some(Lang::Cpp)),
            ("bin/tool", b"#!/usr/bin/env python3\n", Some(Lang::Python)),
            ("bin/tool", b"#!/bin/sh -e\n", Some(Lang::Bash)),
            (
                "bin/tool",
                b"#!/usr/bin/env -S node --flag\n",
                Some(Lang::JavaScript),
            ),
            ("README", b"hello", None),
            ("bin/tool", b"#!/usr/bin/perl\n", None),
        ];
        for (path, head, want) in cases {
            assert_eq!(Lang::detect(Path::new(path), head), *want, "{path}");
        }
    }

    #[test]
    fn names_round_trip() {
        for lang in Lang::ALL {
            assert_eq!(Lang::from_name(lang.name()), Some(lang));
        }
        assert_eq!(Lang::from_name("C++"), Some(Lang::Cpp));
        assert_eq!(Lang::from_name("cobol"), None);
    }
}
