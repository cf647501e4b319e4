//! The real Claude Code against a scripted model: the pinned CLI (`@anthropic-ai/claude-code`
//! 2.1.330 from npm, kept in `target/claude-code/`) run with `claude -p`, talking to a Messages
//! API served by this module on 127.0.0.1. Tests script what the model answers and read what it
//! was sent, so they see our hooks from the model's side: what Claude Code injected, and where.
//!
//! Use: `let Some(bin) = claude_binary() else { return };` (it prints the skip line), then
//! `MockApi::main_loop([Turn::new().thinking(..).text(..).tool_use("Write", json!(..)), ..])`,
//! `Claude::new(&bin, &api, &home).run(&dir, "prompt")` and `api.requests_of(Kind::Main)`.
//!
//! What 2.1.330 sends with the environment [`Claude`] sets (measured; strace shows no connection
//! but the one to this server, and DNS only without `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`):
//! - Every model call is `POST /v1/messages?beta=true`, `"stream": true`, a `Content-Length`
//!   body (never chunked, though chunked bodies are read too) on one keep-alive connection.
//!   No non-streaming call, no `count_tokens`, no title or topic request in `-p` mode, even for
//!   a Bash tool call. Without `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC` it also sends
//!   `HEAD /api/hello` first, answered 200 here.
//! - Main-loop calls carry `tools` (12 of them) and `thinking: {type: adaptive}`. The messages
//!   start with a `user` message (`<system-reminder>` blocks for git status and attribution,
//!   then the prompt), followed by a **`role: "system"` message** (beta
//!   `per-turn-control-2026-07-01`) whose one text holds the environment, skills, date and every
//!   hook context, each as `<Event> hook additional context: <context>`, sections joined by a
//!   blank line, no `<system-reminder>` wrapper. It is sent as a content-block list the first
//!   time and as a plain string when replayed. Assistant turns come back with their thinking
//!   blocks and signatures.
//! - `/compact` (as `-p /compact`) fires PreCompact, sends the compaction call, then PostCompact
//!   and SessionStart `compact`; it makes no main-loop call afterwards, so the compact context
//!   reaches the model on the next prompt of a resumed run. The compaction call looks like a
//!   main-loop call (same tools) whose last user message ends with a text starting
//!   `CRITICAL: Respond with TEXT ONLY` and containing `Your task is to create a detailed
//!   summary`: [`Kind::Compaction`]. An answer without `<summary>` tags is asked for again once
//!   with a sterner instruction, so the default answer has them. PostCompact gets the answer
//!   verbatim as `compact_summary`. After compaction the first message is the `user` string
//!   `This session is being continued from a previous conversation…` with `Summary:\n<the
//!   summary>`, then an empty `system` message; the next prompt's `system` message holds the
//!   SessionStart `resume` and `compact` contexts and UserPromptSubmit's, and the startup
//!   context is gone with the summarized turns.
//! - A Messages call without `tools` would be a side request ([`Kind::Side`]: title generation
//!   and the like in interactive sessions); none occurs with `-p`. They get a short text.
//! - Claude Code merges streamed assistant messages that share a message id, so every answer
//!   here has its own.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use std::{env, fs, thread};

use serde_json::{Value, json};

use crate::http::{self, Reply, lock};
use crate::npm;
use crate::repo::TestRepo;

/// The summary in the default answer to a compaction call (PostCompact's `compact_summary`).
pub const COMPACT_SUMMARY: &str = "Scripted summary of the conversation so far.";

// ---------------------------------------------------------------------------------------------
// The binary

/// The pinned Claude Code CLI, installed on first use ([`npm::binary`]): a test starts with
/// `let Some(bin) = claude_binary() else { return };`.
pub fn claude_binary() -> Option<PathBuf> {
    npm::binary(&npm::CLAUDE_CODE)
}

// ---------------------------------------------------------------------------------------------
// What the model is sent

/// Which kind of call a request is; see the module docs for how each looks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `POST /v1/messages` with `tools`: the agent loop.
    Main,
    /// The `/compact` summary call (auto-compaction presumably sends the same).
    Compaction,
    /// `POST /v1/messages` without tools (title generation and the like; not seen with `-p`).
    Side,
    /// Anything else: `HEAD /api/hello`, `count_tokens`, unknown paths.
    Other,
}

