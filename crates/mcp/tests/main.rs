//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; a test that
//! needs a process of its own runs itself alone through the support module `alone`.

mod alone;
mod rebind;
mod registration;
mod tools_list;
