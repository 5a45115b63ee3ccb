//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below.

mod common;

mod e5;
mod e5_tiny;
mod install;
mod int8;
mod real_model;
mod tiny_model;
