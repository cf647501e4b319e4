//! Codex CLI's rollouts, translated line by line into Claude Code's records (docs/agents.md).
//!
//! A rollout (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<session>.jsonl`) is JSON Lines,
//! appended to as the session runs: `{"timestamp", "type", "payload"}`, opened by a
//! `session_meta` line (the session id, its folder, the CLI's version), with a `turn_context`
//! line per turn (its model) and the model's conversation as `response_item`s in the shape of
//! OpenAI's Responses API: messages, reasoning summaries, function calls and their outputs.
//! `event_msg` lines repeat the same in another shape and are not read.
//!
//! What a line becomes: a prompt the user typed, a user record (Codex's own context, sent as
//! user messages too, is not a prompt); reasoning and answers, assistant records, one message
//! per model response so that a response's thinking, text and calls stay together as Claude
//! Code keeps them; a shell call, a `Bash` call; an `apply_patch`, a `Write` per file added and
//! a `MultiEdit` per file changed; an output, a tool result, failed when the command's exit code
//! was not 0. The little it remembers between lines (the session, the model, the patches waiting
//! for their output) is saved with the cursor.

use std::fs;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Patches whose output has not come yet; an older one's output is not waited for any longer.
const WAITING_MAX: usize = 64;
/// How much of a rollout's first line is read to find its folder (it holds Codex's whole
/// system prompt).
const HEAD_BYTES_MAX: u64 = 1 << 20;

/// What the translation remembers between lines (and between runs, saved with the cursor).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Translator {
    session_id: String,
    cwd: String,
    version: String,
    branch: String,
    model: String,
    /// Each `apply_patch` call waiting for its output, and the calls it became.
    waiting: Vec<(String, Vec<String>)>,
}

impl Translator {
    /// The records `line` becomes, as JSON lines in Claude Code's shape, appended to `out`.
    /// `false` when the line is not a JSON object.
    pub fn line(&mut self, line: &[u8], out: &mut Vec<String>) -> bool {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(line) else {
            return false;
        };
        let timestamp = str_at(&line, "timestamp").to_owned();
        let Some(payload) = line.get("payload").and_then(Value::as_object) else {
            return true;
        };
        match str_at(&line, "type") {
            "session_meta" => self.session_meta(payload),
            "turn_context" => {
                set(&mut self.cwd, str_at(payload, "cwd"));
                set(&mut self.model, str_at(payload, "model"));
            }
            "compacted" => out.push(self.record(
                &timestamp,
                json!({"type": "system", "subtype": "compact_boundary"}),
            )),
            "response_item" => {
                let metadata = line.get("metadata").and_then(Value::as_object);
                self.item(payload, metadata, &timestamp, out)
            }
            _ => {}
        }
        true
    }

    fn session_meta(&mut self, payload: &serde_json::Map<String, Value>) {
        let id = Some(str_at(payload, "id"))
            .filter(|s| !s.is_empty())
            .unwrap_or(str_at(payload, "session_id"));
        set(&mut self.session_id, id);
        set(&mut self.cwd, str_at(payload, "cwd"));
        set(&mut self.version, str_at(payload, "cli_version"));
        if let Some(git) = payload.get("git").and_then(Value::as_object) {
            set(&mut self.branch, str_at(git, "branch"));
        }
    }

    fn item(
        &mut self,
        item: &serde_json::Map<String, Value>,
        metadata: Option<&serde_json::Map<String, Value>>,
        timestamp: &str,
        out: &mut Vec<String>,
    ) {
        let response = response_of(item, metadata);
        match str_at(item, "type") {
            "message" => match str_at(item, "role") {
                "user" => {
                    if let Some(prompt) = typed_prompt(item) {
                        let uuid = str_at(item, "id");
                        out.push(self.record(
                            timestamp,
                            json!({"type": "user", "uuid": uuid, "message": {"role": "user", "content": prompt}}),
                        ));
                    }
                }
                "assistant" => {
                    let blocks: Vec<Value> = texts(item.get("content"), "output_text")
                        .map(|t| json!({"type": "text", "text": t}))
                        .collect();
                    self.assistant(&response, timestamp, blocks, out);
                }
                _ => {}
            },
            "reasoning" => {
                let thinking: Vec<&str> = texts(item.get("summary"), "summary_text")
                    .chain(texts(item.get("content"), "reasoning_text"))
                    .collect();
                if !thinking.is_empty() {
                    let block = json!({"type": "thinking", "thinking": thinking.join("\n\n")});
                    self.assistant(&response, timestamp, vec![block], out);
                }
            }
            "function_call" | "custom_tool_call" | "local_shell_call" => {
                let blocks = self.call(item);
                self.assistant(&response, timestamp, blocks, out);
            }
            "function_call_output" | "custom_tool_call_output" => self.output(item, timestamp, out),
            _ => {}
        }
    }

