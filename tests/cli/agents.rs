//! Codex CLI and Gemini CLI sessions, recorded from the real clients (fixtures/codex-cli-0.169.0,
//! fixtures/gemini-cli-0.61.0): found where those clients keep them, read, and linked to the
//! commits they made, as Claude Code's are.

use std::fs;
use std::path::{Path, PathBuf};

use crate::repo::{TestRepo, fixture, hook_answer};

const CODEX: &str =
    "codex-cli-0.169.0/rollout-2026-11-26T04-06-45-01a21608-ce7d-7e61-bde6-fe0424feb270.jsonl";
const CODEX_SESSION: &str = "01a21608-ce7d-7e61-bde6-fe0424feb270";
const CODEX_CWD: &str = "/work/scratch/rec/codex1/repo";
const GEMINI: &str = "gemini-cli-0.61.0/session-2026-11-26T04-07-9e620eba.jsonl";
const GEMINI_SESSION: &str = "9e620eba-c4d1-4e72-acca-ae1966985455";
const GEMINI_CWD: &str = "/work/scratch/rec/gemini1/repo";

/// The files both sessions wrote, as they committed them.
const LIB: &str = "pub fn lookup(cache: &mut TtlCache, token: &str) -> Option<String> {\n    cache.get_or_fetch(token, fetch)\n}\n";
const CACHE: &str = "use std::collections::HashMap;\nuse std::time::{Duration, Instant};\n\n/// Token lookups, kept for a fixed time.\npub struct TtlCache {\n    entries: HashMap<String, (Instant, String)>,\n    ttl: Duration,\n}\n";

/// The Codex fixture as if its session had run in `dir`, kept where Codex CLI keeps it
/// (`$HOME/.codex/sessions/YYYY/MM/DD/`).
fn codex_rollout(repo: &TestRepo, dir: &Path, name: &str) -> PathBuf {
    let text = fs::read_to_string(fixture(CODEX)).unwrap();
    let text = text.replace(CODEX_CWD, dir.to_str().unwrap());
    let day = repo.home.join(".codex/sessions/2026/11/26");
    fs::create_dir_all(&day).unwrap();
    let path = day.join(name);
    fs::write(&path, text).unwrap();
    path
}

/// The Gemini fixture as if its session had run in `dir`, kept where Gemini CLI 0.61.0 keeps it
/// (`$HOME/.gemini/tmp/<project>/chats/`, the project named in `projects.json`).
fn gemini_session(repo: &TestRepo, dir: &Path, project: &str) -> PathBuf {
    let text = fs::read_to_string(fixture(GEMINI)).unwrap();
    let text = text.replace(GEMINI_CWD, dir.to_str().unwrap());
    let gemini = repo.home.join(".gemini");
    let chats = gemini.join("tmp").join(project).join("chats");
    fs::create_dir_all(&chats).unwrap();
    fs::write(
        gemini.join("tmp").join(project).join(".project_root"),
        dir.to_str().unwrap(),
    )
    .unwrap();
    let path = chats.join(Path::new(GEMINI).file_name().unwrap());
    fs::write(&path, text).unwrap();
    path
}

/// The transcripts `extract --json` read.
fn paths_read(out: &serde_json::Value) -> Vec<&str> {
    (out["transcripts"].as_array().unwrap().iter())
        .map(|t| t["path"].as_str().unwrap())
        .collect()
}

/// The rejection of the lru crate that `agent`'s session recorded, among `notes`, with its
/// reason.
pub fn rejection_of<'a>(notes: &'a [serde_json::Value], agent: &str) -> &'a serde_json::Value {
    let rejection = (notes.iter())
        .find(|e| e["kind"] == "rejection" && e["session"]["agent"] == agent)
        .unwrap_or_else(|| panic!("no rejection of {agent} in {notes:#?}"));
    assert!(
        (rejection["rationale"].as_str().unwrap())
            .contains("I rejected the lru crate because entries must expire"),
        "{rejection:#}"
    );
    rejection
}

