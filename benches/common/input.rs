//! Running a program with its standard input given, as git hooks and Claude Code hooks are.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Run `cmd` with `input` on its standard input and its output captured.
pub fn output_with(cmd: &mut Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}