    /// The tool calls an item is, in Claude Code's names.
    fn call(&mut self, item: &serde_json::Map<String, Value>) -> Vec<Value> {
        let id = Some(str_at(item, "call_id"))
            .filter(|s| !s.is_empty())
            .unwrap_or(str_at(item, "id"))
            .to_owned();
        let name = str_at(item, "name");
        // Function calls carry their arguments as a JSON string; custom ones as raw text.
        let arguments: Value = item
            .get("arguments")
            .and_then(Value::as_str)
            .and_then(|a| serde_json::from_str(a).ok())
            .unwrap_or(Value::Null);
        let tool_use = |name: &str, input: Value| json!({"type": "tool_use", "id": id, "name": name, "input": input});
        if str_at(item, "type") == "local_shell_call" {
            let command = item.get("action").and_then(|a| a.get("command"));
            return vec![tool_use("Bash", json!({"command": shell_command(command)}))];
        }
        match name {
            "exec_command" => vec![tool_use(
                "Bash",
                json!({"command": arguments.get("cmd").and_then(Value::as_str).unwrap_or("")}),
            )],
            "shell" | "shell_command" | "container.exec" => vec![tool_use(
                "Bash",
                json!({"command": shell_command(arguments.get("command"))}),
            )],
            "apply_patch" => {
                let patch = item
                    .get("input")
                    .and_then(Value::as_str)
                    .or(arguments.get("input").and_then(Value::as_str))
                    .unwrap_or("");
                self.patch(&id, patch)
            }
            "update_plan" => {
                let todos: Vec<Value> = arguments
                    .get("plan")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|step| json!({"content": step.get("step"), "status": step.get("status")}))
                    .collect();
                vec![tool_use("TodoWrite", json!({"todos": todos}))]
            }
            _ => vec![tool_use(name, arguments)],
        }
    }

    /// An `apply_patch` call as the edits it makes: a `Write` per file added, a `MultiEdit` per
    /// file changed (one edit per hunk). A file deleted adds nothing and is not said.
    fn patch(&mut self, id: &str, patch: &str) -> Vec<Value> {
        let (mut calls, mut ids) = (Vec::new(), Vec::new());
        for (n, file) in parse_patch(patch).into_iter().enumerate() {
            let call = match n {
                0 => id.to_owned(),
                n => format!("{id}~{n}"),
            };
            let path = self.absolute(&file.path);
            let (name, input) = match file.change {
                Change::Add(content) => ("Write", json!({"file_path": path, "content": content})),
                Change::Update(hunks) => {
                    let edits: Vec<Value> = hunks
                        .into_iter()
                        .map(|(old, new)| json!({"old_string": old, "new_string": new}))
                        .collect();
                    ("MultiEdit", json!({"file_path": path, "edits": edits}))
                }
            };
            calls.push(json!({"type": "tool_use", "id": call, "name": name, "input": input}));
            ids.push(call);
        }
        self.waiting.push((id.to_owned(), ids));
        if self.waiting.len() > WAITING_MAX {
            self.waiting.remove(0);
        }
        calls
    }

    fn output(
        &mut self,
        item: &serde_json::Map<String, Value>,
        timestamp: &str,
        out: &mut Vec<String>,
    ) {
        let id = str_at(item, "call_id").to_owned();
        let (text, code) = output_of(item.get("output"));
        // A patch that applied says so with its exit code; one that did not is only a message
        // (`apply_patch verification failed: …`). A command's output may say no code at all.
        let (ids, failed) = match self.waiting.iter().position(|(call, _)| *call == id) {
            Some(at) => (self.waiting.remove(at).1, code != Some(0)),
            None => (vec![id], code.is_some_and(|c| c != 0)),
        };
        let blocks: Vec<Value> = ids
            .iter()
            .map(|id| json!({"type": "tool_result", "tool_use_id": id, "content": text, "is_error": failed}))
            .collect();
        out.push(self.record(
            timestamp,
            json!({"type": "user", "message": {"role": "user", "content": blocks}, "toolUseResult": {"stdout": text}}),
        ));
    }

    fn assistant(
        &self,
        response: &str,
        timestamp: &str,
        blocks: Vec<Value>,
        out: &mut Vec<String>,
    ) {
        if blocks.is_empty() {
            return;
        }
        let message =
            json!({"id": response, "model": self.model, "role": "assistant", "content": blocks});
        out.push(self.record(timestamp, json!({"type": "assistant", "message": message})));
    }

    /// A record with what every record of the session carries.
    fn record(&self, timestamp: &str, mut record: Value) -> String {
        if let Value::Object(fields) = &mut record {
            for (key, value) in [
                ("timestamp", timestamp),
                ("sessionId", &self.session_id),
                ("cwd", &self.cwd),
                ("version", &self.version),
                ("gitBranch", &self.branch),
            ] {
                if !value.is_empty() {
                    fields.insert(key.to_owned(), Value::from(value));
                }
            }
        }
        record.to_string()
    }

    /// `path` as the session's folder makes it absolute (a patch names files relative to it).
    fn absolute(&self, path: &str) -> String {
        if super::root::is_absolute(path) || self.cwd.is_empty() {
            return path.to_owned();
        }
        format!("{}/{path}", self.cwd.trim_end_matches('/'))
    }
}