/// One HTTP request the server received.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent, query string included (`/v1/messages?beta=true`).
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The JSON body; `Null` when empty, a string when it is not JSON.
    pub body: Value,
    pub kind: Kind,
}

impl Request {
    fn new(method: String, path: String, headers: Vec<(String, String)>, body: &[u8]) -> Request {
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(body)
                .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()))
        };
        let kind = classify(&method, &path, &body);
        Request {
            method,
            path,
            headers,
            body,
            kind,
        }
    }

    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The conversation as sent.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map_or(&[], Vec::as_slice)
    }

    /// Every string in the system prompt and the messages (texts, thinking, tool inputs and
    /// results), decoded.
    pub fn texts(&self) -> Vec<&str> {
        let mut out = Vec::new();
        strings(&self.body["system"], &mut out);
        strings(&self.body["messages"], &mut out);
        out
    }

    /// Whether the system prompt or a message holds `needle`.
    pub fn contains(&self, needle: &str) -> bool {
        self.texts().iter().any(|t| t.contains(needle))
    }

    /// The texts of the `role: "system"` messages, where Claude Code puts hook contexts.
    pub fn system_turns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        for message in self.messages() {
            if message["role"] == "system" {
                strings(&message["content"], &mut out);
            }
        }
        out
    }

    /// The `tool_result` blocks of the last message: what the tools of the previous turn gave.
    pub fn tool_results(&self) -> Vec<&Value> {
        let Some(last) = self.messages().last() else {
            return Vec::new();
        };
        let blocks = last["content"].as_array().map_or(&[][..], Vec::as_slice);
        blocks
            .iter()
            .filter(|b| b["type"] == "tool_result")
            .collect()
    }
}

/// The strings of `value` that carry content: all of them, but for the bookkeeping fields of
/// messages and content blocks (role, type, ids, signatures, cache control).
fn strings<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
    const BOOKKEEPING: [&str; 8] = [
        "type",
        "role",
        "id",
        "name",
        "tool_use_id",
        "signature",
        "cache_control",
        "output_config",
    ];
    match value {
        Value::String(s) => out.push(s),
        Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
        Value::Object(fields) => {
            let block = fields.contains_key("type") || fields.contains_key("role");
            fields
                .iter()
                .filter(|(key, _)| !(block && BOOKKEEPING.contains(&key.as_str())))
                .for_each(|(_, v)| strings(v, out))
        }
        _ => {}
    }
}

fn classify(method: &str, path: &str, body: &Value) -> Kind {
    let route = path.split('?').next().unwrap_or_default();
    if method != "POST" || route != "/v1/messages" {
        return Kind::Other;
    }
    let last_user_texts = body["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| {
            let mut texts = Vec::new();
            strings(&m["content"], &mut texts);
            texts
        })
        .unwrap_or_default();
    if last_user_texts
        .iter()
        .any(|t| t.contains("Your task is to create a detailed summary"))
    {
        Kind::Compaction
    } else if body["tools"].as_array().is_some_and(|t| !t.is_empty()) {
        Kind::Main
    } else {
        Kind::Side
    }
}

// ---------------------------------------------------------------------------------------------
// What the model answers

/// One scripted assistant message: its content blocks in order. It stops with `tool_use` when
/// it has a tool call, `end_turn` otherwise.
#[derive(Clone, Debug, Default)]
pub struct Turn {
    blocks: Vec<Block>,
}

#[derive(Clone, Debug)]
enum Block {
    Thinking(String),
    Text(String),
    ToolUse { name: String, input: Value },
}

impl Turn {
    pub fn new() -> Turn {
        Turn::default()
    }

    /// A thinking block (sent as `thinking_delta`s then a `signature_delta`).
    pub fn thinking(mut self, text: &str) -> Turn {
        self.blocks.push(Block::Thinking(text.to_owned()));
        self
    }

    pub fn text(mut self, text: &str) -> Turn {
        self.blocks.push(Block::Text(text.to_owned()));
        self
    }

