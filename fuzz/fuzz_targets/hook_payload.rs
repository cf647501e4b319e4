//! The hooks' stdin: a Claude Code hook's JSON payload (`deliver::hooks::Payload`, read by
//! `cli::hook` as a UTF-8 string), then what the hooks do with it that needs no repository:
//! the tool input read as `ToolInput` and turned into a read or search event (`PostToolUse`),
//! scrubbed of what the tool's response shows of excluded files (as if the file read were
//! one, and the lines a search printed), and the file a file tool names (`PreToolUse`). The same bytes also go through git's
//! `post-rewrite` stdin parser.
//!
//! Beyond "never panics": an event made from a payload fits the format and survives the
//! pending queue's JSON line and a note round trip unchanged.
#![no_main]

use std::path::Path;
use std::sync::LazyLock;

use git_agent_context::classify::redact::{Cleaner, Redactor, Taint};
use git_agent_context::classify::tools::{operation, relative};
use git_agent_context::deliver::hooks::Payload;
use git_agent_context::event::{Event, SUMMARY_MAX, note};
use git_agent_context::ingest::commit::rewritten_pairs;
use git_agent_context::transcript::record::{ToolInput, text};
use libfuzzer_sys::fuzz_target;

static REDACTOR: LazyLock<Redactor> = LazyLock::new(Redactor::default);

fuzz_target!(|data: &[u8]| {
    // `cli::hook` reads stdin with `read_to_string`: anything else is refused before parsing.
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    // At most one pair a line.
    assert!(rewritten_pairs(input).len() <= input.lines().count());
    let Ok(payload) = serde_json::from_str::<Payload>(input) else {
        return;
    };
    // PreToolUse: the file a file tool is about to touch.
    let _ = payload
        .tool_input
        .as_ref()
        .and_then(|i| i.get("file_path"))
        .and_then(|p| p.as_str());
    // PostToolUse, as `capture` does it.
    let (Some(tool), Some(tool_input)) = (payload.tool_name.as_deref(), &payload.tool_input) else {
        return;
    };
    let raw = tool_input.to_string();
    let tool_input: ToolInput<'_> = serde_json::from_str(&raw).unwrap_or_default();
    let workdir = Path::new("/home/me/project");
    let file = text(&tool_input.file_path)
        .map(|path| relative(Some(workdir), path))
        .filter(|f| !Path::new(f).is_absolute());
    let mut taint = Taint::default();
    if let Some(response) = &payload.tool_response {
        // Both ways: as the response of a read of an excluded file, and of a search.
        taint.add_response(tool, response, true, |p| REDACTOR.excluded(p));
        taint.add_response("Grep", response, false, |p| REDACTOR.excluded(p));
    }
    let clean = Cleaner {
        redactor: &REDACTOR,
        taint: &taint,
    };
    let Some(event) = operation(
        &payload.session_id,
        tool,
        &tool_input,
        file.as_deref(),
        "2026-01-01T00:00:00Z",
        &clean,
    ) else {
        return;
    };
    let chars = event.summary.chars().count();
    assert!(chars <= SUMMARY_MAX, "summary of {chars} characters");
    let line = serde_json::to_vec(&event).expect("events serialize");
    assert!(!line.contains(&b'\n'), "a queue line must be one line");
    let queued: Event = serde_json::from_slice(&line).expect("a queued event reads back");
    assert_eq!(queued, event);
    assert_eq!(
        note::decode(&note::encode(std::slice::from_ref(&event))),
        (vec![event], 0)
    );
});
