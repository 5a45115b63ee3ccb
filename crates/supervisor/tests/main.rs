//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below.
//! In binaries of their own (Cargo.toml): `preflight_skip` (it sets an environment variable of its process), `stdin_stream` (it restores the default SIGPIPE action of its process), `teardown` (its harness re-executes the test binary to run one test).

mod common;

mod budgets_and_groups;
mod env_policies;
mod hand_off;
mod llm_runners;
mod output_and_stdin;
mod preflight;
mod preflight_events;
mod single_flight;
