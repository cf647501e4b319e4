//! The environment the benchmarks run git and the binary in (nothing of the user's), and
//! running a program there.

use std::path::Path;
use std::process::{Command, Output};

/// `cmd` with `home` as its HOME, no global or system git configuration, a fixed identity, and
/// no session or Claude Code folder of the caller's.
pub fn hermetic<'c>(cmd: &'c mut Command, home: &Path) -> &'c mut Command {
    cmd.env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Bench")
        .env("GIT_AUTHOR_EMAIL", "bench@example.com")
        .env("GIT_COMMITTER_NAME", "Bench")
        .env("GIT_COMMITTER_EMAIL", "bench@example.com")
        .env_remove("CLAUDE_CODE_SESSION_ID")
        .env_remove("CLAUDE_CONFIG_DIR")
}

/// Run `cmd` to its end; it must succeed (else what it said on stderr is the panic).
pub fn succeeded(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