pub fn notes_of(repo: &TestRepo, rev: &str) -> Vec<serde_json::Value> {
    repo.git(&["notes", "--ref", "agent-context", "show", rev])
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn extract_finds_the_sessions_codex_and_gemini_ran_here_and_no_others() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    // Made after the sessions, as theirs were.
    repo.commit_at(
        "cache.rs",
        CACHE,
        "Cache token lookups for a fixed time",
        "2026-11-26T04:10:00Z",
    );
    let codex = codex_rollout(
        &repo,
        &repo.root,
        "rollout-2026-11-26T04-06-45-01a21608-ce7d-7e61-bde6-fe0424feb270.jsonl",
    );
    let gemini = gemini_session(&repo, &repo.root, "repo");
    // Sessions of another folder are not this repository's.
    let elsewhere = repo.outside();
    codex_rollout(
        &repo,
        &elsewhere,
        "rollout-2026-11-26T05-00-00-01a2ffff-0000-7000-8000-000000000000.jsonl",
    );
    gemini_session(&repo, &elsewhere, "not-a-repo");

    let out = repo.json(&["extract"]);
    let read = paths_read(&out);
    assert_eq!(
        read,
        [codex.to_str().unwrap(), gemini.to_str().unwrap()],
        "{out:#}"
    );
    for t in out["transcripts"].as_array().unwrap() {
        assert_eq!(t["lines"]["malformed"], 0, "{t:#}");
    }

    // Both sessions' reasoning is on the commit that holds their lines, saying whose it is.
    let notes = notes_of(&repo, "HEAD");
    for (session, agent, model) in [
        (CODEX_SESSION, "codex", "gpt-5.5"),
        (GEMINI_SESSION, "gemini-cli", "gemini-2.5-flash"),
    ] {
        let rejection = rejection_of(&notes, agent);
        assert_eq!(rejection["session_id"], session);
        assert_eq!(rejection["session"]["model"], model);
        assert!(
            rejection["files_affected"]
                .as_array()
                .unwrap()
                .contains(&"cache.rs".into())
        );
    }
    // show and review say whose the reasoning is, as text and as Markdown.
    let show = repo.ok(&["show", "HEAD"]);
    assert!(
        show.contains("session 01a21608-ce7d-7e61-bde6-fe0424feb270 (Codex CLI)"),
        "{show}"
    );
    assert!(show.contains("(Gemini CLI)"), "{show}");
    let markdown = repo.ok(&["review", "HEAD~1..HEAD", "--format", "markdown"]);
    assert!(
        markdown.contains("(codex)") && markdown.contains("(gemini-cli)"),
        "{markdown}"
    );
    // `status` says whose each transcript is.
    let status = repo.ok(&["status"]);
    assert!(
        status.contains("  sessions by agent: Codex CLI 1, Gemini CLI 1\n"),
        "{status}"
    );
    assert!(
        status.contains(
            "rollout-2026-11-26T04-06-45-01a21608-ce7d-7e61-bde6-fe0424feb270.jsonl (Codex CLI)  "
        ),
        "{status}"
    );
    // Reading again finds nothing new.
    let again = repo.json(&["extract"]);
    for t in again["transcripts"].as_array().unwrap() {
        assert_eq!(t["events_added"], 0, "{again:#}");
    }
}

#[test]
fn extract_reads_one_session_by_its_id_whichever_agent_ran_it() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    let codex = codex_rollout(
        &repo,
        &repo.root,
        "rollout-2026-11-26T04-06-45-01a21608-ce7d-7e61-bde6-fe0424feb270.jsonl",
    );
    let gemini = gemini_session(&repo, &repo.root, "repo");
    for (session, path) in [(CODEX_SESSION, &codex), (GEMINI_SESSION, &gemini)] {
        let out = repo.json(&["extract", "--session", session]);
        let read = paths_read(&out);
        assert_eq!(read, [path.to_str().unwrap()], "{out:#}");
    }
}

