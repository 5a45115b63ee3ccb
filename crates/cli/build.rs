//! Link options of the release `loci` binary that shrink what a process keeps resident
//! (docs/performance.md, "MCP footprint"):
//!
//! - `--symbol-ordering-file=startup-order.txt`: the functions an idle `loci mcp`
//!   session runs are placed together at the start of `.text`. The kernel maps code a
//!   page-cache folio (or a 64 KiB fault-around window) at a time, so start-up code
//!   spread over the 19 MB `.text` kept ~11 MB of it resident; packed, it is a few
//!   hundred kilobytes. Names the file lists that no longer exist are ignored
//!   (`scripts/startup-order.py` regenerates it).
//! - `-z pack-relative-relocs` (DT_RELR): the ~49,000 relative relocations of this
//!   position-independent binary take 1.1 MB as RELA entries, every one read by the
//!   loader at start; packed they take a few kilobytes. Needs glibc 2.36 at run time,
//!   so only when the build host (the target of a native build) has it.
//!
//! Both only for a native x86_64 Linux (glibc) release build with the default linker
//! (rust-lld, which has both options); `LOCI_LINK_LAYOUT=off` turns them off.

use std::env;
use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=startup-order.txt");
    println!("cargo:rerun-if-env-changed=LOCI_LINK_LAYOUT");
    let var = |k: &str| env::var(k).unwrap_or_default();
    let wanted = var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && var("HOST") == var("TARGET")
        && var("LOCI_LINK_LAYOUT") != "off"
        // A linker of the user's choosing (`-C linker=`, `-C linker-features`,
        // `-C link-arg=-fuse-ld=...`) may not know the options.
        && !["linker", "fuse-ld"]
            .iter()
            .any(|f| var("CARGO_ENCODED_RUSTFLAGS").contains(f))
        && env::var_os("RUSTC_LINKER").is_none()
        && env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_none();
    if !wanted {
        return;
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("startup-order.txt");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=loci=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=loci=-Wl,--no-warn-symbol-ordering");
    }
    if host_glibc_at_least(2, 36) {
        println!("cargo:rustc-link-arg-bin=loci=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the glibc this build script runs on is at least `major.minor` (a native
/// build's binary runs on the same glibc, or a newer one).
fn host_glibc_at_least(major: u32, minor: u32) -> bool {
    // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string
    // owned by glibc, valid for the life of the process.
    let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
    let mut parts = version
        .to_str()
        .unwrap_or_default()
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (have_major, have_minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    (have_major, have_minor) >= (major, minor)
}