/// What names the model response an item belongs to: the turn and how far into the
/// conversation the model had read when it answered (the items of one response share it),
/// else the item's own id.
fn response_of(
    item: &serde_json::Map<String, Value>,
    metadata: Option<&serde_json::Map<String, Value>>,
) -> String {
    let turn = item
        .get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("turn_id"))
        .and_then(Value::as_str);
    let sampled = metadata
        .and_then(|m| m.get("sampled_through_sequence"))
        .and_then(Value::as_u64);
    match (turn, sampled) {
        (Some(turn), Some(sampled)) => format!("{turn}:{sampled}"),
        _ => str_at(item, "id").to_owned(),
    }
}

/// The text the user typed, if `item` (a user message) is a prompt: Codex sends its own
/// context as user messages too (the environment, AGENTS.md), which current versions mark and
/// older ones wrap in tags.
fn typed_prompt(item: &serde_json::Map<String, Value>) -> Option<String> {
    let kinds = item
        .get("internal_chat_message_metadata_passthrough")
        .and_then(|m| m.get("content_item_kinds"))
        .and_then(Value::as_array);
    if let Some(kinds) = kinds
        && !kinds.iter().any(|k| k.as_str() == Some("user.text"))
    {
        return None;
    }
    let text: Vec<&str> = texts(item.get("content"), "input_text").collect();
    let text = text.join("\n\n");
    let own = [
        "<environment_context>",
        "<user_instructions>",
        "# AGENTS.md instructions",
        "<turn_aborted>",
    ];
    let trimmed = text.trim_start();
    (!trimmed.is_empty() && !own.iter().any(|tag| trimmed.starts_with(tag))).then_some(text)
}

/// The texts of the parts of `kind` in a list of content parts.
fn texts<'a>(parts: Option<&'a Value>, kind: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(move |p| p.get("type").and_then(Value::as_str) == Some(kind))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
}

/// A shell call's command: a string, or an argument list whose last word is the script given
/// to `bash -lc`.
fn shell_command(command: Option<&Value>) -> String {
    match command {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(words)) => {
            let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [shell, flag, script] if shell.ends_with("sh") && flag.starts_with('-') => {
                    (*script).to_owned()
                }
                _ => words.join(" "),
            }
        }
        _ => String::new(),
    }
}

