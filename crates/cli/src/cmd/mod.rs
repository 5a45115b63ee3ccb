//! One module per command family.

pub mod graph;
pub mod index;
pub mod list;
pub mod query;
pub mod workspace;
pub mod worker;