    /// A tool call; its id is `toolu_scripted_<n>`, unique within the server.
    pub fn tool_use(mut self, name: &str, input: Value) -> Turn {
        self.blocks.push(Block::ToolUse {
            name: name.to_owned(),
            input,
        });
        self
    }

    fn stop_reason(&self) -> &'static str {
        let calls = self
            .blocks
            .iter()
            .any(|b| matches!(b, Block::ToolUse { .. }));
        if calls { "tool_use" } else { "end_turn" }
    }

    fn default_for(kind: Kind) -> Turn {
        match kind {
            Kind::Compaction => Turn::new().text(&format!(
                "<analysis>Scripted analysis.</analysis>\n\n<summary>{COMPACT_SUMMARY}</summary>"
            )),
            Kind::Side => Turn::new().text("OK"),
            Kind::Main | Kind::Other => Turn::new().text("(the script has no turn for this call)"),
        }
    }
}

type Script = Box<dyn FnMut(&Request) -> Option<Turn> + Send>;

/// A scripted Anthropic Messages API on 127.0.0.1, alive until dropped. It keeps every request
/// in arrival order.
pub struct MockApi {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

struct Shared {
    requests: Mutex<Vec<Request>>,
    script: Mutex<Script>,
    ids: AtomicU64,
    stopping: Arc<AtomicBool>,
}

impl MockApi {
    /// Serve with `script` asked about every Messages call; `None` gives the default answer
    /// for its [`Kind`]: a short text, or a compaction summary with [`COMPACT_SUMMARY`]. A
    /// panicking script answers 400 (not retried), so the run fails fast.
    pub fn start(script: impl FnMut(&Request) -> Option<Turn> + Send + 'static) -> MockApi {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared {
            requests: Mutex::new(Vec::new()),
            script: Mutex::new(Box::new(script)),
            ids: AtomicU64::new(1),
            stopping: Arc::new(AtomicBool::new(false)),
        });
        let serving = Arc::clone(&shared);
        http::accept(listener, Arc::clone(&shared.stopping), move |stream| {
            let _ = serve(stream, &serving);
        });
        MockApi { addr, shared }
    }

    /// Answer the main-loop calls with `turns` in order (then the default text); side and
    /// compaction calls get the defaults.
    pub fn main_loop(turns: impl IntoIterator<Item = Turn>) -> MockApi {
        let mut turns: VecDeque<Turn> = turns.into_iter().collect();
        MockApi::start(move |request| match request.kind {
            Kind::Main => turns.pop_front(),
            _ => None,
        })
    }

    /// `http://127.0.0.1:<port>`, for `ANTHROPIC_BASE_URL`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Request> {
        lock(&self.shared.requests).clone()
    }

    /// The requests of one kind, in arrival order.
    pub fn requests_of(&self, kind: Kind) -> Vec<Request> {
        let all = lock(&self.shared.requests);
        all.iter().filter(|r| r.kind == kind).cloned().collect()
    }
}

impl Drop for MockApi {
    fn drop(&mut self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr); // wakes the accept loop so it sees `stopping`
    }
}

/// One keep-alive connection: each request recorded, then answered.
fn serve(stream: TcpStream, shared: &Shared) -> io::Result<()> {
    http::serve(stream, &|incoming| {
        let request = Request::new(
            incoming.method,
            incoming.path,
            incoming.headers,
            &incoming.body,
        );
        lock(&shared.requests).push(request.clone());
        let (status, content_type, body) = shared.answer(&request);
        Reply {
            status,
            content_type,
            body,
        }
    })
}

