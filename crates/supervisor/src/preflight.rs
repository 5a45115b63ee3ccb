//! The preflight gate run before every LLM-tool spawn (seed 000, ADR-0045):
//! seven guards in the seed's order, plus the per-argument limit the seed
//! lacks, each failing with a variant that names the path or the sizes.
//!
//! Order (first failure wins):
//! 1. total argv bytes (one NUL per element) vs `sysconf(_SC_ARG_MAX)` − 4096;
//!    then, loci's addition, any single argument over 128 KiB (Linux's
//!    `MAX_ARG_STRLEN`) — both are execve limits, checked before any file
//!    system access;
//! 2. the binary exists and is executable;
//! 3. the expected output fits the configured output cap;
//! 4. no inline JSON given to `--mcp-config`;
//! 5. each `--mcp-config <PATH>` exists and is valid JSON;
//! 6. no invalid `.mcp.json` in the child's working directory or up to 16
//!    levels above it;
//! 7. `CLAUDE_CONFIG_DIR` (as the child will see it) is not a non-empty
//!    directory.

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Environment variable that skips the gate when set to `1` (a warning event
/// `preflight_skipped` is logged). For emergencies only.
pub const SKIP_VAR: &str = "LOCI_SKIP_PREFLIGHT";

/// Linux's per-argument limit (`MAX_ARG_STRLEN`, 32 pages), NUL included.
pub const PER_ARG_LIMIT: usize = 128 * 1024;

/// Safety margin subtracted from `sysconf(_SC_ARG_MAX)` (seed 000).
pub const ARG_MAX_MARGIN: usize = 4096;

/// How many directories above the child's working directory are searched for
/// `.mcp.json` (the working directory itself is searched too).
pub const WALK_UP_LEVELS: usize = 16;

/// Content of the empty MCP configuration handed to `claude --mcp-config`.
pub const EMPTY_MCP_CONFIG: &str = r#"{"mcpServers":{}}"#;

/// What the gate checks about one planned spawn.
#[derive(Clone, Copy, Debug)]
pub struct PreflightArgs<'a> {
    /// Which call site spawns (for the telemetry events).
    pub spawner_name: &'a str,
    /// The program: a path, or a bare name looked up in `PATH`.
    pub binary_path: &'a Path,
    /// The arguments after the program.
    pub argv: &'a [OsString],
    /// The working directory the child will have: the `.mcp.json` walk-up
    /// starts here, and relative `--mcp-config` paths resolve against it.
    pub child_cwd: &'a Path,
    /// An MCP configuration the caller meant to pass inline, if any (always
    /// rejected: write it to a file instead).
    pub mcp_config_inline_json: Option<&'a str>,
    /// The caller's estimate of the output size.
    pub expected_output_bytes: u64,
    /// The most output the caller will accept.
    pub output_cap_bytes: u64,
    /// The `CLAUDE_CONFIG_DIR` value the child will see, if any.
    pub claude_config_dir: Option<&'a Path>,
}

impl<'a> PreflightArgs<'a> {
    /// Args with no inline MCP config, no expected output, no output cap and
    /// no `CLAUDE_CONFIG_DIR`; set the other fields directly.
    pub fn new(
        spawner_name: &'a str,
        binary_path: &'a Path,
        argv: &'a [OsString],
        child_cwd: &'a Path,
    ) -> Self {
        PreflightArgs {
            spawner_name,
            binary_path,
            argv,
            child_cwd,
            mcp_config_inline_json: None,
            expected_output_bytes: 0,
            output_cap_bytes: u64::MAX,
            claude_config_dir: None,
        }
    }

    /// Total argv bytes as execve counts them: program and every argument,
    /// one NUL each.
    pub fn argv_bytes(&self) -> usize {
        self.binary_path.as_os_str().len()
            + 1
            + self.argv.iter().map(|a| a.len() + 1).sum::<usize>()
    }
}

