//! Same-API registration stays idempotent (in a process of its own: it counts the
//! process's teardown hooks, with LOCI_HOME at a temp dir).

use loci_mcp::{Host, HostOptions, LociMcp};

use crate::alone;

#[test]
fn same_api_registration_stays_idempotent() {
    const TEST: &str = "same_api_registration_stays_idempotent";
    if !alone::here(module_path!(), TEST) {
        let home = tempfile::tempdir().unwrap();
        let xdg = home.path().join("xdg");
        let env = [
            ("LOCI_HOME", home.path().as_os_str()),
            ("XDG_CONFIG_HOME", xdg.as_os_str()),
        ];
        return alone::run(module_path!(), TEST, &env);
    }
    let dir = tempfile::tempdir().unwrap();
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
