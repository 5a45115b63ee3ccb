//! One module per command family.

pub mod graph;
pub mod index;
pub mod list;
