//! A handed-off child outlives the supervisor that started it: not in the teardown
//! registry, in its own session and process group, with no pipes to its parent.

use crate::common;

use std::time::Duration;

use common::{assert_group_gone, group_members, wait_for};
use loci_supervisor::{SpawnSpec, Supervisor};

#[test]
fn handed_off_child_outlives_its_supervisor_in_its_own_group() {
    let sup = Supervisor::new();
    let pid = sup
        .hand_off(SpawnSpec::new("sh").args(["-c", "sleep 30"]))
        .unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || !group_members(pid).is_empty()),
        "the child never led its own group"
    );
    assert_eq!(
        sup.live_children(),
        0,
        "a handed-off child is not supervised"
    );
    // Dropping the supervisor tears down its children (and waits for them): not this one.
    drop(sup);
    assert!(
        group_members(pid).iter().any(|(p, _)| *p == pid),
        "the handed-off child was torn down with its supervisor"
    );
    // SAFETY: signals the group the child leads (its pid, unreaped by us until now).
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
    assert_group_gone(pid);
}