/// What a call's output said and its exit code when it says one: the text after `Output:`,
/// and the code Codex wrote before it (`Process exited with code N`, `Exit code: N`), or, in
/// older rollouts, a JSON object with `output` and `metadata.exit_code`.
fn output_of(output: Option<&Value>) -> (String, Option<i64>) {
    let raw = match output {
        Some(Value::String(s)) => s.as_str(),
        Some(Value::Object(o)) => o.get("content").and_then(Value::as_str).unwrap_or(""),
        _ => "",
    };
    if let Ok(Value::Object(old)) = serde_json::from_str::<Value>(raw) {
        let text = old
            .get("output")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let code = old
            .get("metadata")
            .and_then(|m| m.get("exit_code"))
            .and_then(Value::as_i64);
        return (text, code);
    }
    let (head, text) = match raw.split_once("Output:\n") {
        Some((head, text)) => (head, text),
        None => ("", raw),
    };
    let code = head.lines().find_map(|l| {
        l.strip_prefix("Process exited with code ")
            .or(l.strip_prefix("Exit code: "))
            .and_then(|c| c.trim().parse::<i64>().ok())
    });
    (text.to_owned(), code)
}

/// The files an `apply_patch` patch adds or changes, as it names them (relative to the
/// session's folder, or absolute).
pub fn patch_files(patch: &str) -> Vec<String> {
    parse_patch(patch).into_iter().map(|f| f.path).collect()
}

/// One file of a patch.
#[derive(Debug, PartialEq)]
struct FilePatch {
    path: String,
    change: Change,
}

#[derive(Debug, PartialEq)]
enum Change {
    /// The new file's content.
    Add(String),
    /// Each hunk's lines before and after.
    Update(Vec<(String, String)>),
}

/// The files of an `apply_patch` patch (`*** Begin Patch` … `*** End Patch`): added files with
/// their lines, changed files with their hunks (a moved file under its new name); deleted files
/// are left out.
fn parse_patch(patch: &str) -> Vec<FilePatch> {
    let mut files: Vec<FilePatch> = Vec::new();
    let mut hunk: Option<(String, String)> = None;
    let finish = |files: &mut Vec<FilePatch>, hunk: &mut Option<(String, String)>| {
        if let (
            Some(FilePatch {
                change: Change::Update(hunks),
                ..
            }),
            Some(h),
        ) = (files.last_mut(), hunk.take())
            && !(h.0.is_empty() && h.1.is_empty())
        {
            hunks.push(h);
        }
    };
    let mut deleting = false;
    for line in patch.lines() {
        if let Some(header) = line.strip_prefix("*** ") {
            finish(&mut files, &mut hunk);
            deleting = false;
            if let Some(path) = header.strip_prefix("Add File: ") {
                files.push(FilePatch {
                    path: path.trim().to_owned(),
                    change: Change::Add(String::new()),
                });
            } else if let Some(path) = header.strip_prefix("Update File: ") {
                files.push(FilePatch {
                    path: path.trim().to_owned(),
                    change: Change::Update(Vec::new()),
                });
                hunk = Some(Default::default());
            } else if let Some(path) = header.strip_prefix("Move to: ") {
                if let Some(file) = files.last_mut() {
                    file.path = path.trim().to_owned();
                }
                hunk = Some(Default::default());
            } else if header.starts_with("Delete File: ") {
                deleting = true;
            }
            continue;
        }
        if deleting {
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        match &mut file.change {
            Change::Add(content) => {
                if let Some(added) = line.strip_prefix('+') {
                    content.push_str(added);
                    content.push('\n');
                }
            }
            Change::Update(_) => {
                if line.starts_with("@@") {
                    finish(&mut files, &mut hunk);
                    hunk = Some(Default::default());
                    continue;
                }
                let (old, new) = hunk.get_or_insert_with(Default::default);
                let (before, after) = match line.split_at_checked(1) {
                    Some(("-", rest)) => (Some(rest), None),
                    Some(("+", rest)) => (None, Some(rest)),
                    Some((" ", rest)) => (Some(rest), Some(rest)),
                    _ => (Some(line), Some(line)),
                };
                for (side, text) in [(old, before), (new, after)] {
                    if let Some(text) = text {
                        side.push_str(text);
                        side.push('\n');
                    }
                }
            }
        }
    }
    finish(&mut files, &mut hunk);
    files
}

fn str_at<'a>(map: &'a serde_json::Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

fn set(field: &mut String, value: &str) {
    if !value.is_empty() && field != value {
        value.clone_into(field);
    }
}

/// Codex CLI's folder: `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|home| PathBuf::from(home).join(".codex"))
}