impl Shared {
    /// Status, content type and body for `request`.
    fn answer(&self, request: &Request) -> (u16, &'static str, Vec<u8>) {
        let route = request.path.split('?').next().unwrap_or_default();
        if request.kind == Kind::Other {
            return match (request.method.as_str(), route) {
                ("HEAD", _) => (200, "application/json", Vec::new()),
                ("POST", "/v1/messages/count_tokens") => {
                    let tokens = request.body.to_string().len() / 4;
                    json_answer(200, &json!({ "input_tokens": tokens }))
                }
                _ => json_answer(404, &api_error("not_found_error", "no such route")),
            };
        }
        let scripted = catch_unwind(AssertUnwindSafe(|| (lock(&self.script))(request)));
        let turn = match scripted {
            Ok(turn) => turn.unwrap_or_else(|| Turn::default_for(request.kind)),
            Err(_) => {
                let error = api_error("invalid_request_error", "the test's script panicked");
                return json_answer(400, &error);
            }
        };
        let model = request.body["model"].as_str().unwrap_or("claude-scripted");
        let input_tokens = request.body.to_string().len() / 4;
        let message_id = format!("msg_scripted_{}", self.ids.fetch_add(1, Ordering::SeqCst));
        let blocks: Vec<Value> = turn
            .blocks
            .iter()
            .map(|block| match block {
                Block::Thinking(text) => {
                    json!({"type": "thinking", "thinking": text, "signature": "c2NyaXB0ZWQ="})
                }
                Block::Text(text) => json!({"type": "text", "text": text}),
                Block::ToolUse { name, input } => {
                    let id = format!("toolu_scripted_{}", self.ids.fetch_add(1, Ordering::SeqCst));
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
            })
            .collect();
        let output_tokens = blocks
            .iter()
            .map(|b| b.to_string().len() / 4)
            .sum::<usize>();
        let usage = json!({
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        });
        if request.body["stream"] != true {
            let message = json!({
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": blocks, "stop_reason": turn.stop_reason(), "stop_sequence": null,
                "usage": usage,
            });
            return json_answer(200, &message);
        }
        let mut events = vec![
            json!({"type": "message_start", "message": {
                "id": message_id, "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                          "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0},
            }}),
            json!({"type": "ping"}),
        ];
        for (index, block) in blocks.iter().enumerate() {
            let (start, deltas) = match block["type"].as_str() {
                Some("thinking") => (
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                    halves(block["thinking"].as_str().unwrap())
                        .map(|t| json!({"type": "thinking_delta", "thinking": t}))
                        .chain([
                            json!({"type": "signature_delta", "signature": block["signature"]}),
                        ])
                        .collect::<Vec<_>>(),
                ),
                Some("text") => (
                    json!({"type": "text", "text": ""}),
                    halves(block["text"].as_str().unwrap())
                        .map(|t| json!({"type": "text_delta", "text": t}))
                        .collect(),
                ),
                _ => (
                    json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                    halves(&block["input"].to_string())
                        .map(|j| json!({"type": "input_json_delta", "partial_json": j}))
                        .collect(),
                ),
            };
            events.push(
                json!({"type": "content_block_start", "index": index, "content_block": start}),
            );
            for delta in deltas {
                events.push(json!({"type": "content_block_delta", "index": index, "delta": delta}));
            }
            events.push(json!({"type": "content_block_stop", "index": index}));
        }
        events.push(json!({
            "type": "message_delta",
            "delta": {"stop_reason": turn.stop_reason(), "stop_sequence": null},
            "usage": {"output_tokens": output_tokens},
        }));
        events.push(json!({"type": "message_stop"}));
        let mut stream = String::new();
        for event in events {
            let name = event["type"].as_str().unwrap().to_owned();
            stream.push_str(&format!("event: {name}\ndata: {event}\n\n"));
        }
        (200, "text/event-stream", stream.into_bytes())
    }
}

/// `text` in two deltas, so the client has to put them together.
fn halves(text: &str) -> impl Iterator<Item = String> {
    let mut middle = text.len() / 2;
    while !text.is_char_boundary(middle) {
        middle += 1;
    }
    let (a, b) = text.split_at(middle);
    [a.to_owned(), b.to_owned()].into_iter()
}

fn json_answer(status: u16, body: &Value) -> (u16, &'static str, Vec<u8>) {
    (status, "application/json", body.to_string().into_bytes())
}

fn api_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

// ---------------------------------------------------------------------------------------------
// Running Claude Code

