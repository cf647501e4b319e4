//! `distill.mode = "claude"`: the request goes through the user's own Claude Code (`claude -p`
//! on PATH), logged in as they are — no key of ours. It runs with no tools, no MCP servers, no
//! session saved, only the user's own settings (`--setting-sources user`), its own system
//! prompt and the text on stdin, in its own process group, killed with it past the timeout.
//!
//! It runs in a folder made for the run and removed after it, private (0700) and under the
//! user's cache folder: outside any repository (whose `.claude/` settings and hooks are not
//! the user's, and where a hook of ours would distil the distillation), and not in the shared
//! temporary folder, where anyone may plant the `.claude/settings.json` or `CLAUDE.md` that
//! Claude Code loads from its folder and those above it.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::api::{Answer, Error};

/// Ask `model`, through `claude -p`, with `system` and `text`, within `timeout`.
pub fn send(model: &str, system: &str, text: &str, timeout: Duration) -> Result<Answer, Error> {
    use std::os::unix::process::CommandExt;
    let folder = Folder::new().map_err(|e| {
        Error::Transport(format!(
            "cannot make a private folder to run claude in: {e}"
        ))
    })?;
    let mut child = Command::new("claude")
        .args(["-p", "--output-format", "json", "--model", model])
        .args(["--system-prompt", system])
        .args([
            "--tools",
            "",
            "--strict-mcp-config",
            "--no-session-persistence",
            "--setting-sources",
            "user",
        ])
        .current_dir(&folder.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::NotStarted(e.to_string()))?;
    let mut stdin = child.stdin.take().expect("piped");
    let text = text.to_owned();
    std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(None) => {
                // The whole group: whatever claude started goes with it.
                let _ = Command::new("kill")
                    .args(["-KILL", "--", &format!("-{}", child.id())])
                    .stderr(Stdio::null())
                    .status();
                let _ = child.wait();
                return Err(Error::Timeout(timeout));
            }
            Err(e) => return Err(Error::Transport(format!("cannot wait for claude: {e}"))),
        }
    };
    let bytes = reader.join().unwrap_or_default();
    let result: Output = serde_json::from_slice(&bytes).map_err(|e| {
        Error::Malformed(format!(
            "claude exited {status} without its JSON result ({e})"
        ))
    })?;
    if result.is_error {
        return Err(Error::Claude(crate::sanitise::line(&result.result)));
    }
    Ok(Answer {
        text: result.result,
        input_tokens: result.usage.input_tokens
            + result.usage.cache_creation_input_tokens
            + result.usage.cache_read_input_tokens,
        output_tokens: result.usage.output_tokens,
        cut: result.stop_reason.as_deref() == Some("max_tokens"),
    })
}

/// A folder of this run's own, private, under the user's cache folder; removed when dropped.
struct Folder(PathBuf);

impl Folder {
    fn new() -> std::io::Result<Folder> {
        use std::os::unix::fs::DirBuilderExt;
        let cache = match std::env::var_os("XDG_CACHE_HOME").map(PathBuf::from) {
            Some(dir) if dir.is_absolute() => dir,
            _ => match std::env::var_os("HOME").map(PathBuf::from) {
                Some(home) if home.is_absolute() => home.join(".cache"),
                _ => {
                    return Err(std::io::Error::other(
                        "neither XDG_CACHE_HOME nor HOME is set",
                    ));
                }
            },
        };
        let parent = cache.join("git-agent-context");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&parent)?;
        // A name nobody could have made before: one that exists is never used.
        let pid = std::process::id();
        let mut last = None;
        for attempt in 0..100 {
            let nanos = (std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH))
                .map_or(0, |d| d.subsec_nanos());
            let path = parent.join(format!("claude-{pid}-{nanos:09}-{attempt}"));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Folder(path)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| std::io::Error::other("no free name")))
    }
}

impl Drop for Folder {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What `claude -p --output-format json` prints.
#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    is_error: bool,
    #[serde(default)]
    result: String,
    #[serde(default)]
    usage: Usage,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
}