/// The rollouts of sessions run inside `workdir` (and in none of the `excluded` folders), live
/// and archived, that `wanted` keeps (asked before a rollout is opened), sorted by path; with
/// `since`, only those of the day folders that may hold a rollout written since (a day before
/// it, for the time zones). Compressed rollouts (`.jsonl.zst`) are not read.
pub fn rollouts(
    home: &Path,
    workdir: &Path,
    excluded: &[PathBuf],
    since: Option<std::time::SystemTime>,
    wanted: &dyn Fn(&Path) -> bool,
) -> Vec<PathBuf> {
    let from = since.and_then(|t| {
        let t = jiff::Timestamp::try_from(t).ok()?;
        let day = t.checked_sub(jiff::SignedDuration::from_hours(24)).ok()?;
        Some(day.strftime("%Y/%m/%d").to_string())
    });
    let mut found = Vec::new();
    for tree in ["sessions", "archived_sessions"] {
        collect(&home.join(tree), "", from.as_deref(), &mut found);
    }
    found.retain(|p| {
        wanted(p)
            && cwd_of(p).is_some_and(|cwd| super::root::within(Path::new(&cwd), workdir, excluded))
    });
    found.sort();
    found
}

/// `rollout-*.jsonl` files under `dir`, down through the year, month and day folders (`day`
/// says how far down, `2026/11`); folders of days before `from` (`2026/11/25`) are passed by.
fn collect(dir: &Path, day: &str, from: Option<&str>, found: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("rollout-") && name.ends_with(".jsonl") && path.is_file() {
            found.push(path);
            continue;
        }
        let below = match day {
            "" => name.to_string(),
            day => format!("{day}/{name}"),
        };
        // `2026/11` is before `2026/11/25` only if all of its days are.
        let before = from.is_some_and(|from| *below < from[..below.len().min(from.len())]);
        if below.len() <= "YYYY/MM/DD".len() && !before && path.is_dir() {
            collect(&path, &below, from, found);
        }
    }
}

