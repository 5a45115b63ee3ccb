//! One file's inputs to resolution as the store holds them: its definitions,
//! references, imports and bases. The ground every rule reads; it imports none of them.

use super::sym::Sym;

/// A reference as stored: what resolution links to a definition.
pub(super) struct RefRow {
    pub(super) from: Option<i64>,
    pub(super) name: String,
    pub(super) qualifier: Option<String>,
    /// A call (else a type use).
    pub(super) is_call: bool,
    /// A macro invocation: a call only a macro definition answers (`panic!` is never
    /// `JoinError::panic`).
    pub(super) is_macro: bool,
    pub(super) line: i64,
    /// The qualifier's type, when the file says it.
    pub(super) receiver: Option<String>,
    /// A call's argument count, where overloads are told apart by it (Java).
    pub(super) args: Option<u16>,
    /// A Kotlin call's argument types, where the file says them.
    pub(super) arg_types: Option<String>,
}

/// An import as stored: the module and the name it brings in.
pub(super) struct ImportRow {
    pub(super) module: String,
    pub(super) name: Option<String>,
    pub(super) alias: Option<String>,
    pub(super) line: i64,
}

/// A base as stored: `class A(B)`, `impl Tr for A`.
pub(super) struct BaseRow {
    pub(super) symbol: Option<i64>,
    pub(super) subject: String,
    pub(super) name: String,
    pub(super) qualifier: Option<String>,
    /// `implements` (else `inherits`).
    pub(super) implements: bool,
    pub(super) line: i64,
}

/// One file's inputs to resolution.
pub(crate) struct FileInputs {
    pub(super) file_id: i64,
    pub(super) own: Vec<Sym>,
    pub(super) refs: Vec<RefRow>,
    pub(super) imports: Vec<ImportRow>,
    pub(super) bases: Vec<BaseRow>,
}
