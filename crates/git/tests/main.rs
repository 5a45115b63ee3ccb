//! The git crate over real repositories made with the real `git` CLI.

mod diff;
mod head;
mod support;
