//! Gemini CLI's session files, translated into Claude Code's records (docs/agents.md).
//!
//! A session lives in `~/.gemini/tmp/<project>/chats/session-<time>-<id>.json[l]`, in one of
//! two shapes. Since Gemini CLI 0.39 it is a log of JSON lines: a metadata line (`sessionId`,
//! `projectHash`), then each message as it is written and again each time it changes (the last
//! one counts), `{"$set": …}` updates (with `messages`, a whole new list) and
//! `{"$rewindTo": <id>}`, which takes back that message and all after it. Before, it was one
//! indented JSON object rewritten whole, with the `messages` list inside; before 0.28 a user's
//! `content` was a string, not a list of parts. Either way the session is only known whole, so
//! it is read whole each time it changed (they are small) and the messages as they finally
//! stand are translated: a typed prompt, a user record; a model message, an assistant record
//! with its thoughts, its text and its tool calls in Claude Code's names; their results, a
//! user record of tool results.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

/// A session as it finally stands.
#[derive(Debug, Default)]
pub struct Session {
    pub session_id: String,
    /// The folders of the session's workspace, where the file records them (since 0.28).
    pub directories: Vec<String>,
    pub messages: Vec<Value>,
}

/// The session a file holds, in either shape; `None` if it holds neither.
pub fn read(bytes: &[u8]) -> Option<Session> {
    let mut session = Session::default();
    let mut found = false;
    let mut at: HashMap<String, usize> = HashMap::new();
    for line in bytes.split(|&b| b == b'\n') {
        let Ok(Value::Object(line)) = serde_json::from_slice::<Value>(line) else {
            continue;
        };
        if let Some(Value::Object(set)) = line.get("$set") {
            session.meta(set, &mut at);
        } else if let Some(id) = line.get("$rewindTo") {
            let cut = id.as_str().and_then(|id| at.get(id).copied()).unwrap_or(0);
            session.messages.truncate(cut);
            at.retain(|_, i| *i < cut);
        } else if line.get("sessionId").is_some_and(Value::is_string)
            && line.get("projectHash").is_some_and(Value::is_string)
        {
            found = true;
            session.meta(&line, &mut at);
        } else if let Some(id) = line.get("id").and_then(Value::as_str) {
            match at.get(id) {
                Some(&i) => session.messages[i] = Value::Object(line),
                None => {
                    at.insert(id.to_owned(), session.messages.len());
                    session.messages.push(Value::Object(line));
                }
            }
        }
    }
    if found {
        return Some(session);
    }
    // One JSON object: the shape before 0.39.
    let Ok(Value::Object(whole)) = serde_json::from_slice::<Value>(bytes) else {
        return None;
    };
    whole.get("sessionId").and_then(Value::as_str)?;
    session.meta(&whole, &mut at);
    Some(session)
}

impl Session {
    fn meta(&mut self, fields: &Map<String, Value>, at: &mut HashMap<String, usize>) {
        if let Some(id) = fields.get("sessionId").and_then(Value::as_str) {
            id.clone_into(&mut self.session_id);
        }
        if let Some(dirs) = fields.get("directories").and_then(Value::as_array) {
            self.directories = dirs
                .iter()
                .filter_map(|d| d.as_str().map(str::to_owned))
                .collect();
        }
        if let Some(messages) = fields.get("messages").and_then(Value::as_array) {
            at.clear();
            self.messages = messages.clone();
            for (i, m) in self.messages.iter().enumerate() {
                if let Some(id) = m.get("id").and_then(Value::as_str) {
                    at.insert(id.to_owned(), i);
                }
            }
        }
    }

    /// The folder the session ran in: `root` when its project folder says it, else the first
    /// of its workspace's folders, else the one its opening context names.
    pub fn cwd(&self, root: Option<&str>) -> String {
        if let Some(root) = root {
            return root.to_owned();
        }
        if let Some(dir) = self.directories.first() {
            return dir.clone();
        }
        self.messages
            .iter()
            .find_map(|m| {
                let text = text_of(m.get("content"));
                let (_, after) = text
                    .split_once("Workspace Directories:**\n  - ")
                    .or_else(|| text.split_once("Workspace Directories:\n  - "))?;
                after.lines().next().map(|l| l.trim().to_owned())
            })
            .unwrap_or_default()
    }