/// The folder a rollout's session ran in, from its first line.
pub fn cwd_of(path: &Path) -> Option<String> {
    let file = super::open(path).ok()?.take(HEAD_BYTES_MAX);
    let mut first = Vec::new();
    BufReader::new(file).read_until(b'\n', &mut first).ok()?;
    let line: Value = serde_json::from_slice(&first).ok()?;
    let payload = line.get("payload")?;
    (line.get("type")?.as_str()? == "session_meta")
        .then(|| payload.get("cwd")?.as_str().map(str::to_owned))
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn translate(lines: &[&str]) -> Vec<Value> {
        let mut t = Translator::default();
        let mut out = Vec::new();
        for line in lines {
            assert!(t.line(line.as_bytes(), &mut out));
        }
        out.iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn patches_become_writes_and_edits_per_file() {
        let patch = "*** Begin Patch\n*** Add File: a.rs\n+fn a() {}\n+\n*** Update File: b.rs\n@@ fn b\n fn b() {\n-    1\n+    2\n }\n@@\n-x\n*** Delete File: c.rs\n*** Update File: d.rs\n*** Move to: e.rs\n@@\n+y\n*** End Patch\n";
        let files = parse_patch(patch);
        assert_eq!(
            files,
            vec![
                FilePatch {
                    path: "a.rs".into(),
                    change: Change::Add("fn a() {}\n\n".into())
                },
                FilePatch {
                    path: "b.rs".into(),
                    change: Change::Update(vec![
                        ("fn b() {\n    1\n}\n".into(), "fn b() {\n    2\n}\n".into()),
                        ("x\n".into(), String::new()),
                    ])
                },
                FilePatch {
                    path: "e.rs".into(),
                    change: Change::Update(vec![(String::new(), "y\n".into())])
                },
            ]
        );
    }

    #[test]
    fn outputs_say_their_text_and_their_exit_code() {
        let new = json!(
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 1\nOutput:\nboom\n"
        );
        assert_eq!(output_of(Some(&new)), ("boom\n".to_owned(), Some(1)));
        let patch = json!("Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess.\n");
        assert_eq!(output_of(Some(&patch)), ("Success.\n".to_owned(), Some(0)));
        let old = json!("{\"output\":\"ok\",\"metadata\":{\"exit_code\":2}}");
        assert_eq!(output_of(Some(&old)), ("ok".to_owned(), Some(2)));
        let refused = json!("apply_patch verification failed: Failed to find expected lines");
        assert_eq!(output_of(Some(&refused)).1, None);
    }

    #[test]
    fn a_patch_of_two_files_gets_its_output_twice_and_context_is_no_prompt() {
        let out = translate(&[
            r#"{"timestamp":"t0","type":"session_meta","payload":{"id":"s1","cwd":"/r","cli_version":"0.169.0","git":{"branch":"main"}}}"#,
            r#"{"timestamp":"t1","type":"turn_context","payload":{"cwd":"/r","model":"gpt-5.5"}}"#,
            r#"{"timestamp":"t2","type":"response_item","payload":{"type":"message","role":"user","id":"m0","content":[{"type":"input_text","text":"<environment_context>\n<cwd>/r</cwd>"}]}}"#,
            r#"{"timestamp":"t3","type":"response_item","payload":{"type":"message","role":"user","id":"m1","content":[{"type":"input_text","text":"Add two files"}]}}"#,
            r#"{"timestamp":"t4","type":"response_item","payload":{"type":"custom_tool_call","call_id":"c1","name":"apply_patch","input":"*** Begin Patch\n*** Add File: a\n+1\n*** Add File: /abs/b\n+2\n*** End Patch\n"}}"#,
            r#"{"timestamp":"t5","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c1","output":"Exit code: 0\nOutput:\nSuccess.\n"}}"#,
        ]);
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["message"]["content"], "Add two files");
        assert_eq!(out[0]["sessionId"], "s1");
        assert_eq!(out[0]["version"], "0.169.0");
        assert_eq!(out[0]["gitBranch"], "main");
        let calls = out[1]["message"]["content"].as_array().unwrap();
        assert_eq!(calls[0]["input"]["file_path"], "/r/a");
        assert_eq!(calls[1]["input"]["file_path"], "/abs/b");
        assert_eq!(calls[1]["id"], "c1~1");
        assert_eq!(out[1]["message"]["model"], "gpt-5.5");
        let results = out[2]["message"]["content"].as_array().unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[1]["tool_use_id"], "c1~1");
        assert_eq!(results[1]["is_error"], false);
        assert!(!Translator::default().line(b"[1]", &mut Vec::new()));
        // A patch refused (its lines were not found) failed, though it says no exit code.
        let refused = translate(&[
            r#"{"timestamp":"t6","type":"response_item","payload":{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"*** Begin Patch\n*** Update File: a\n@@\n-0\n+1\n*** End Patch\n"}}"#,
            r#"{"timestamp":"t7","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c2","output":"apply_patch verification failed: Failed to find expected lines in /r/a:\n0"}}"#,
        ]);
        assert_eq!(refused[1]["message"]["content"][0]["is_error"], true);
    }

    #[test]
    fn rollouts_are_found_by_their_folder_and_old_days_passed_by_when_asked() {
        let home = tempfile::tempdir().unwrap();
        let write = |rel: &str, cwd: &str| {
            let p = home.path().join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            let meta = json!({"type": "session_meta", "payload": {"id": "s", "cwd": cwd}});
            fs::write(&p, format!("{meta}\n")).unwrap();
            p
        };
        let today = write("sessions/2026/11/26/rollout-a.jsonl", "/r/app");
        let sub = write("sessions/2026/11/26/rollout-b.jsonl", "/r/app/src");
        let old = write("sessions/2026/10/02/rollout-c.jsonl", "/r/app");
        let archived = write("archived_sessions/rollout-d.jsonl", "/r/app");
        write("sessions/2026/11/26/rollout-e.jsonl", "/r/other");
        write("sessions/2026/11/26/rollout-f.jsonl", "/r/app/nested");
        let nested = [PathBuf::from("/r/app/nested")];
        let all = rollouts(home.path(), Path::new("/r/app"), &nested, None, &|_| true);
        assert_eq!(all, [archived.clone(), old, today.clone(), sub.clone()]);
        let since = jiff::Timestamp::from_second(1_795_660_000).unwrap(); // 2026-11-26
        let recent = rollouts(
            home.path(),
            Path::new("/r/app"),
            &nested,
            Some(since.into()),
            &|_| true,
        );
        assert_eq!(recent, [archived, today, sub]);
    }
}
