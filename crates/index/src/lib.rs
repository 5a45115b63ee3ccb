//! The code graph of a workspace: walk it, parse every source file with
//! tree-sitter, resolve calls, imports and inheritance across files, and keep
//! the result fresh incrementally in the workspace's SQLite index.
//!
//! ```no_run
//! let facts = loci_index::extract::extract(loci_index::Lang::Rust, "fn main() { run(); }").unwrap();
//! assert_eq!(facts.symbols[0].name, "main");
//! ```
#![deny(missing_docs)]

pub mod extract;
mod lang;
mod lock;
mod parse;
mod walk;
mod write;

pub use lang::Lang;