/// `claude -p` against a [`MockApi`], hermetic: its own HOME, no git config but the
/// repository's, a PATH of node, git and the system folders, no network but the server.
pub struct Claude {
    bin: PathBuf,
    base_url: String,
    home: PathBuf,
    path_first: Vec<PathBuf>,
    vars: Vec<(String, OsString)>,
    timeout: Duration,
}

/// What one run gave.
#[derive(Debug)]
pub struct ClaudeRun {
    pub status: ExitStatus,
    /// `--output-format json`'s result object (`session_id`, `result`, `is_error`, …).
    pub json: Value,
    pub stderr: String,
}

impl ClaudeRun {
    pub fn session_id(&self) -> &str {
        self.json["session_id"]
            .as_str()
            .expect("the result has a session_id")
    }

    /// Panics unless Claude Code exited 0 with a result that is not an error.
    pub fn assert_ok(self) -> ClaudeRun {
        assert!(
            self.status.success() && self.json["is_error"] == false,
            "claude failed ({}): {}\nstderr: {}",
            self.status,
            self.json,
            self.stderr
        );
        self
    }
}

impl Claude {
    /// Runs `bin` against `api` with `home` as HOME (Claude Code keeps its state and transcripts
    /// in `home/.claude`).
    pub fn new(bin: &Path, api: &MockApi, home: &Path) -> Claude {
        Claude {
            bin: bin.to_owned(),
            base_url: api.base_url(),
            home: home.to_owned(),
            path_first: Vec::new(),
            vars: Vec::new(),
            timeout: Duration::from_secs(120),
        }
    }

    /// Put `dir` first on PATH (e.g. the folder of the binary under test, for hooks).
    pub fn path_first(mut self, dir: &Path) -> Claude {
        self.path_first.push(dir.to_owned());
        self
    }

    /// An extra environment variable.
    pub fn env(mut self, key: &str, value: impl Into<OsString>) -> Claude {
        self.vars.push((key.to_owned(), value.into()));
        self
    }

    /// `claude -p <prompt>` in `dir`, a new session.
    pub fn run(&self, dir: &Path, prompt: &str) -> ClaudeRun {
        self.run_args(dir, prompt, &[])
    }

    /// `claude -p <prompt> --resume <session>` in `dir`.
    pub fn resume(&self, dir: &Path, session: &str, prompt: &str) -> ClaudeRun {
        self.run_args(dir, prompt, &["--resume", session])
    }

    /// Where a session started in `dir` keeps its transcript:
    /// `$HOME/.claude/projects/<dir, each non-alphanumeric as '-'>/<session>.jsonl`.
    pub fn transcript(&self, dir: &Path, session: &str) -> PathBuf {
        let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_owned());
        let name: String = dir
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        self.home
            .join(".claude/projects")
            .join(name)
            .join(format!("{session}.jsonl"))
    }

    /// `claude -p <prompt> --allowedTools Bash,Edit,Write,Read --output-format json <extra>`
    /// in `dir`; panics when it overruns the timeout or prints no JSON.
    pub fn run_args(&self, dir: &Path, prompt: &str, extra: &[&str]) -> ClaudeRun {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("-p")
            .arg(prompt)
            .args([
                "--allowedTools",
                "Bash,Edit,Write,Read",
                "--output-format",
                "json",
            ])
            .args(extra)
            .current_dir(dir)
            .env_clear()
            .env("PATH", self.path())
            .env("HOME", &self.home);
        scripted(&mut cmd, &self.base_url);
        cmd.env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("TZ", "UTC")
            .env("LANG", "C.UTF-8")
            .envs(self.vars.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // Its own process group, so that a timeout kills the hooks and tools it started.
            .process_group(0);
        let mut child = cmd.spawn().expect("claude starts");
        let stdout = drain(child.stdout.take().unwrap());
        let stderr = drain(child.stderr.take().unwrap());
        let status = wait_or_kill(&mut child, self.timeout);
        let stdout = stdout.join().unwrap();
        let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
        let Some(status) = status else {
            panic!(
                "claude {prompt:?} ran over {:?} and was killed\nstderr: {stderr}",
                self.timeout
            );
        };
        let json = serde_json::from_slice(&stdout).unwrap_or_else(|e| {
            panic!(
                "claude {prompt:?} printed no JSON ({e}, {status})\nstdout: {}\nstderr: {stderr}",
                String::from_utf8_lossy(&stdout)
            )
        });
        ClaudeRun {
            status,
            json,
            stderr,
        }
    }

    /// The caller's folders, then node's and git's, then the system's.
    fn path(&self) -> OsString {
        let found = ["node", "git"].into_iter().filter_map(folder_of);
        let system = ["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from);
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in self.path_first.iter().cloned().chain(found).chain(system) {
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        env::join_paths(dirs).unwrap()
    }
}

/// The PATH folder holding `program`.
/// What points Claude Code at the scripted API at `base_url`, quietly: no telemetry, no
/// update, no retries.
pub fn scripted(cmd: &mut Command, base_url: &str) {
    cmd.env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("IS_SANDBOX", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        // A broken server fails the run at once instead of after minutes of backoff.
        .env("CLAUDE_CODE_MAX_RETRIES", "0");
}

pub fn folder_of(program: &str) -> Option<PathBuf> {
    let path = env::var_os("PATH")?;
    env::split_paths(&path).find(|dir| dir.join(program).is_file())
}

pub fn drain(mut from: impl Read + Send + 'static) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        bytes
    })
}

/// The exit status, or `None` after killing the process group for overrunning `timeout`. The
/// group is killed after a normal exit too: whatever it left running would hold its pipes.
pub fn wait_or_kill(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for claude") {
            break Some(status);
        }
        if Instant::now() >= deadline {
            break None;
        }
        thread::sleep(Duration::from_millis(10));
    };
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stderr(Stdio::null())
        .status();
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status
}