    /// The session as JSON lines in Claude Code's shape, in order; `root` as for [`Session::cwd`].
    pub fn records(&self, root: Option<&str>) -> Vec<String> {
        let cwd = self.cwd(root);
        let mut out = Vec::new();
        for message in &self.messages {
            let fields = |mut record: Value, timestamp: &Value| {
                if let Value::Object(f) = &mut record {
                    f.insert("sessionId".into(), Value::from(self.session_id.as_str()));
                    f.insert("timestamp".into(), timestamp.clone());
                    if !cwd.is_empty() {
                        f.insert("cwd".into(), Value::from(cwd.as_str()));
                    }
                }
                record.to_string()
            };
            let timestamp = message.get("timestamp").cloned().unwrap_or(Value::Null);
            let id = message.get("id").and_then(Value::as_str).unwrap_or("");
            match message.get("type").and_then(Value::as_str) {
                Some("user") => {
                    if let Some(prompt) = typed_prompt(message.get("content")) {
                        let record = json!({"type": "user", "uuid": id, "message": {"role": "user", "content": prompt}});
                        out.push(fields(record, &timestamp));
                    }
                }
                Some("gemini") => {
                    let (blocks, results) = model_message(message);
                    if !blocks.is_empty() {
                        let model = message.get("model").cloned().unwrap_or(Value::Null);
                        let record = json!({"type": "assistant", "message": {"id": id, "model": model, "role": "assistant", "content": blocks}});
                        out.push(fields(record, &timestamp));
                    }
                    for (result, at) in results {
                        out.push(fields(result, &at));
                    }
                }
                _ => {}
            }
        }
        out
    }
}

/// A model message's blocks (thoughts, text, calls) and its calls' results, each a user record
/// with the time of its call.
fn model_message(message: &Value) -> (Vec<Value>, Vec<(Value, Value)>) {
    let mut blocks = Vec::new();
    for thought in list(message, "thoughts") {
        let description = thought
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !description.trim().is_empty() {
            blocks.push(json!({"type": "thinking", "thinking": description}));
        }
    }
    let text = text_of(message.get("content"));
    if !text.trim().is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    let mut results = Vec::new();
    for call in list(message, "toolCalls") {
        let id = call.get("id").and_then(Value::as_str).unwrap_or("");
        let name = call.get("name").and_then(Value::as_str).unwrap_or("");
        let args = call.get("args").cloned().unwrap_or(Value::Null);
        let (tool, input) = tool_call(name, &args);
        blocks.push(json!({"type": "tool_use", "id": id, "name": tool, "input": input}));
        let status = call.get("status").and_then(Value::as_str).unwrap_or("");
        let result = call.get("result").filter(|r| !r.is_null());
        if result.is_none() && status.is_empty() {
            // Not run yet.
            continue;
        }
        // A call cancelled or failed before it ran has a status and no result.
        let (output, failed) = result
            .map(|r| result_of(r, tool == "Bash"))
            .unwrap_or_default();
        let block = json!({"type": "tool_result", "tool_use_id": id, "content": output, "is_error": failed || status != "success"});
        let record = json!({"type": "user", "message": {"role": "user", "content": [block]}, "toolUseResult": {"stdout": output}});
        results.push((
            record,
            call.get("timestamp").cloned().unwrap_or(Value::Null),
        ));
    }
    (blocks, results)
}

/// The items of the list `key` of `value` (none if it is not a list).
fn list<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    value
        .get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// A Gemini CLI tool call in Claude Code's terms: its name and input. A tool Claude Code has