/// Why the gate refused a spawn. Every variant names the offending path or
/// the sizes involved. The API maps every one to `preflight` (exit code 16).
#[derive(Debug, thiserror::Error)]
pub enum PreflightError {
    /// Guard 1: argv would overflow execve's limit (E2BIG after fork).
    #[error(
        "argv is {total_bytes} bytes, over the limit of {limit} (ARG_MAX - {ARG_MAX_MARGIN}); \
         send large input on stdin"
    )]
    ArgvTooLarge {
        /// Bytes of program + arguments, one NUL each.
        total_bytes: usize,
        /// `sysconf(_SC_ARG_MAX)` minus the margin.
        limit: usize,
    },
    /// Guard 1 (loci's addition): one argument over Linux's per-argument limit.
    #[error("argument {index} is {bytes} bytes, over the per-argument limit of {limit}")]
    ArgumentTooLarge {
        /// Position in argv (0 is the program).
        index: usize,
        /// Its size with its NUL.
        bytes: usize,
        /// [`PER_ARG_LIMIT`].
        limit: usize,
    },
    /// Guard 2: the program does not exist (or is not in `PATH`).
    #[error("binary not found: {}", path.display())]
    BinaryNotFound {
        /// The program as given or as resolved.
        path: PathBuf,
    },
    /// Guard 2: the program exists but is not an executable file.
    #[error("binary is not an executable file: {}", path.display())]
    BinaryNotExecutable {
        /// The resolved program path.
        path: PathBuf,
    },
    /// Guard 3: the expected output is larger than the configured cap.
    #[error("expected output of {expected} bytes exceeds the configured cap of {configured} bytes")]
    OutputCapTooSmall {
        /// The caller's estimate.
        expected: u64,
        /// The configured cap.
        configured: u64,
    },
    /// Guard 4: `--mcp-config` was given inline JSON; the tools want a file.
    #[error(
        "inline JSON given to --mcp-config ({value}); write it to a file \
         (write_empty_mcp_config_tempfile) and pass the path"
    )]
    McpConfigInlineJson {
        /// The start of the inline value.
        value: String,
    },
    /// Guard 5: a `--mcp-config` file does not exist.
    #[error("--mcp-config file does not exist: {}", path.display())]
    McpConfigPathMissing {
        /// The path, resolved against the child's working directory.
        path: PathBuf,
    },
    /// Guard 5: a `--mcp-config` file is not valid JSON.
    #[error("--mcp-config file is not valid JSON: {}: {error}", path.display())]
    McpConfigPathInvalidJson {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        error: String,
    },
    /// Guard 6: an inherited `.mcp.json` the tool would load is invalid.
    #[error("invalid .mcp.json above the child's working directory: {}: {error}", path.display())]
    WalkUpMcpJsonInvalid {
        /// The `.mcp.json` found.
        path: PathBuf,
        /// The parser's (or reader's) message.
        error: String,
    },
    /// Guard 7: the child's `CLAUDE_CONFIG_DIR` is not an empty directory.
    #[error("CLAUDE_CONFIG_DIR is not an empty directory: {}", path.display())]
    ClaudeConfigDirNotEmpty {
        /// The directory.
        path: PathBuf,
    },
}

impl PreflightError {
    /// The variant's name in snake_case, for `--json` error objects and logs.
    pub fn kind(&self) -> &'static str {
        match self {
            PreflightError::ArgvTooLarge { .. } => "argv_too_large",
            PreflightError::ArgumentTooLarge { .. } => "argument_too_large",
            PreflightError::BinaryNotFound { .. } => "binary_not_found",
            PreflightError::BinaryNotExecutable { .. } => "binary_not_executable",
            PreflightError::OutputCapTooSmall { .. } => "output_cap_too_small",
            PreflightError::McpConfigInlineJson { .. } => "mcp_config_inline_json",
            PreflightError::McpConfigPathMissing { .. } => "mcp_config_path_missing",
            PreflightError::McpConfigPathInvalidJson { .. } => "mcp_config_path_invalid_json",
            PreflightError::WalkUpMcpJsonInvalid { .. } => "walk_up_mcp_json_invalid",
            PreflightError::ClaudeConfigDirNotEmpty { .. } => "claude_config_dir_not_empty",
        }
    }
}

