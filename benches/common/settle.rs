//! Waiting for the work a post-commit or `Stop` hook left to a process of its own.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

/// Wait (10 s at most) until the process that the last post-commit or `Stop` hook logged in
/// the store at `store` left its work to has ended, if one did.
pub fn finished(store: &Path) {
    let log = fs::read_to_string(store.join("log")).unwrap_or_default();
    let Some(pid) = log
        .lines()
        .filter_map(|l| l.split("the rest left to process ").nth(1))
        .next_back()
        .and_then(|p| p.trim().parse::<u32>().ok())
    else {
        return;
    };
    // Gone, or a zombie nobody reaps yet: ended either way.
    let running = || {
        fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    let deadline = Instant::now() + Duration::from_secs(10);
    while running() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(2));
    }
}
