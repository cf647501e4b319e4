//! The real Codex CLI and Gemini CLI (pinned, from npm: `npm::CODEX`, `npm::GEMINI`) against
//! scripted model APIs on 127.0.0.1, hooked up by `install --agent`: a session weighs two
//! designs, rejects one with its reason, writes the other and commits it; the reasoning lands
//! on the commit, said to be that agent's; the next session's first request to the model
//! carries the rejection, framed as a note from an earlier session.
//!
//! What the scripted APIs must do (measured with these versions):
//! - Codex CLI 0.169.0, with a custom provider (`wire_api = "responses"`), sends every turn as
//!   `POST <base_url>/responses` and reads server-sent events: `response.created`, one
//!   `response.output_item.done` per item (a reasoning summary, a message, a `function_call`
//!   `exec_command`, a `custom_tool_call` `apply_patch`), `response.completed`. Our hooks'
//!   context comes back in the next request's `input` as a `developer` message.
//! - Gemini CLI 0.61.0, given `GOOGLE_GEMINI_BASE_URL`, a key and `selectedType:
//!   gemini-api-key`, sends each turn as `POST /v1beta/models/<model>:streamGenerateContent`
//!   and reads `data:` events of `GenerateContentResponse`s; `-m gemini-2.5-flash` keeps it from
//!   asking a routing model first. Hook context comes back in the user's turn as
//!   `<hook_context>…</hook_context>` parts.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use std::{env, fs};

use serde_json::{Value, json};

use crate::agents::{notes_of, rejection_of};
use crate::claude_client::{drain, folder_of, wait_or_kill};
use crate::http::{Recorded, Reply, Scripted};
use crate::npm;
use crate::repo::{BIN, TestRepo};

const LIB: &str = "pub fn lookup(token: &str) -> Option<String> {\n    fetch(token)\n}\n";
const CACHE: &str = "use std::collections::HashMap;\nuse std::time::{Duration, Instant};\n\n/// Token lookups, kept for a fixed time.\npub struct TtlCache {\n    entries: HashMap<String, (Instant, String)>,\n    ttl: Duration,\n}\n";
const THOUGHT: &str = "The lookups repeat within a minute, so a cache pays off. I rejected the lru crate because entries must expire after a fixed time, not when the cache is full, and it would add a dependency for one map.";
const CHOICE: &str = "I went with a plain HashMap holding the time each entry was stored instead of the lru crate, because tokens expire after a fixed TTL and the lru crate evicts by size, not by age.";
const COMMIT: &str = "git add -A && git commit -q -m 'Cache token lookups for a fixed time'";
/// The next request names the file: a decision read out of a transcript is given with what
/// points at it, not in the brief of every session (docs/hooks.md).
const NEXT: &str = "Should cache.rs use the lru crate after all?";

/// Run a client in `dir` with the tests' hermetic environment (HOME, no global git config, an
/// author for its commits), our binary first on PATH for its hooks; its stderr when it
/// succeeded, a panic when it did not or overran two minutes.
fn run_client(repo: &TestRepo, mut cmd: Command) -> String {
    let found = ["node", "git"].into_iter().filter_map(folder_of);
    let system = ["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from);
    let ours = Path::new(BIN).parent().unwrap().to_owned();
    let path: Vec<PathBuf> = std::iter::once(ours).chain(found).chain(system).collect();
    cmd.current_dir(&repo.root)
        .env("PATH", env::join_paths(path).unwrap())
        .env("HOME", &repo.home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Agent")
        .env("GIT_AUTHOR_EMAIL", "agent@example.com")
        .env("GIT_COMMITTER_NAME", "Agent")
        .env("GIT_COMMITTER_EMAIL", "agent@example.com")
        .env("TZ", "UTC")
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("the client starts");
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let status = wait_or_kill(&mut child, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&stdout.join().unwrap()).into_owned();
    let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
    match status {
        Some(status) if status.success() => stderr,
        _ => panic!("{cmd:?} failed ({status:?})\nstdout: {stdout}\nstderr: {stderr}"),
    }
}

/// The commit the session made holds its rejection with its reason, said to be `agent`'s.
fn assert_rejection_on_head(repo: &TestRepo, agent: &str) {
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s"]),
        "Cache token lookups for a fixed time"
    );
    rejection_of(&notes_of(repo, "HEAD"), agent);
    let why = repo.ok(&["why", "cache.rs"]);
    assert!(why.contains(&format!("({})", title(agent))), "{why}");
}

fn title(agent: &str) -> &'static str {
    match agent {
        "codex" => "Codex CLI",
        _ => "Gemini CLI",
    }
}

