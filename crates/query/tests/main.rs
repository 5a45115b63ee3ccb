//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below.
//! In binaries of their own (Cargo.toml): `uri_names` (it changes the working directory of its process).

mod common;

mod in_process;
mod limits;
mod read_only;
mod worker;
mod worker_lifetime;