#[test]
fn a_commit_codex_runs_is_linked_to_its_session_by_the_id_codex_gives_it() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", "pub fn lookup() {}\n", "lookup");
    repo.ok(&["init"]);
    repo.install_git_hooks();
    codex_rollout(
        &repo,
        &repo.root,
        "rollout-2026-11-26T04-06-45-01a21608-ce7d-7e61-bde6-fe0424feb270.jsonl",
    );
    // A commit whose lines the session never wrote: only the id ties it to the session.
    fs::write(repo.root.join("notes.txt"), "unrelated\n").unwrap();
    repo.git(&["add", "notes.txt"]);
    repo.git_in(
        &repo.root,
        &["commit", "-q", "-m", "by codex"],
        &[("CODEX_SESSION_ID", CODEX_SESSION)],
    );
    let notes = notes_of(&repo, "HEAD");
    let session = notes
        .iter()
        .find(|e| e["kind"] == "session")
        .unwrap_or_else(|| panic!("{notes:#?}"));
    assert_eq!(session["session_id"], CODEX_SESSION);
    assert_eq!(session["session"]["agent"], "codex");
}

/// Run `hook --agent <agent> <event>` with `payload` (the fields the agent sends, as Codex CLI
/// 0.169.0 and Gemini CLI 0.61.0 sent them), the repository as the session's folder; the
/// context it answers with.
fn hook(repo: &TestRepo, agent: &str, event: &str, payload: serde_json::Value) -> Option<String> {
    let mut payload = payload;
    payload["cwd"] = repo.root.to_str().unwrap().into();
    payload["hook_event_name"] = event.into();
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "--agent", agent, event],
        payload.to_string().as_bytes(),
        &[],
    );
    hook_answer(event, &out)
}

#[test]
fn codex_hooks_extract_at_stop_and_give_a_patched_files_reasoning_before_the_patch() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    repo.commit_at("cache.rs", CACHE, "cache", "2026-11-26T04:10:00Z");
    repo.ok(&["init"]);
    let rollout = codex_rollout(
        &repo,
        &repo.root,
        "rollout-2026-11-26T04-06-45-01a21608-ce7d-7e61-bde6-fe0424feb270.jsonl",
    );
    let session = serde_json::json!({
        "session_id": CODEX_SESSION,
        "transcript_path": rollout,
        "model": "gpt-5.5",
        "permission_mode": "bypassPermissions",
    });
    let mut stop = session.clone();
    stop["stop_hook_active"] = false.into();
    stop["last_assistant_message"] = "Committed.".into();
    assert_eq!(hook(&repo, "codex", "Stop", stop), None);
    assert!(
        repo.log()
            .contains("hook Stop: 1 transcripts: 6 new events"),
        "{}",
        repo.log()
    );

    // Another session, about to patch the file.
    let mut patch = session.clone();
    patch["session_id"] = "01a2ffff-0000-7000-8000-000000000001".into();
    patch["tool_name"] = "apply_patch".into();
    patch["tool_input"] = serde_json::json!({
        "command": "*** Begin Patch\n*** Update File: cache.rs\n@@\n-    ttl: Duration,\n+    ttl: Duration,\n+    hits: u64,\n*** End Patch\n"
    });
    patch["tool_use_id"] = "call_b".into();
    let context = hook(&repo, "codex", "PreToolUse", patch).expect("the file's reasoning");
    assert!(
        context.starts_with("Notes on cache.rs from earlier sessions"),
        "{context}"
    );
    assert!(
        context.contains("I rejected the lru crate because"),
        "{context}"
    );
    assert!(context.contains("session 01a21608 (codex)"), "{context}");
    // A shell command names no file.
    let mut shell = session.clone();
    shell["tool_name"] = "Bash".into();
    shell["tool_input"] = serde_json::json!({"command": "cat cache.rs"});
    assert_eq!(hook(&repo, "codex", "PreToolUse", shell), None);
}

