//! Test helpers: the loopback page server and shared browser of `shepherd-testkit`, and a
//! process-group probe for the launch tests.
#![allow(dead_code)]
// Test and benchmark code: a panic here is a failed run, not a crash a peer can cause.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub use shepherd_testkit::pages::*;
pub use shepherd_testkit::patience;

/// Live members of process group `pgid` once they are all gone, or once the patience-scaled
/// `limit` has passed (whatever is left then). Processes die a moment after their group is
/// killed: a wait for a condition.
pub async fn group_members_within(pgid: u32, limit: std::time::Duration) -> Vec<u32> {
    let deadline = std::time::Instant::now() + patience(limit);
    loop {
        let left = group_members(pgid);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Live (non-zombie) processes in process group `pgid`.
pub fn group_members(pgid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the parenthesised command: state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() > 2 && fields[2] == pgid.to_string() && fields[0] != "Z" {
            out.push(pid);
        }
    }
    out
}
