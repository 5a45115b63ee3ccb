//! Why a child could not be started.

use std::io;

/// A child could not be started or put under supervision. Names the program
/// (never its arguments, which may carry secrets).
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The OS refused to start the program (not found, not executable,
    /// E2BIG, bad working directory...).
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program as given in the spec.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The program started but supervision could not be set up (pipes,
    /// pidfd, thread); the child was killed.
    #[error("cannot supervise `{program}`: {source}")]
    Setup {
        /// The program as given in the spec.
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// The process is exiting (normal exit or a termination signal); no new
    /// child may start once teardown began.
    #[error("loci is shutting down; `{program}` was not started")]
    ShuttingDown {
        /// The program as given in the spec.
        program: String,
    },
}

impl SpawnError {
    /// The error's name in snake_case, for `--json` error objects.
    pub fn kind(&self) -> &'static str {
        match self {
            SpawnError::Spawn { .. } => "spawn_failed",
            SpawnError::Setup { .. } => "supervision_setup_failed",
            SpawnError::ShuttingDown { .. } => "shutting_down",
        }
    }
}