// ---------------------------------------------------------------------------------------------
// The harness, end to end

/// A command hook for every event the smoke test watches: logs its input to
/// `$HOME/hook-log/<event>.jsonl`; SessionStart answers `MARKER-SessionStart-<source>`,
/// UserPromptSubmit `MARKER-UserPromptSubmit`.
const HOOK: &str = r#"event=$1
input=$(cat)
mkdir -p "$HOME/hook-log"
printf '%s\n' "$input" >> "$HOME/hook-log/$event.jsonl"
case $event in
SessionStart)
    source=$(printf '%s' "$input" | sed -n 's/.*"source":"\([a-z]*\)".*/\1/p')
    context="MARKER-SessionStart-$source" ;;
UserPromptSubmit)
    context="MARKER-UserPromptSubmit" ;;
*)
    exit 0 ;;
esac
printf '{"hookSpecificOutput":{"hookEventName":"%s","additionalContext":"%s"}}\n' "$event" "$context"
"#;

fn install_hooks(repo: &TestRepo) {
    let dir = repo.root.join(".claude");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("hook.sh"), HOOK).unwrap();
    let events = [
        "SessionStart",
        "UserPromptSubmit",
        "PreCompact",
        "PostCompact",
    ];
    let hooks: serde_json::Map<String, Value> = events
        .iter()
        .map(|event| {
            let command = format!("sh \"$CLAUDE_PROJECT_DIR/.claude/hook.sh\" {event}");
            let entry = json!([{"hooks": [{"type": "command", "command": command}]}]);
            (event.to_string(), entry)
        })
        .collect();
    let settings = json!({ "hooks": hooks });
    fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// The inputs the hook for `event` received, in order.