#[test]
fn gemini_hooks_extract_after_the_turn_and_give_reasoning_with_the_prompt_and_after_a_read() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    repo.commit_at("cache.rs", CACHE, "cache", "2026-11-26T04:10:00Z");
    repo.ok(&["init"]);
    let chat = gemini_session(&repo, &repo.root, "repo");
    let session = serde_json::json!({
        "session_id": GEMINI_SESSION,
        "transcript_path": chat,
        "timestamp": "2026-11-26T04:07:05.000Z",
    });
    let mut after = session.clone();
    after["prompt"] = "Cache the token lookups; they repeat a lot.".into();
    after["prompt_response"] = "Committed.".into();
    after["stop_hook_active"] = false.into();
    assert_eq!(hook(&repo, "gemini-cli", "AfterAgent", after), None);
    assert!(
        repo.log()
            .contains("hook AfterAgent: 1 transcripts: 5 new events"),
        "{}",
        repo.log()
    );

    let mut next = session.clone();
    next["session_id"] = "0b0e6c1e-0000-4000-8000-000000000002".into();
    // In headless runs Gemini CLI puts SessionStart's context into the prompt it gives
    // BeforeAgent; it is not the user's question.
    next["prompt"] = "<hook_context>Notes from earlier sessions about Redis</hook_context>\n\nWhy is there no lru crate in cache.rs?".into();
    let context = hook(&repo, "gemini-cli", "BeforeAgent", next.clone()).expect("reasoning");
    assert!(
        context.contains("I rejected the lru crate because"),
        "{context}"
    );
    assert!(context.contains("(gemini-cli)"), "{context}");

    // Its BeforeTool cannot add context: a file's reasoning comes after it is read, once.
    let mut read = next.clone();
    read["session_id"] = "0b0e6c1e-0000-4000-8000-000000000003".into();
    read["tool_name"] = "read_file".into();
    read["tool_input"] = serde_json::json!({"file_path": repo.root.join("cache.rs")});
    read["tool_response"] = serde_json::json!({"llmContent": CACHE, "returnDisplay": ""});
    let context = hook(&repo, "gemini-cli", "AfterTool", read.clone()).expect("the file's notes");
    assert!(
        context.starts_with("Notes on cache.rs from earlier sessions"),
        "{context}"
    );
    let again = hook(&repo, "gemini-cli", "AfterTool", read);
    assert_eq!(again, None, "given once per session");
}

#[test]
fn a_gemini_session_read_while_it_is_written_is_read_whole_again_once_it_grew() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    repo.commit_at("cache.rs", CACHE, "cache", "2026-11-26T04:10:00Z");
    let chat = gemini_session(&repo, &repo.root, "repo");
    let whole = fs::read_to_string(&chat).unwrap();
    // As the hook before the model's first answer finds it: the prompt, no reasoning yet.
    let start: String = whole.lines().take(4).map(|l| format!("{l}\n")).collect();
    fs::write(&chat, &start).unwrap();
    let first = repo.extract(&chat);
    assert_eq!(first["events_added"], 1, "{first:#}");
    fs::write(&chat, &whole).unwrap();
    let second = repo.extract(&chat);
    assert_eq!(second["events_added"], 4, "{second:#}");
    let notes = notes_of(&repo, "HEAD");
    assert!(notes.iter().any(|e| e["kind"] == "rejection"), "{notes:#?}");
}

