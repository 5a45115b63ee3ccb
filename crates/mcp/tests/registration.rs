//! Same-API registration stays idempotent (the only test of this binary: it points
//! LOCI_HOME at a temp dir before any thread starts).

use loci_mcp::{Host, HostOptions, LociMcp};

#[test]
fn same_api_registration_stays_idempotent() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary, before it starts any thread.
    unsafe {
        std::env::set_var("LOCI_HOME", home.path());
        std::env::set_var("XDG_CONFIG_HOME", home.path().join("xdg"));
    }
    assert_eq!(Host::teardown_installs(), 0);
    let host = Host::new(HostOptions {
        workspace: Some(dir.path().to_path_buf()),
        ..Default::default()
    });
    // Registered twice on the same host, and once more by a second host and session.
    host.install_teardown(std::process::exit);
    host.install_teardown(std::process::exit);
    let other = Host::new(HostOptions::default());
    other.install_teardown(std::process::exit);
    let server = LociMcp::new(host.clone());
    server.start_session(false, None);
    server.start_session(false, None);
    assert_eq!(
        Host::teardown_installs(),
        1,
        "the teardown hooks were wired more than once"
    );
    assert_eq!(
        loci_mcp::server::tool_list(false).as_ptr(),
        loci_mcp::server::tool_list(false).as_ptr(),
        "the tool handlers were registered again"
    );
}
