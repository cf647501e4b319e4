//! `distill.mode = "claude"`: the request goes through the user's own Claude Code (`claude -p`
//! on PATH), logged in as they are — no key of ours. It runs with no tools, no MCP servers, no
//! session saved, its own system prompt and the text on stdin, in the temporary folder (outside
//! any repository, so that no hook of ours distils the distillation), in its own process group,
//! killed with it past the timeout.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::api::{Answer, Error};

/// Ask `model`, through `claude -p`, with `system` and `text`, within `timeout`.
pub fn send(model: &str, system: &str, text: &str, timeout: Duration) -> Result<Answer, Error> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new("claude")
        .args(["-p", "--output-format", "json", "--model", model])
        .args(["--system-prompt", system])
        .args([
            "--tools",
            "",
            "--strict-mcp-config",
            "--no-session-persistence",
        ])
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| Error::Transport(format!("cannot run claude: {e}")))?;
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
    })
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
}

#[derive(Default, Deserialize)]
#[serde(default)]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
}