/// Runs the gate. `LOCI_SKIP_PREFLIGHT=1` skips it with a warning. Emits
/// `preflight_passed`, `preflight_failed` or `preflight_skipped` with the
/// spawner name and the argv size.
pub fn preflight_check(args: &PreflightArgs) -> Result<(), PreflightError> {
    let argv_bytes = args.argv_bytes();
    if std::env::var_os(SKIP_VAR).is_some_and(|v| v == "1") {
        tracing::warn!(
            event = "preflight_skipped",
            spawner = args.spawner_name,
            argv_bytes,
            "preflight_skipped: {SKIP_VAR}=1; the spawn is not validated"
        );
        return Ok(());
    }
    match run_guards(args, argv_bytes) {
        Ok(()) => {
            tracing::info!(
                event = "preflight_passed",
                spawner = args.spawner_name,
                argv_bytes,
                child_cwd = %args.child_cwd.display(),
                "preflight_passed"
            );
            Ok(())
        }
        Err(e) => {
            tracing::warn!(
                event = "preflight_failed",
                spawner = args.spawner_name,
                argv_bytes,
                kind = e.kind(),
                error = %e,
                "preflight_failed"
            );
            Err(e)
        }
    }
}

fn run_guards(args: &PreflightArgs, argv_bytes: usize) -> Result<(), PreflightError> {
    check_argv_size(args, argv_bytes)?;
    check_binary(args.binary_path)?;
    check_output_cap(args)?;
    let values = mcp_config_values(args.argv);
    check_mcp_config_inline(args, &values)?;
    check_mcp_config_paths(args.child_cwd, &values)?;
    check_walk_up_mcp_json(args.child_cwd)?;
    check_claude_config_dir(args.claude_config_dir)
}

fn check_argv_size(args: &PreflightArgs, total_bytes: usize) -> Result<(), PreflightError> {
    let limit = crate::sys::arg_max().saturating_sub(ARG_MAX_MARGIN);
    if total_bytes > limit {
        return Err(PreflightError::ArgvTooLarge { total_bytes, limit });
    }
    let elements = std::iter::once(args.binary_path.as_os_str())
        .chain(args.argv.iter().map(|a| a.as_os_str()));
    for (index, a) in elements.enumerate() {
        let bytes = a.len() + 1;
        if bytes > PER_ARG_LIMIT {
            return Err(PreflightError::ArgumentTooLarge {
                index,
                bytes,
                limit: PER_ARG_LIMIT,
            });
        }
    }
    Ok(())
}

/// Resolves a bare program name through `PATH` like execvp does; a name with
/// a slash is returned as is.
pub(crate) fn resolve_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 || program.is_absolute() {
        return Some(program.to_path_buf());
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable_file(p))
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

fn check_binary(binary: &Path) -> Result<(), PreflightError> {
    let Some(path) = resolve_program(binary) else {
        return Err(PreflightError::BinaryNotFound {
            path: binary.to_path_buf(),
        });
    };
    match std::fs::metadata(&path) {
        Err(_) => Err(PreflightError::BinaryNotFound { path }),
        Ok(_) if !is_executable_file(&path) => Err(PreflightError::BinaryNotExecutable { path }),
        Ok(_) => Ok(()),
    }
}

fn check_output_cap(args: &PreflightArgs) -> Result<(), PreflightError> {
    if args.expected_output_bytes > args.output_cap_bytes {
        return Err(PreflightError::OutputCapTooSmall {
            expected: args.expected_output_bytes,
            configured: args.output_cap_bytes,
        });
    }
    Ok(())
}

/// Every value given to `--mcp-config` (`--mcp-config a b`, `--mcp-config=a`).
fn mcp_config_values(argv: &[OsString]) -> Vec<&OsStr> {
    let mut values = Vec::new();
    let mut taking = false;
    for a in argv {
        if a == "--mcp-config" {
            taking = true;
            continue;
        }
        if let Some(v) = a.to_str().and_then(|s| s.strip_prefix("--mcp-config=")) {
            values.push(OsStr::new(v));
            taking = false;
            continue;
        }
        if taking && !a.as_encoded_bytes().starts_with(b"-") {
            values.push(a.as_os_str());
        } else {
            taking = false;
        }
    }
    values
}

fn looks_inline(v: &OsStr) -> bool {
    v.as_encoded_bytes().trim_ascii_start().starts_with(b"{")
}