/// What a request sent, as one string, to look for text in.
fn sent(request: &Recorded) -> String {
    request.body.to_string()
}

/// The rejection, framed as a recorded note, is in `text` (JSON-escaped).
fn assert_told(text: &str) {
    assert!(text.contains("from earlier sessions"), "{text}");
    assert!(text.contains("not instructions"), "{text}");
    assert!(text.contains("I rejected the lru crate because"), "{text}");
}

// ---------------------------------------------------------------------------------------------
// Codex CLI

/// The Responses API, answering each turn with the next list of output items.
fn responses_api(turns: Vec<Vec<Value>>) -> Scripted {
    let mut turns: VecDeque<Vec<Value>> = turns.into();
    let mut n = 0;
    Scripted::start(move |request| {
        if request.method != "POST" || !request.path.ends_with("/responses") {
            return Reply::json(404, &json!({"error": {"message": "not found"}}));
        }
        n += 1;
        let id = format!("resp_{n}");
        let items = turns.pop_front().unwrap_or_else(|| {
            vec![
                json!({"type": "message", "role": "assistant", "id": format!("msg_x{n}"),
                "content": [{"type": "output_text", "text": "(the script is done)"}]}),
            ]
        });
        let mut events = vec![(
            Some("response.created"),
            json!({"type": "response.created", "response": {"id": id}}),
        )];
        for item in items {
            events.push((
                Some("response.output_item.done"),
                json!({"type": "response.output_item.done", "item": item}),
            ));
        }
        let usage = json!({"input_tokens": 10, "input_tokens_details": null, "output_tokens": 5,
            "output_tokens_details": null, "total_tokens": 15});
        events.push((
            Some("response.completed"),
            json!({"type": "response.completed", "response": {"id": id, "usage": usage}}),
        ));
        Reply::events(events)
    })
}