fn hook_inputs(repo: &TestRepo, event: &str) -> Vec<Value> {
    let log = repo.home.join("hook-log").join(format!("{event}.jsonl"));
    let text = fs::read_to_string(log).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn claude_code_runs_hooks_and_the_scripted_model_sees_their_context() {
    let Some(bin) = claude_binary() else { return };
    let repo = TestRepo::new();
    install_hooks(&repo);
    let hello = repo.root.join("hello.txt");
    let api = MockApi::main_loop([
        Turn::new()
            .thinking("A greeting file: Write creates it in one call.")
            .text("I'll create hello.txt.")
            .tool_use(
                "Write",
                json!({"file_path": hello, "content": "hello, world\n"}),
            ),
        Turn::new().text("Created hello.txt."),
    ]);
    let claude = Claude::new(&bin, &api, &repo.home)
        .path_first(Path::new(crate::repo::BIN).parent().unwrap());

    // Session 1: a prompt, a tool call, the end of the turn.
    let first = claude.run(&repo.root, "Create hello.txt").assert_ok();
    let session = first.session_id().to_owned();
    assert_eq!(first.json["result"], "Created hello.txt.", "{}", first.json);
    assert_eq!(fs::read_to_string(&hello).unwrap(), "hello, world\n");
    let main = api.requests_of(Kind::Main);
    assert_eq!(main.len(), 2, "the tool's result goes back to the model");
    assert_eq!(main[0].path, "/v1/messages?beta=true");
    assert_eq!(main[0].header("x-api-key"), Some("test-key"));
    let injected = main[0].system_turns().join("\n");
    assert!(
        injected
            .starts_with("SessionStart hook additional context: MARKER-SessionStart-startup\n\n"),
        "{injected}"
    );
    assert!(
        injected.contains("UserPromptSubmit hook additional context: MARKER-UserPromptSubmit"),
        "{injected}"
    );
    let results = main[1].tool_results();
    assert_eq!(results.len(), 1, "{:?}", main[1].messages().last());
    assert_eq!(results[0]["tool_use_id"], "toolu_scripted_2");
    assert!(
        main[1].contains("A greeting file: Write creates it in one call."),
        "the streamed thinking comes back with the conversation"
    );
    let transcript = claude.transcript(&repo.root, &session);
    assert_eq!(
        transcript,
        repo.project_dir().join(format!("{session}.jsonl"))
    );
    let lines = fs::read_to_string(&transcript).expect("the transcript exists");
    assert!(lines.contains("A greeting file: Write creates it in one call."));

    // `/compact` on the resumed session: the compact hooks run, no main-loop call follows.
    let compacted = claude.resume(&repo.root, &session, "/compact").assert_ok();
    assert_eq!(compacted.session_id(), session);
    assert_eq!(api.requests_of(Kind::Compaction).len(), 1);
    assert_eq!(api.requests_of(Kind::Main).len(), 2);
    let pre = hook_inputs(&repo, "PreCompact");
    assert_eq!(pre.len(), 1, "PreCompact ran once");
    assert_eq!(pre[0]["trigger"], "manual");
    let post = hook_inputs(&repo, "PostCompact");
    let summary = post[0]["compact_summary"].as_str().unwrap_or_default();
    assert!(summary.contains(COMPACT_SUMMARY), "{}", post[0]);
    let sources: Vec<Value> = hook_inputs(&repo, "SessionStart")
        .into_iter()
        .map(|input| input["source"].clone())
        .collect();
    assert_eq!(sources, ["startup", "resume", "compact"]);

    // The next prompt carries the compact context; the startup one was summarized away.
    let next = claude
        .resume(&repo.root, &session, "What next?")
        .assert_ok();
    assert_eq!(next.session_id(), session);
    let main = api.requests_of(Kind::Main);
    assert_eq!(main.len(), 3);
    let after = &main[2];
    let first_text = after.messages()[0]["content"].as_str().unwrap_or_default();
    assert!(
        first_text.starts_with("This session is being continued from a previous conversation"),
        "{first_text}"
    );
    assert!(after.contains(COMPACT_SUMMARY));
    let injected = after.system_turns().join("\n");
    assert!(
        injected.contains("SessionStart hook additional context: MARKER-SessionStart-compact"),
        "{injected}"
    );
    assert!(!after.contains("MARKER-SessionStart-startup"));
    let unexpected: Vec<String> = api
        .requests()
        .iter()
        .filter(|r| !matches!(r.kind, Kind::Main | Kind::Compaction))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(unexpected.is_empty(), "no side requests: {unexpected:?}");
}

/// Send `request` (head and body as bytes) on `stream`; the status, headers and body of the
/// answer (`head_only` for HEAD, whose answer has a length but no body).
fn exchange(
    stream: &mut BufReader<TcpStream>,
    request: &[u8],
    head_only: bool,
) -> (u16, Vec<(String, String)>, Vec<u8>) {
    stream.get_mut().write_all(request).unwrap();
    // A status line parses like a request line: version, then status.
    let (_, status, headers) = http::read_head(stream).unwrap().expect("an answer");
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; if head_only { 0 } else { length }];
    stream.read_exact(&mut body).unwrap();
    (status.parse().unwrap(), headers, body)
}