/// no name for keeps its own.
pub fn tool_call(name: &str, args: &Value) -> (String, Value) {
    let arg = |keys: &[&str]| {
        keys.iter()
            .find_map(|k| args.get(*k).filter(|v| v.is_string()))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let (tool, input) = match name {
        "write_file" => (
            "Write",
            json!({"file_path": arg(&["file_path", "absolute_path"]), "content": arg(&["content"])}),
        ),
        "replace" | "edit" => (
            "Edit",
            json!({"file_path": arg(&["file_path", "absolute_path"]), "old_string": arg(&["old_string"]), "new_string": arg(&["new_string"])}),
        ),
        "read_file" => (
            "Read",
            json!({"file_path": arg(&["file_path", "absolute_path", "path"])}),
        ),
        "run_shell_command" => (
            "Bash",
            json!({"command": arg(&["command"]), "description": arg(&["description"])}),
        ),
        "list_directory" => ("LS", json!({"path": arg(&["dir_path", "path"])})),
        "glob" => (
            "Glob",
            json!({"pattern": arg(&["pattern"]), "path": arg(&["dir_path", "path"])}),
        ),
        "search_file_content" | "grep_search" | "grep" => (
            "Grep",
            json!({"pattern": arg(&["pattern"]), "path": arg(&["dir_path", "path"])}),
        ),
        "google_web_search" => ("WebSearch", json!({"query": arg(&["query"])})),
        "web_fetch" => ("WebFetch", json!({"url": arg(&["url", "prompt"])})),
        "write_todos" => {
            let todos: Vec<Value> = list(args, "todos")
                .map(|t| json!({"content": t.get("description"), "status": t.get("status")}))
                .collect();
            ("TodoWrite", json!({"todos": todos}))
        }
        _ => return (name.to_owned(), args.clone()),
    };
    (tool.to_owned(), input)
}

/// What a call's result said, and whether it failed: its output (for a shell command, what
/// the command printed), or its error.
fn result_of(result: &Value, shell: bool) -> (String, bool) {
    let parts: Vec<&Value> = match result {
        Value::Array(parts) => parts.iter().collect(),
        part => vec![part],
    };
    let mut text = String::new();
    let mut failed = false;
    for part in parts {
        let Some(response) = part.get("functionResponse").and_then(|f| f.get("response")) else {
            text.push_str(part.get("text").and_then(Value::as_str).unwrap_or(""));
            continue;
        };
        if let Some(error) = response.get("error").and_then(Value::as_str) {
            failed = true;
            text.push_str(error);
        }
        text.push_str(response.get("output").and_then(Value::as_str).unwrap_or(""));
    }
    if !shell {
        return (text, failed);
    }
    let (printed, code) = shell_output(&text);
    (printed, failed || code.is_some_and(|c| c != 0))
}

/// What a shell command printed, from Gemini CLI's report of it (`Output: …`, then `Error:`,
/// `Exit Code:`, `Process Group PGID:` lines), and its exit code when said.
fn shell_output(report: &str) -> (String, Option<i64>) {
    let report = report
        .trim_start()
        .trim_start_matches("<untrusted_context>")
        .trim_start();
    let code = report.lines().find_map(|l| {
        l.strip_prefix("Exit Code: ")
            .and_then(|c| c.trim().parse::<i64>().ok())
    });
    let Some(start) = report.find("Output: ").map(|i| i + "Output: ".len()) else {
        return (report.to_owned(), code);
    };
    let rest = &report[start..];
    let ends = [
        "\nError: ",
        "\nExit Code: ",
        "\nSignal: ",
        "\nBackground PIDs: ",
        "\nProcess Group PGID: ",
        "\n</untrusted_context>",
    ];
    let end = ends
        .iter()
        .filter_map(|e| rest.find(e))
        .min()
        .unwrap_or(rest.len());
    let printed = &rest[..end];
    match printed.trim() {
        "(empty)" => (String::new(), code),
        _ => (format!("{printed}\n"), code),
    }
}

/// The text the user typed, if a user message is a prompt: not a tool's response, not Gemini
/// CLI's own opening context; what a hook added (`<hook_context>`, ours included) taken out.
fn typed_prompt(content: Option<&Value>) -> Option<String> {
    let responses_only = match content {
        Some(Value::Array(parts)) => {
            !parts.is_empty() && parts.iter().all(|p| p.get("functionResponse").is_some())
        }
        Some(part @ Value::Object(_)) => part.get("functionResponse").is_some(),
        _ => false,
    };
    if responses_only {
        return None;
    }
    let text = without_hook_context(&text_of(content));
    (!text.is_empty() && !text.starts_with("<session_context>")).then_some(text)
}

/// `text` without the hook context Gemini CLI writes into it (`<hook_context>…</hook_context>`),
/// trimmed.
pub fn without_hook_context(text: &str) -> String {
    let mut text = text.to_owned();
    while let Some(start) = text.find("<hook_context>") {
        let end = text[start..]
            .find("</hook_context>")
            .map(|e| start + e + "</hook_context>".len())
            .unwrap_or(text.len());
        text.replace_range(start..end, "");
    }
    text.trim().to_owned()
}

/// The text of a message's content: a string, a part, or a list of parts.
fn text_of(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(part @ Value::Object(_)) => part
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        _ => String::new(),
    }
}