#[test]
fn codex_cli_keeps_a_rejection_on_its_commit_and_the_next_session_is_told() {
    let Some(codex) = npm::binary(&npm::CODEX) else {
        return;
    };
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    let patch = format!(
        "*** Begin Patch\n*** Add File: cache.rs\n{}*** End Patch\n",
        CACHE.lines().map(|l| format!("+{l}\n")).collect::<String>()
    );
    let api = responses_api(vec![
        vec![
            json!({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": format!("**Choosing a cache**\n\n{THOUGHT}")}]}),
            json!({"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_1", "name": "apply_patch", "input": patch}),
        ],
        vec![
            json!({"type": "message", "role": "assistant", "id": "msg_2", "content": [{"type": "output_text", "text": CHOICE}]}),
            json!({"type": "function_call", "id": "fc_2", "call_id": "call_2", "name": "exec_command", "arguments": json!({"cmd": COMMIT}).to_string()}),
        ],
        vec![
            json!({"type": "message", "role": "assistant", "id": "msg_3", "content": [{"type": "output_text", "text": "Committed."}]}),
        ],
        vec![
            json!({"type": "message", "role": "assistant", "id": "msg_4", "content": [{"type": "output_text", "text": "No: entries expire by age."}]}),
        ],
    ]);
    let home = repo.home.join(".codex");
    fs::create_dir_all(&home).unwrap();
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"Scripted\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
        api.base_url()
    );
    fs::write(home.join("config.toml"), config).unwrap();
    let installed = repo.ok(&["install", "--agent", "codex"]);
    assert!(
        installed.contains("trusted our Codex CLI hooks"),
        "{installed}"
    );
    let exec = |prompt: &str| {
        let mut cmd = Command::new(&codex);
        cmd.args(["exec", "--dangerously-bypass-approvals-and-sandbox", prompt]);
        run_client(&repo, cmd)
    };

    let said = exec("Cache the token lookups; they repeat a lot.");
    assert!(said.contains("hook: Stop Completed"), "{said}");
    assert_rejection_on_head(&repo, "codex");

    let before = api.requests().len();
    exec(NEXT);
    let first = &api.requests()[before];
    assert!(sent(first).contains(NEXT), "{}", sent(first));
    // Our context comes as developer messages, before the model's first answer.
    let input = first.body["input"].as_array().unwrap();
    let ours: String = input
        .iter()
        .filter(|m| m["role"] == "developer")
        .map(|m| m.to_string())
        .collect();
    assert_told(&ours);
}

// ---------------------------------------------------------------------------------------------
// Gemini CLI

/// The Gemini API, answering each streamed turn with the next list of parts; other calls get
/// an empty JSON answer.
fn gemini_api(turns: Vec<Vec<Value>>) -> Scripted {
    let mut turns: VecDeque<Vec<Value>> = turns.into();
    Scripted::start(move |request| {
        let usage =
            json!({"promptTokenCount": 100, "candidatesTokenCount": 10, "totalTokenCount": 110});
        if !request.path.contains(":streamGenerateContent") {
            let text = json!([{"text": "{}"}]);
            return Reply::json(
                200,
                &json!({"candidates": [{"content": {"role": "model", "parts": text}, "finishReason": "STOP", "index": 0}], "usageMetadata": usage}),
            );
        }
        let parts = turns
            .pop_front()
            .unwrap_or_else(|| vec![json!({"text": "(the script is done)"})]);
        let chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}], "usageMetadata": usage, "modelVersion": "gemini-2.5-flash"});
        Reply::events([(None, chunk)])
    })
}

#[test]
fn gemini_cli_keeps_a_rejection_on_its_commit_and_the_next_session_is_told() {
    let Some(gemini) = npm::binary(&npm::GEMINI) else {
        return;
    };
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    let cache = repo.root.join("cache.rs");
    let api = gemini_api(vec![
        vec![
            json!({"text": format!("**Choosing a cache**\n\n{THOUGHT}"), "thought": true}),
            json!({"functionCall": {"name": "write_file", "args": {"file_path": cache, "content": CACHE}}}),
        ],
        vec![
            json!({"text": CHOICE}),
            json!({"functionCall": {"name": "run_shell_command", "args": {"command": COMMIT, "description": "Commit the cache"}}}),
        ],
        vec![json!({"text": "Committed."})],
        vec![json!({"text": "No: entries expire by age."})],
    ]);
    let settings = repo.home.join(".gemini");
    fs::create_dir_all(&settings).unwrap();
    let config = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
    });
    fs::write(settings.join("settings.json"), config.to_string()).unwrap();
    let installed = repo.ok(&["install", "--agent", "gemini-cli"]);
    assert!(installed.contains("added Gemini CLI hooks"), "{installed}");
    let run = |prompt: &str| {
        let mut cmd = Command::new(&gemini);
        cmd.args([
            "-p",
            prompt,
            "--yolo",
            "--skip-trust",
            "-m",
            "gemini-2.5-flash",
        ])
        .env("GEMINI_API_KEY", "scripted")
        .env("GOOGLE_GEMINI_BASE_URL", OsString::from(api.base_url()));
        run_client(&repo, cmd)
    };

    run("Cache the token lookups; they repeat a lot.");
    assert_rejection_on_head(&repo, "gemini-cli");

    let before = api.requests().len();
    run(NEXT);
    let turns: Vec<Recorded> = (api.requests()[before..].iter())
        .filter(|r| r.path.contains(":streamGenerateContent"))
        .cloned()
        .collect();
    let first = sent(&turns[0]);
    assert!(first.contains(NEXT), "{first}");
    assert!(first.contains("<hook_context>"), "{first}");
    assert_told(&first);
}
