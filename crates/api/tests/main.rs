//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below.

#[path = "../../git/tests/support.rs"]
mod git_support;

mod broad_answers;
mod changes;
mod concurrent_reads;
mod docs_agree;
mod unlinked;