#[test]
fn install_puts_codex_and_gemini_hooks_beside_others_trusts_codexs_and_uninstall_takes_them_out() {
    let repo = TestRepo::new();
    repo.commit("lib.rs", LIB, "lookup");
    let codex = repo.home.join(".codex");
    let gemini = repo.home.join(".gemini");
    fs::create_dir_all(&codex).unwrap();
    fs::create_dir_all(&gemini).unwrap();
    // What the user had: a hook of their own, and configuration we must keep.
    let theirs =
        r#"{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}"#;
    fs::write(codex.join("hooks.json"), theirs).unwrap();
    let config = "model = \"gpt-5.5\"\n\n[projects.\"/src/app\"]\ntrust_level = \"trusted\"\n";
    fs::write(codex.join("config.toml"), config).unwrap();
    let settings = r#"{"security": {"auth": {"selectedType": "gemini-api-key"}}}"#;
    fs::write(gemini.join("settings.json"), settings).unwrap();

    let said = repo.ok(&["install", "--agent", "codex"]);
    assert!(
        said.contains("added Codex CLI hooks for 6 events to ~/.codex/hooks.json"),
        "{said}"
    );
    assert!(
        said.contains("trusted our Codex CLI hooks in ~/.codex/config.toml"),
        "{said}"
    );
    let hooks: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(codex.join("hooks.json")).unwrap()).unwrap();
    let stop = hooks["hooks"]["Stop"].as_array().unwrap();
    assert_eq!(stop[0]["hooks"][0]["command"], "notify-send done");
    assert_eq!(
        stop[1]["hooks"][0]["command"],
        "git-agent-context hook --agent codex Stop"
    );
    assert_eq!(hooks["hooks"]["PreToolUse"][0]["matcher"], "^apply_patch$");
    let trusted = fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(trusted.starts_with(config), "{trusted}");
    let hooks_path = codex.join("hooks.json");
    // Ours only, each where it is: Stop's is the event's second group.
    assert!(
        trusted.contains(&format!(
            "[hooks.state.\"{}:stop:1:0\"]",
            hooks_path.display()
        )),
        "{trusted}"
    );
    assert!(!trusted.contains(":stop:0:0"), "{trusted}");
    assert_eq!(
        trusted.matches("trusted_hash = \"sha256:").count(),
        6,
        "{trusted}"
    );
    // Again: nothing changes.
    let again = repo.ok(&["install", "--agent", "codex"]);
    assert!(again.starts_with("already installed"), "{again}");
    assert_eq!(
        fs::read_to_string(codex.join("config.toml")).unwrap(),
        trusted
    );

    let said = repo.ok(&["install", "--agent", "gemini-cli"]);
    assert!(
        said.contains("added Gemini CLI hooks for 5 events to ~/.gemini/settings.json"),
        "{said}"
    );
    let gemini_settings: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(gemini.join("settings.json")).unwrap()).unwrap();
    assert_eq!(
        gemini_settings["security"]["auth"]["selectedType"],
        "gemini-api-key"
    );
    let handler = &gemini_settings["hooks"]["BeforeAgent"][0]["hooks"][0];
    assert_eq!(
        handler["command"],
        "git-agent-context hook --agent gemini-cli BeforeAgent"
    );
    assert_eq!(handler["timeout"], 10_000);
    assert_eq!(handler["name"], "git-agent-context");

    // status and doctor see both, and whether Codex trusts ours.
    let status = repo.ok(&["status"]);
    assert!(
        status.contains("  Codex CLI user (~/.codex/hooks.json): hooks for 6 events, trusted\n"),
        "{status}"
    );
    assert!(
        status.contains("  Gemini CLI user (~/.gemini/settings.json): hooks for 5 events\n"),
        "{status}"
    );
    let doctor = repo.ok(&["doctor"]);
    assert!(
        doctor.contains(
            "ok: Codex CLI hooks: registered in the user scope (~/.codex/hooks.json), and trusted\n"
        ),
        "{doctor}"
    );
    assert!(!doctor.contains("Claude Code hooks"), "{doctor}");
    let edited = trusted.replacen("trusted_hash = \"sha256:", "trusted_hash = \"sha256:0", 1);
    fs::write(codex.join("config.toml"), &edited).unwrap();
    let out = repo.run(&["doctor"]);
    assert_eq!(out.status.code(), Some(1));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("problem: Codex CLI hooks: registered in the user scope (~/.codex/hooks.json), but not trusted"), "{said}");
    fs::write(codex.join("config.toml"), &trusted).unwrap();

    // Codex has no settings of one's own in the project.
    let out = repo.run(&["install", "--agent", "codex", "--scope", "local"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(crate::repo::stderr(&out).starts_with("error: Codex CLI has no local settings"));

    // Out again: their hook and configuration stay; the git hooks stay while Gemini's are in.
    let said = repo.ok(&["uninstall", "--agent", "codex"]);
    assert!(
        said.contains("removed the Codex CLI hooks from ~/.codex/hooks.json"),
        "{said}"
    );
    assert!(
        said.contains("removed the trust of our hooks from ~/.codex/config.toml"),
        "{said}"
    );
    assert!(said.contains("kept the git hooks in .git/hooks: ~/.gemini/settings.json (Gemini CLI) still registers our hooks"), "{said}");
    assert_eq!(
        fs::read_to_string(codex.join("config.toml")).unwrap(),
        config
    );
    let left: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(codex.join("hooks.json")).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<serde_json::Value>(theirs).unwrap()
    );
    let said = repo.ok(&["uninstall", "--agent", "gemini-cli"]);
    assert!(
        said.contains("removed the git hook .git/hooks/post-commit"),
        "{said}"
    );
    let left: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(gemini.join("settings.json")).unwrap()).unwrap();
    assert_eq!(
        left,
        serde_json::from_str::<serde_json::Value>(settings).unwrap()
    );
}