#[test]
fn the_scripted_api_answers_each_kind_of_request_on_one_connection() {
    let api = MockApi::main_loop([Turn::new()
        .thinking("Think")
        .text("Héllo")
        .tool_use("Bash", json!({"command": "true"}))]);
    let mut conn = BufReader::new(TcpStream::connect(api.addr).unwrap());

    // A main-loop call, its body chunked: the scripted turn as a stream.
    let body = json!({"model": "m", "stream": true, "tools": [{"name": "Bash"}],
                      "messages": [{"role": "user", "content": "hi"}]})
    .to_string();
    let (first, rest) = body.split_at(10);
    let chunked = format!(
        "POST /v1/messages?beta=true HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
         {:x}\r\n{first}\r\n{:x};ext=1\r\n{rest}\r\n0\r\n\r\n",
        first.len(),
        rest.len()
    );
    let (status, headers, stream) = exchange(&mut conn, chunked.as_bytes(), false);
    assert_eq!(status, 200);
    assert!(headers.contains(&("Content-Type".into(), "text/event-stream".into())));
    let events: Vec<Value> = String::from_utf8(stream)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e["delta"]["type"].as_str() {
            Some(delta) => delta.to_owned(),
            None => e["type"].as_str().unwrap().to_owned(),
        })
        .collect();
    #[rustfmt::skip]
    assert_eq!(kinds, [
        "message_start", "ping",
        "content_block_start", "thinking_delta", "thinking_delta", "signature_delta", "content_block_stop",
        "content_block_start", "text_delta", "text_delta", "content_block_stop",
        "content_block_start", "input_json_delta", "input_json_delta", "content_block_stop",
        "message_delta", "message_stop",
    ]);
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "Héllo", "split on a character boundary");
    let input: String = events
        .iter()
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(input, r#"{"command":"true"}"#);
    assert_eq!(events[15]["delta"]["stop_reason"], "tool_use");

    // Keep-alive: the connectivity check, a side call without streaming, count_tokens, 404.
    let (status, _, _) = exchange(&mut conn, b"HEAD /api/hello HTTP/1.1\r\n\r\n", true);
    assert_eq!(status, 200);
    let side = json!({"model": "m", "messages": [{"role": "user", "content": "title?"}]});
    let post = |path: &str, body: &Value| {
        let body = body.to_string();
        let head = format!(
            "POST {path} HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        format!("{head}{body}").into_bytes()
    };
    let (status, _, answer) = exchange(&mut conn, &post("/v1/messages", &side), false);
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&answer).unwrap();
    assert_eq!(answer["content"][0]["text"], "OK");
    assert_eq!(answer["stop_reason"], "end_turn");
    let count = post("/v1/messages/count_tokens?beta=true", &side);
    let (status, _, answer) = exchange(&mut conn, &count, false);
    assert_eq!(status, 200);
    assert!(serde_json::from_slice::<Value>(&answer).unwrap()["input_tokens"].is_u64());
    let (status, _, _) = exchange(&mut conn, b"GET /v1/models HTTP/1.1\r\n\r\n", false);
    assert_eq!(status, 404);

    let seen: Vec<(Kind, String)> = api
        .requests()
        .into_iter()
        .map(|r| (r.kind, format!("{} {}", r.method, r.path)))
        .collect();
    #[rustfmt::skip]
    assert_eq!(seen, [
        (Kind::Main, "POST /v1/messages?beta=true".to_owned()),
        (Kind::Other, "HEAD /api/hello".to_owned()),
        (Kind::Side, "POST /v1/messages".to_owned()),
        (Kind::Other, "POST /v1/messages/count_tokens?beta=true".to_owned()),
        (Kind::Other, "GET /v1/models".to_owned()),
    ]);
    assert_eq!(api.requests()[0].body["messages"][0]["content"], "hi");
}
