//! loci's exit-code contract: the numbers a `loci` process exits with, named once.
//! Every crate that needs a code (the API's error table, the lifecycle reading a child's
//! status, the supervisor and workspace errors) names it through [`ExitCode`]; no
//! crate spells one as a number. Extend the enum, never renumber it.
#![deny(missing_docs)]

use schemars::JsonSchema;
use serde::Serialize;

/// A process exit code of the contract (the values never change).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[repr(u8)]
pub enum ExitCode {
    /// Success.
    Ok = 0,
    /// A failure with no more specific code.
    Failure = 1,
    /// Bad command-line usage.
    Usage = 2,
    /// The server could not bind its address.
    BindConflict = 3,
    /// The thing named does not exist.
    NotFound = 4,
    /// The input is invalid or was refused.
    InvalidInput = 5,
    /// A limit was exceeded.
    LimitExceeded = 6,
    /// The database failed.
    Storage = 10,
    /// Another process holds the index.
    Busy = 15,
    /// A preflight check refused an LLM spawn.
    Preflight = 16,
    /// The operation is destructive and needs consent.
    ConsentRequired = 17,
    /// Interrupted by a signal.
    Interrupted = 19,
    /// A bug in loci.
    Internal = 20,
}

impl ExitCode {
    /// The number the process exits with.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// The contract's code for a child's exit status, if it is one.
    pub fn from_code(code: i32) -> Option<ExitCode> {
        ExitCode::ALL
            .iter()
            .copied()
            .find(|c| i32::from(c.code()) == code)
    }

    /// Every code, in numeric order.
    pub const ALL: [ExitCode; 13] = [
        ExitCode::Ok,
        ExitCode::Failure,
        ExitCode::Usage,
        ExitCode::BindConflict,
        ExitCode::NotFound,
        ExitCode::InvalidInput,
        ExitCode::LimitExceeded,
        ExitCode::Storage,
        ExitCode::Busy,
        ExitCode::Preflight,
        ExitCode::ConsentRequired,
        ExitCode::Interrupted,
        ExitCode::Internal,
    ];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_keep_their_numbers() {
        let numbers: Vec<u8> = ExitCode::ALL.iter().map(|c| c.code()).collect();
        assert_eq!(numbers, [0, 1, 2, 3, 4, 5, 6, 10, 15, 16, 17, 19, 20]);
        for c in ExitCode::ALL {
            assert_eq!(ExitCode::from_code(i32::from(c.code())), Some(c));
        }
        assert_eq!(ExitCode::from_code(7), None);
    }
}