/// Gemini CLI's folder: `$GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
pub fn gemini_dir() -> Option<PathBuf> {
    std::env::var_os("GEMINI_CLI_HOME")
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var_os("HOME").filter(|h| !h.is_empty()))
        .map(|home| PathBuf::from(home).join(".gemini"))
}

/// The session files of projects inside `workdir` (and in none of the `excluded` folders),
/// sorted by path. A project's folder is found through Gemini CLI's list of projects
/// (`projects.json`), the `.project_root` file in each, and, for versions before 0.29, the
/// SHA-256 of the project's path. A session kept in both shapes (a `.json` resumed since as
/// `.jsonl`) is read in the newer.
pub fn sessions(gemini: &Path, workdir: &Path, excluded: &[PathBuf]) -> Vec<PathBuf> {
    let tmp = gemini.join("tmp");
    let inside = |root: &str| super::root::within(Path::new(root), workdir, excluded);
    let mut folders: Vec<PathBuf> = Vec::new();
    if let Ok(text) = fs::read(gemini.join("projects.json"))
        && let Ok(list) = serde_json::from_slice::<Value>(&text)
    {
        for (root, slug) in list
            .get("projects")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            if let Some(slug) = slug
                .as_str()
                .filter(|s| !s.contains(['/', '\\']) && *s != "..")
                && inside(root)
            {
                folders.push(tmp.join(slug));
            }
        }
    }
    for entry in fs::read_dir(&tmp).into_iter().flatten().flatten() {
        if project_root(&entry.path()).is_some_and(|root| inside(&root)) {
            folders.push(entry.path());
        }
    }
    folders.push(tmp.join(project_hash(&workdir.to_string_lossy())));
    folders.sort();
    folders.dedup();
    let mut found = Vec::new();
    for folder in folders {
        let chats = folder.join("chats");
        for entry in fs::read_dir(&chats).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let newer = name.ends_with(".json") && path.with_extension("jsonl").is_file();
            if name.starts_with("session-")
                && (name.ends_with(".jsonl") || name.ends_with(".json"))
                && !newer
                && path.is_file()
            {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// The id of the session a file holds, read whole.
pub fn session_id_of(path: &Path) -> Option<String> {
    let bytes = fs::read(path).ok()?;
    Some(read(&bytes)?.session_id).filter(|id| !id.is_empty())
}

/// The project folder a session file belongs to, as its project's `.project_root` says
/// (`<project>/chats/<session>`).
pub fn root_of(session: &Path) -> Option<String> {
    project_root(session.parent()?.parent()?)
}

fn project_root(project: &Path) -> Option<String> {
    let text = fs::read_to_string(project.join(".project_root")).ok()?;
    Some(text.trim_end_matches(['\n', '\r']).to_owned()).filter(|t| !t.is_empty())
}

/// What Gemini CLI names a project by: the SHA-256 of its path, in hex.
pub fn project_hash(root: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(root.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(text: &str, root: Option<&str>) -> Vec<Value> {
        read(text.as_bytes())
            .unwrap()
            .records(root)
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[test]
    fn the_log_keeps_the_last_of_each_message_and_follows_sets_and_rewinds() {
        let log = [
            r#"{"sessionId":"s1","projectHash":"h","startTime":"t","kind":"main"}"#,
            r#"{"$set":{"messages":[{"id":"c","type":"user","content":[{"text":"<session_context>\n- **Workspace Directories:**\n  - /r\n"}]}]}}"#,
            r#"{"id":"u1","type":"user","timestamp":"t1","content":[{"text":"<hook_context>ours</hook_context>\n\nmake it fast"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"","thoughts":[{"subject":"S","description":"first"}]}"#,
            r#"{"id":"g1","type":"gemini","content":"done","thoughts":[{"subject":"S","description":"first"}],"model":"gemini-2.5-flash","toolCalls":[{"id":"k1","name":"run_shell_command","args":{"command":"git commit -m x"},"status":"success","timestamp":"t2","result":[{"functionResponse":{"id":"k1","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: [main abc1234] x\n 1 file changed\nProcess Group PGID: 1\n</untrusted_context>"}}}]}]}"#,
            r#"{"id":"u2","type":"user","content":[{"functionResponse":{"id":"k1"}}]}"#,
            r#"{"id":"u3","type":"user","content":[{"text":"undo that"}]}"#,
            r#"{"id":"g2","type":"gemini","content":"undone"}"#,
            r#"{"$rewindTo":"u3"}"#,
            "not json",
        ]
        .join("\n");
        let out = records(&log, None);
        assert_eq!(out.len(), 3, "{out:#?}");
        assert_eq!(out[0]["message"]["content"], "make it fast");
        assert_eq!(out[0]["cwd"], "/r");
        let blocks = out[1]["message"]["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 3);
        assert_eq!(blocks[0]["thinking"], "first");
        assert_eq!(blocks[2]["name"], "Bash");
        assert_eq!(out[1]["message"]["model"], "gemini-2.5-flash");
        assert_eq!(
            out[2]["toolUseResult"]["stdout"],
            "[main abc1234] x\n 1 file changed\n"
        );
        assert_eq!(out[2]["message"]["content"][0]["is_error"], false);
        assert_eq!(out[2]["timestamp"], "t2");
    }

    #[test]
    fn the_old_single_object_with_string_contents_reads_too() {
        let old = r#"{
  "sessionId": "s2",
  "projectHash": "h",
  "messages": [
    {"id": "a", "type": "user", "content": "pick a colour"},
    {"id": "b", "type": "gemini", "content": "", "toolCalls": [{"id": "w", "name": "write_file", "args": {"file_path": "/r/docs/blue.md", "content": "blue\n"}, "status": "cancelled"}]},
    {"id": "c", "type": "info", "content": "update available"}
  ]
}"#;
        let out = records(old, Some("/r"));
        assert_eq!(out.len(), 3);
        assert_eq!(out[0]["message"]["content"], "pick a colour");
        assert_eq!(out[1]["message"]["content"][0]["name"], "Write");
        assert_eq!(
            out[1]["message"]["content"][0]["input"]["file_path"],
            "/r/docs/blue.md"
        );
        assert_eq!(out[2]["message"]["content"][0]["is_error"], true);
        assert!(read(b"[]").is_none());
    }

    #[test]
    fn shell_reports_give_what_was_printed_and_the_exit_code() {
        let old = "Command: false\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 1\nSignal: (none)";
        assert_eq!(shell_output(old), (String::new(), Some(1)));
        // As Gemini CLI 0.61.0 recorded it for that folder.
        assert_eq!(
            project_hash("/work/scratch/rec/gemini1/repo"),
            "ae75ee1b32e1254f4b698e3a2fdb36d14e64b290304cd5e3ccae4e8100ec30d6"
        );
    }

    /// The texts a session's messages hold (prompts, answers, thoughts) and its tool calls' ids.
    fn held(session: &Session) -> Vec<String> {
        let mut held = Vec::new();
        for m in &session.messages {
            let kind = m.get("type").and_then(Value::as_str);
            if kind == Some("user") {
                held.extend(typed_prompt(m.get("content")));
            }
            if kind != Some("gemini") {
                continue;
            }
            held.push(text_of(m.get("content")));
            for t in list(m, "thoughts") {
                held.push(t["description"].as_str().unwrap_or("").to_owned());
            }
            for c in list(m, "toolCalls") {
                held.push(c["id"].as_str().unwrap().to_owned());
            }
        }
        held.retain(|t| !t.trim().is_empty());
        held
    }

    #[test]
    fn real_sessions_of_both_shapes_lose_nothing_that_holds_reasoning() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let files = [
            "entireio-cli/12/cbfeaa512b/0/full.jsonl",
            "entireio-cli/51/3fab7adf0b/0/full.jsonl",
            "entireio-cli/9c/53780d06b7/0/full.jsonl",
            "entireio-cli/ab/2b9748b105/0/full.jsonl",
            "entireio-cli/c9/45f262e88d/0/full.jsonl",
            "entireio-cli/ec/38b74f08e3/2/full.jsonl",
            "gemini-cli-0.61.0/session-2026-11-26T04-07-9e620eba.jsonl",
        ];
        let mut texts = 0;
        for file in files {
            let path = fixtures.join(file);
            assert_eq!(
                super::super::agent::Agent::of(&path),
                super::super::agent::Agent::GeminiCli,
                "{file}"
            );
            let session = read(&fs::read(&path).unwrap()).unwrap_or_else(|| panic!("{file}"));
            let records = session.records(None).join("\n");
            for text in held(&session) {
                let quoted = serde_json::to_string(&text).unwrap();
                assert!(
                    records.contains(&quoted[1..quoted.len() - 1]),
                    "{file}: {text}"
                );
                texts += 1;
            }
        }
        // The files are what they were: reasoning in every one but the last entireio file.
        assert!(texts > 60, "{texts}");
    }

    #[test]
    fn sessions_are_found_through_the_project_list_the_root_file_and_the_old_hash() {
        let home = tempfile::tempdir().unwrap();
        let gemini = home.path();
        let write = |rel: &str| {
            let p = gemini.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, "{}").unwrap();
            p
        };
        fs::write(
            gemini.join("projects.json"),
            r#"{"projects": {"/r/app": "app", "/r/other": "other", "/r/app/x": "../escape"}}"#,
        )
        .unwrap();
        let listed = write("tmp/app/chats/session-2026-11-26T04-07-aaaaaaaa.jsonl");
        write("tmp/other/chats/session-2026-11-26T04-07-bbbbbbbb.jsonl");
        let sub = write("tmp/app-1/chats/session-2026-11-26T04-08-cccccccc.jsonl");
        fs::write(gemini.join("tmp/app-1/.project_root"), "/r/app/sub\n").unwrap();
        let hashed = format!(
            "tmp/{}/chats/session-2026-01-15T12-50-dddddddd.json",
            project_hash("/r/app")
        );
        let old = write(&hashed);
        // Resumed since in the newer shape: the older file is a stale copy.
        write("tmp/app/chats/session-2026-01-15T12-50-eeeeeeee.json");
        let resumed = write("tmp/app/chats/session-2026-01-15T12-50-eeeeeeee.jsonl");
        let found = sessions(gemini, Path::new("/r/app"), &[]);
        assert_eq!(found, [old, resumed, listed, sub]);
        assert_eq!(root_of(&found[3]).as_deref(), Some("/r/app/sub"));
    }
}