fn check_mcp_config_inline(args: &PreflightArgs, values: &[&OsStr]) -> Result<(), PreflightError> {
    let inline = args.mcp_config_inline_json.map(str::to_owned).or_else(|| {
        values
            .iter()
            .find(|v| looks_inline(v))
            .map(|v| v.to_string_lossy().into_owned())
    });
    match inline {
        Some(v) => Err(PreflightError::McpConfigInlineJson {
            value: v.chars().take(80).collect(),
        }),
        None => Ok(()),
    }
}

fn check_mcp_config_paths(cwd: &Path, values: &[&OsStr]) -> Result<(), PreflightError> {
    for v in values {
        let path = cwd.join(v);
        match std::fs::read(&path) {
            Err(_) if !path.exists() => return Err(PreflightError::McpConfigPathMissing { path }),
            Err(e) => {
                return Err(PreflightError::McpConfigPathInvalidJson {
                    path,
                    error: e.to_string(),
                });
            }
            Ok(bytes) => {
                if let Err(e) = validate_json(&bytes) {
                    return Err(PreflightError::McpConfigPathInvalidJson { path, error: e });
                }
            }
        }
    }
    Ok(())
}

fn validate_json(bytes: &[u8]) -> Result<(), String> {
    serde_json::from_slice::<serde::de::IgnoredAny>(bytes)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn check_walk_up_mcp_json(cwd: &Path) -> Result<(), PreflightError> {
    let start = if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(cwd))
            .unwrap_or_else(|_| cwd.to_path_buf())
    };
    for dir in start.ancestors().take(WALK_UP_LEVELS + 1) {
        let path = dir.join(".mcp.json");
        let error = match std::fs::read(&path) {
            Ok(bytes) => match validate_json(&bytes) {
                Ok(()) => continue,
                Err(e) => e,
            },
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                continue;
            }
            Err(e) => format!("unreadable: {e}"),
        };
        return Err(PreflightError::WalkUpMcpJsonInvalid { path, error });
    }
    Ok(())
}

fn check_claude_config_dir(dir: Option<&Path>) -> Result<(), PreflightError> {
    let Some(dir) = dir else { return Ok(()) };
    match std::fs::read_dir(dir).map(|mut entries| entries.next().is_none()) {
        Ok(true) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        _ => Err(PreflightError::ClaudeConfigDirNotEmpty {
            path: dir.to_path_buf(),
        }),
    }
}

/// A temp file holding [`EMPTY_MCP_CONFIG`], removed when dropped. Give it to
/// [`crate::SpawnSpec::hold_until_exit`] so it is removed when the spawn ends
/// (the seed's version persisted one file per call).
#[derive(Debug)]
pub struct McpConfigFile(tempfile::TempPath);

impl McpConfigFile {
    /// Where the file is; pass it as `--mcp-config <PATH>`.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

/// Writes `{"mcpServers":{}}` to a fresh temp file, for
/// `claude --strict-mcp-config --mcp-config <PATH>` (the tool rejects inline
/// JSON). The file is removed when the returned guard is dropped.
pub fn write_empty_mcp_config_tempfile() -> io::Result<McpConfigFile> {
    let mut f = tempfile::Builder::new()
        .prefix("loci-mcp-")
        .suffix(".json")
        .tempfile()?;
    f.write_all(EMPTY_MCP_CONFIG.as_bytes())?;
    f.flush()?;
    Ok(McpConfigFile(f.into_temp_path()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn mcp_config_values_are_collected_in_every_form() {
        let argv = os(&[
            "-p",
            "--mcp-config",
            "a.json",
            "b.json",
            "--x",
            "c",
            "--mcp-config={}",
        ]);
        let v = mcp_config_values(&argv);
        assert_eq!(
            v,
            [OsStr::new("a.json"), OsStr::new("b.json"), OsStr::new("{}")]
        );
    }

    #[test]
    fn empty_mcp_config_is_valid_json_and_removed_on_drop() {
        let f = write_empty_mcp_config_tempfile().unwrap();
        let p = f.path().to_path_buf();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), EMPTY_MCP_CONFIG);
        drop(f);
        assert!(!p.exists());
    }
}
