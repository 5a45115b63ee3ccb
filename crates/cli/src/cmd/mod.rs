//! One module per command family.

pub mod changes;
pub mod config;
pub mod forget;
pub mod gate;
pub mod graph;
pub mod index;
pub mod list;
pub mod mcp;
pub mod memory;
mod memory_enrich;
mod memory_print;
mod memory_store;
mod memory_transfer;
pub mod models;
pub mod query;
pub mod rebuild;
pub mod serve;
pub mod status;
pub mod sync;
pub mod watch;
pub mod worker;
pub mod workspace;
