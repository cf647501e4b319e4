//! Claude Code's hooks through the binary: the payloads Claude Code 2.1.330 sent
//! (`fixtures/hooks/`), pointed at a scenario repository, and what the hook answers.

use std::fs;
use std::process::Output;

use git_agent_context::deliver::adapter;
use git_agent_context::transcript::agent::Agent;
use serde_json::Value;

use crate::repo::{TestRepo, fixture, hook_answer, run_within, stderr};
use crate::scenario;

const SESSION: &str = "9b1f0c2e-5d4a-4e8b-a1c3-7f6e5d4c3b2a";

/// The recorded payload of `name`, as if Claude Code ran in the scenario repository.
pub fn payload(repo: &TestRepo, name: &str, changes: &[(&str, Value)]) -> Value {
    let transcript = repo.project_dir().join(format!("{SESSION}.jsonl"));
    repo.hook_payload(name, SESSION, &transcript, changes)
}

/// The recorded payload of a Write about to be made to `file` (a path in the repository).
pub fn write_payload(repo: &TestRepo, file: &std::path::Path) -> Value {
    payload(
        repo,
        "PreToolUse-Write",
        &[(
            "tool_input",
            serde_json::json!({"file_path": file.to_str().unwrap(), "content": "x"}),
        )],
    )
}

/// Run `hook <event>` with `input` on stdin, from `dir`, with extra environment.
fn run_hook(
    repo: &TestRepo,
    dir: &std::path::Path,
    event: &str,
    input: &[u8],
    vars: &[(&str, &str)],
) -> Output {
    let out = repo.run_with_input(dir, &["hook", event], input, vars);
    assert!(out.status.success(), "hooks exit 0: {}", stderr(&out));
    out
}

/// What the hook injected: the context of its JSON answer, or `None` for an empty answer.
fn injected(repo: &TestRepo, event: &str, payload: &Value) -> Option<String> {
    let out = run_hook(repo, &repo.root, event, payload.to_string().as_bytes(), &[]);
    assert_eq!(stderr(&out), "", "a hook that works says nothing on stderr");
    hook_answer(event, &out)
}

/// What the prompt hook gives `prompt` in `session`.
pub fn ask_in(repo: &TestRepo, session: &str, prompt: &str) -> Option<String> {
    let mut ask = payload(repo, "UserPromptSubmit", &[("prompt", prompt.into())]);
    ask["session_id"] = session.into();
    injected(repo, "UserPromptSubmit", &ask)
}

#[test]
fn a_prompt_gets_its_reasoning_once_and_again_after_compaction() {
    let s = scenario::build();
    let repo = &s.repo;
    let ask = payload(
        repo,
        "UserPromptSubmit",
        &[(
            "prompt",
            "Why does src/cache.rs keep a TTL map? Could it be an LRU?".into(),
        )],
    );
    let context = injected(repo, "UserPromptSubmit", &ask).expect("reasoning for cache.rs");
    assert!(
        context.contains("Use a TTL map for the response cache"),
        "{context}"
    );
    assert!(context.contains("An LRU cache won't work"), "{context}");
    // Given once per session.
    assert_eq!(injected(repo, "UserPromptSubmit", &ask), None);
    let log = repo.log();
    assert!(log.contains("hook UserPromptSubmit: injected"), "{log}");

    // Another session is given it too.
    let mut other = ask.clone();
    other["session_id"] = "another-session".into();
    assert!(injected(repo, "UserPromptSubmit", &other).is_some());

    // Compaction takes the context away: it is given again.
    let compact = payload(repo, "SessionStart-compact", &[]);
    assert_eq!(injected(repo, "SessionStart", &compact), None);
    assert_eq!(
        injected(repo, "UserPromptSubmit", &ask).as_deref(),
        Some(context.as_str())
    );
}

#[test]
fn a_prompt_nothing_bears_on_gets_nothing() {
    let s = scenario::build();
    let repo = &s.repo;
    for prompt in [
        "Add a badge for the build to the README",
        "thanks!",
        "",
        // Prose words alone, however well they match, point at nothing.
        "Why does the response cache expire entries by time rather than an LRU?",
    ] {
        let ask = payload(repo, "UserPromptSubmit", &[("prompt", prompt.into())]);
        assert_eq!(injected(repo, "UserPromptSubmit", &ask), None, "{prompt:?}");
    }
}

#[test]
fn a_prompt_naming_a_file_as_an_editor_or_another_machine_does_gets_its_reasoning() {
    let s = scenario::build();
    let repo = &s.repo;
    let ask = |prompt: &str, session: &str| ask_in(repo, session, prompt);
    // Without the file, the words alone bear on nothing.
    assert_eq!(
        ask("Add a few table tests for this function.", "s-none"),
        None
    );
    for (n, named) in [
        "@/Users/ann/src/service/src/db/pool.rs:12-30",
        "src/db/pool.rs#L3-L9",
        "/home/ci/work/src/db/pool.rs:7:2",
    ]
    .into_iter()
    .enumerate()
    {
        let prompt = format!("Add a few table tests for this function.\n{named}");
        let context = ask(&prompt, &format!("s-{n}")).unwrap_or_default();
        assert!(
            context.contains("Derive the connection pool size from the CPU count"),
            "{named}: {context}"
        );
    }
}

#[test]
fn a_prompt_sharing_a_rare_identifier_with_a_note_gets_it() {
    let s = scenario::build();
    let repo = &s.repo;
    let said = "MAX_RETRIES_PER_HOST stays at three: the upstream rate-limits a host after four";
    repo.ok(&["record", "decision", said, "--files", "src/db/pool.rs"]);
    let ask = |prompt: &str, session: &str| ask_in(repo, session, prompt);
    let context = ask("Should we raise MAX_RETRIES_PER_HOST?", "s-named").unwrap_or_default();
    assert!(context.contains(said), "{context}");
    assert_eq!(
        ask("Should we raise the retries per host?", "s-prose"),
        None
    );
    // A plan pasted in as the prompt, hundreds of words about everything, is weighed by its
    // identifiers: the one it shares still finds the note, its prose alone nothing.
    let plan: String = (0..300).map(|n| format!("step{n} ")).collect();
    let context = ask(
        &format!("Implement the following plan: {plan}\nRaise MAX_RETRIES_PER_HOST."),
        "s-plan",
    );
    assert!(context.unwrap_or_default().contains(said));
    assert_eq!(
        ask(
            &format!("Implement the following plan: {plan}"),
            "s-plan-prose"
        ),
        None
    );
}

#[test]
fn a_prompt_about_its_branch_or_its_last_commits_gets_their_reasoning() {
    let repo = TestRepo::new();
    let decided = |path: &str, session: &str, said: &str| {
        let commit = repo.commit(path, &format!("{session}\n"), session);
        let at = "2026-03-01T09:00:00Z";
        let e = scenario::event((session, "t1", "decision"), said, at, "", &[path], &[]);
        scenario::add_note(&repo, &commit, &e.to_string());
        repo.ok(&["rebuild"]);
    };
    let merged = "Retry each request three times: the upstream drops one in a hundred";
    decided("a.rs", "merged-1", merged);
    let remote = repo.home.parent().unwrap().join("remote.git");
    repo.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git(&["push", "-q", "-u", "origin", "main"]);
    repo.git(&["checkout", "-q", "-b", "queue"]);
    let older = "Keep the queue in memory: a restart may drop what it holds, which is retried";
    let newer = "Drain the queue on shutdown rather than dropping what it holds";
    decided("b.rs", "queue-1", older);
    decided("c.rs", "queue-2", newer);
    let ask = |prompt: &str, session: &str| ask_in(&repo, session, prompt).unwrap_or_default();
    // The branch's own work, not the default branch's.
    let told = ask("Can you review the changes in this branch?", "s-branch");
    assert!(told.contains(older) && told.contains(newer), "{told}");
    assert!(!told.contains(merged), "{told}");
    let told = ask("Check the PR comments and fix what is valid", "s-pr");
    assert!(told.contains(older) && told.contains(newer), "{told}");
    // The last commit is HEAD; the last two, HEAD and its parent.
    let told = ask(
        "can you look at the last commit, can we add a test for it",
        "s-last",
    );
    assert!(told.contains(newer) && !told.contains(older), "{told}");
    let told = ask("what did the last 3 commits change?", "s-last-3");
    assert!(
        told.contains(newer) && told.contains(older) && told.contains(merged),
        "{told}"
    );
    // Prose that points at no commit gets nothing.
    assert_eq!(
        ask_in(&repo, "s-prose", "can you review the changes?"),
        None
    );
    // On the default branch, its own work is what is not pushed yet: none.
    repo.git(&["checkout", "-q", "main"]);
    assert_eq!(
        ask_in(
            &repo,
            "s-main",
            "Can you review the changes in this branch?"
        ),
        None
    );
}

#[test]
fn a_prompt_naming_lines_gets_the_reasoning_of_those_lines() {
    let s = scenario::build();
    let repo = &s.repo;
    let cache = fs::read_to_string(repo.root.join("src/cache.rs")).unwrap();
    let line_of = |text: &str| 1 + cache.lines().position(|l| l.contains(text)).unwrap();
    let (cap, map) = (
        line_of("const MAX_ENTRIES"),
        line_of("pub struct ResponseCache"),
    );
    let ask = |lines: String, session: &str| {
        let prompt = format!("What is this for? @src/cache.rs:{lines}");
        ask_in(repo, session, &prompt).unwrap_or_default()
    };
    let (capped, ttl) = ("Cap the response cache", "Use a TTL map");
    let context = ask(format!("{cap}"), "s-cap");
    assert!(
        context.contains(capped) && !context.contains(ttl),
        "{context}"
    );
    let context = ask(format!("{map}-{}", map + 1), "s-map");
    assert!(
        context.contains(ttl) && !context.contains(capped),
        "{context}"
    );
    // Lines past the file's end (another version's numbers) point at nothing.
    assert_eq!(ask("900-910".into(), "s-past"), "");
    // The editor numbers the lines of the file as it is in the working tree.
    let path = repo.root.join("src/cache.rs");
    fs::write(&path, format!("{}{cache}", "// a new line\n".repeat(10))).unwrap();
    let context = ask(format!("{}", cap + 10), "s-shifted");
    assert!(
        context.contains(capped) && !context.contains(ttl),
        "{context}"
    );
    fs::write(&path, &cache).unwrap();
    // A link in the file's place is not read (to a device that never ends, here): the lines
    // are HEAD's.
    #[cfg(unix)]
    {
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let context = ask(format!("{cap}"), "s-link");
        assert!(
            context.contains(capped) && !context.contains(ttl),
            "{context}"
        );
        fs::remove_file(&path).unwrap();
        fs::write(&path, &cache).unwrap();
    }
    // Lines of both have both.
    let context = ask(format!("{}-{}", cap.min(map), cap.max(map)), "s-both");
    assert!(
        context.contains(ttl) && context.contains(capped),
        "{context}"
    );
}

#[test]
fn a_file_about_to_change_gets_its_decisions_and_rejections() {
    let s = scenario::build();
    let repo = &s.repo;
    let cache = repo.root.join("src/cache.rs");
    let write = write_payload(repo, &cache);
    let context = injected(repo, "PreToolUse", &write).expect("decisions for cache.rs");
    assert!(
        context.starts_with("Notes on src/cache.rs from earlier sessions (git agent-context)"),
        "{context}"
    );
    assert!(
        context.contains("- rejected: \"An LRU cache won't work"),
        "{context}"
    );
    assert!(context.contains("not taken: \"an LRU cache\""), "{context}");
    // What was ruled out comes first; every note says where it comes from; nothing is an order.
    assert!(
        context.find("- rejected:") < context.find("- decided:"),
        "{context}"
    );
    assert!(
        context.contains("[commit 7832cc6, session s1-cache, 2026-01-05, event "),
        "{context}"
    );
    for order in ["keep to them", "do not re-propose"] {
        assert!(!context.contains(order), "{context}");
    }
    // Explorations are not standing decisions, nor are the decisions of the files beside it.
    assert!(!context.contains("Read how the HTTP client"), "{context}");
    assert!(!context.contains("connection pool"), "{context}");
    assert!(
        context.len() <= 300 * 7 / 2,
        "a few hundred tokens at most: {}",
        context.len()
    );
    // Once per session, for any tool.
    let mut read = write.clone();
    read["tool_name"] = "Read".into();
    assert_eq!(injected(repo, "PreToolUse", &read), None);

    // Other tools, files without reasoning and files outside the repository get nothing.
    let mut bash = write.clone();
    bash["session_id"] = "fresh".into();
    bash["tool_name"] = "Bash".into();
    bash["tool_input"] = serde_json::json!({"command": "cat src/cache.rs"});
    assert_eq!(injected(repo, "PreToolUse", &bash), None);
    for path in [repo.root.join("NOTES.md"), repo.outside().join("cache.rs")] {
        let mut other = write.clone();
        other["session_id"] = "fresh".into();
        other["tool_input"]["file_path"] = path.to_str().unwrap().into();
        assert_eq!(
            injected(repo, "PreToolUse", &other),
            None,
            "{}",
            path.display()
        );
    }
}

/// What a file's hook reads of a note is kept for the next one, and never given stale: a note
/// that changed, or a copy that cannot be read, is read again from git.
#[test]
fn what_a_hook_reads_of_a_note_is_kept_and_made_again_when_the_note_changes() {
    let s = scenario::build();
    let repo = &s.repo;
    let write = |session: &str| {
        let mut write = write_payload(repo, &repo.root.join("src/cache.rs"));
        write["session_id"] = session.into();
        injected(repo, "PreToolUse", &write).expect("decisions for cache.rs")
    };
    let (before, after) = (
        "Use a TTL map for the response cache",
        "Use a swept TTL map",
    );
    assert!(write("s-first").contains(before));
    let kept = repo.store_dir().join("told");
    let commit = repo.git(&["log", "-1", "--format=%H", "--", "src/cache.rs"]);
    let copy = |commit: &str| -> Value {
        let text = fs::read_to_string(kept.join(format!("{}.json", commit.trim()))).unwrap();
        serde_json::from_str(&text).unwrap()
    };
    let note_blob = |commit: &str| {
        repo.git(&[
            "rev-parse",
            &format!("refs/notes/agent-context:{}", commit.trim()),
        ])
    };
    // One copy a note read, made from the note as it is, and read instead of the note.
    assert_eq!(copy(&commit)["blob"], note_blob(&commit).trim());
    let copies = fs::read_dir(&kept).unwrap().count();
    assert!(copies >= 2, "{copies}");
    let quoting: Vec<std::path::PathBuf> = (fs::read_dir(&kept).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| fs::read_to_string(p).unwrap().contains(before))
        .collect();
    assert!(!quoting.is_empty());
    let edit = |from: &str, to: &str| {
        for path in &quoting {
            let text = fs::read_to_string(path).unwrap();
            fs::write(path, text.replace(from, to)).unwrap();
        }
    };
    let planted = "Use a TTL map, as this copy says";
    edit(before, planted);
    assert!(write("s-copy").contains(planted));
    // A copy made for other kinds, or in another form, is made again from the note.
    edit(r#""kinds":""#, r#""kinds":"read,"#);
    let context = write("s-kinds");
    assert!(
        context.contains(before) && !context.contains(planted),
        "{context}"
    );
    edit(before, planted);
    edit(r#""format":1"#, r#""format":0"#);
    let context = write("s-format");
    assert!(
        context.contains(before) && !context.contains(planted),
        "{context}"
    );

    // The note changes: the next hook reads it again.
    let annotated = repo.git(&["notes", "--ref=agent-context", "list"]);
    let mut changed = 0;
    for line in annotated.lines() {
        let commit = line.split_whitespace().nth(1).unwrap();
        let note = repo.git(&["notes", "--ref=agent-context", "show", commit]);
        if note.contains(before) {
            scenario::add_note(
                repo,
                commit,
                note.trim_end().replace(before, after).as_str(),
            );
            changed += 1;
        }
    }
    assert!(changed > 0);
    let context = write("s-second");
    assert!(
        context.contains(after) && !context.contains(before),
        "{context}"
    );
    assert_eq!(copy(&commit)["blob"], note_blob(&commit).trim());

    // A copy that cannot be read is a copy missed.
    for entry in fs::read_dir(&kept).unwrap() {
        fs::write(entry.unwrap().path(), "{\"blob\": tr").unwrap();
    }
    assert_eq!(write("s-third"), context);
    assert_eq!(copy(&commit)["blob"], note_blob(&commit).trim());
}

#[test]
fn a_file_is_given_an_edit_undone_on_it_with_its_reason_not_a_bare_failure() {
    let repo = TestRepo::new();
    let path = "src/names.rs";
    let commit = repo.commit(
        path,
        "pub fn handle_gemini_start() {}\n",
        "Name the handlers",
    );
    let undone = |session: &str, summary: &str, rationale: &str| {
        let mut e = scenario::event(
            (session, "toolu_1", "rejection"),
            summary,
            "2026-03-01T09:00:00Z",
            "Drop the redundant prefixes",
            &[path],
            &[],
        );
        e["origin"] = "tool_sequence".into();
        e["rationale"] = rationale.into();
        e.to_string()
    };
    let reasoned = undone(
        "s-names",
        "Reverted the change to src/names.rs after `cargo build` failed",
        "The Claude handlers live in the same module, so the names clash without the prefix.",
    );
    // As notes written before an undone edit carried its reason have it. Its words make it the
    // same subject as the first, which it supersedes (it sorts later; the graph's edges say
    // so below): what is never given replaces nothing.
    let bare = undone(
        "s-tests",
        "Reverted the change to 2 files after `cargo test` failed",
        "The change to 2 files was undone after `cargo test` failed.",
    );
    scenario::add_note(&repo, &commit, &format!("{reasoned}\n{bare}"));
    repo.ok(&["rebuild"]);
    let id = |e: &str| {
        serde_json::from_str::<Value>(e).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let edges: String = repo
        .git(&["ls-tree", "--name-only", "refs/agent-context:index/edges"])
        .lines()
        .map(|b| repo.git(&["show", &format!("refs/agent-context:index/edges/{b}")]))
        .collect();
    assert!(
        edges.lines().any(|l| l.starts_with(&id(&reasoned))
            && l.contains("\tsupersedes\t")
            && l.contains(&id(&bare))),
        "{edges}"
    );
    let write = write_payload(&repo, &repo.root.join(path));
    let context = injected(&repo, "PreToolUse", &write).expect("the undone edit for names.rs");
    assert!(
        context.contains(
            "- rejected: \"Reverted the change to src/names.rs after `cargo build` failed\""
        ),
        "{context}"
    );
    assert!(
        context
            .contains("reason: \"The Claude handlers live in the same module, so the names clash"),
        "{context}"
    );
    assert!(!context.contains("`cargo test`"), "{context}");
}

#[test]
fn a_file_is_given_what_still_lives_in_the_files_it_concerns_and_not_what_is_gone() {
    let repo = TestRepo::new();
    let lines = |word: &str| {
        (1..=10)
            .map(|i| format!("{word} {i}\n"))
            .collect::<String>()
    };
    let record = |text: &str, files: &[&str]| {
        let mut args = vec!["record", "decision", text, "--files"];
        args.extend(files);
        repo.ok(&args);
    };
    // One commit writes three files, the next rewrites one of them whole.
    for (file, word) in [("b.rs", "beta"), ("c.rs", "delta")] {
        fs::write(repo.root.join(file), lines(word)).unwrap();
        repo.git(&["add", file]);
    }
    repo.commit("a.rs", &lines("alpha"), "parser and lexer");
    record("Split the parser from the lexer", &["a.rs", "b.rs", "c.rs"]);
    record("Keep the alpha tables beside the parser", &["a.rs"]);
    repo.commit("a.rs", &lines("gamma"), "gamma states");
    record("Name the gamma states after the grammar", &["a.rs"]);

    let a = repo.root.join("a.rs");
    let edit = write_payload(&repo, &a);
    let context = injected(&repo, "PreToolUse", &edit).expect("notes on a.rs");
    // Live: what the last commit decided about a.rs, and the split, whose commit still holds
    // the lines of b.rs.
    assert!(context.contains("Name the gamma states"), "{context}");
    assert!(
        context.contains("Split the parser from the lexer"),
        "{context}"
    );
    // Gone from the one file it concerns, with live notes to give instead: left out.
    assert!(!context.contains("alpha tables"), "{context}");

    // A prompt's answer counts the lines in every file: those of b.rs and c.rs.
    let answer = repo.json(&[
        "query",
        "Split the parser from the lexer",
        "--files",
        "a.rs",
    ]);
    let split = answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["summary"] == "Split the parser from the lexer")
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(
        split["liveness"],
        serde_json::json!({"state": "live", "lines": 20}),
        "{answer}"
    );
}

#[test]
fn hooks_fail_open() {
    let s = scenario::build();
    let repo = &s.repo;
    // Bad input: nothing injected, one line on stderr and in the log.
    let out = run_hook(repo, &repo.root, "UserPromptSubmit", b"{not json", &[]);
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("hook UserPromptSubmit: bad input"), "{err}");
    let log = repo.log();
    assert!(
        log.contains("hook UserPromptSubmit: failed: bad input"),
        "{log}"
    );

    // Outside a repository: nothing at all.
    let mut outside = payload(
        repo,
        "UserPromptSubmit",
        &[("prompt", "src/cache.rs".into())],
    );
    outside["cwd"] = repo.outside().to_str().unwrap().into();
    let out = run_hook(
        repo,
        &repo.outside(),
        "UserPromptSubmit",
        outside.to_string().as_bytes(),
        &[],
    );
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{}",
        stderr(&out)
    );

    // Past its budget the hook answers with nothing: here the record of what the session was
    // given is a named pipe that no one writes to, a read that never ends, as on a hung disk.
    let given = repo
        .root
        .join(format!(".git/agent-context/injected/{SESSION}.txt"));
    fs::create_dir_all(given.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&given).status();
    assert!(made.unwrap().success(), "mkfifo {}", given.display());
    let ask = payload(
        repo,
        "UserPromptSubmit",
        &[("prompt", "Why a TTL map in src/cache.rs?".into())],
    );
    let out = run_hook(
        repo,
        &repo.root,
        "UserPromptSubmit",
        ask.to_string().as_bytes(),
        &[("GIT_AGENT_CONTEXT_HOOK_BUDGET_MS", "50")],
    );
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr(&out).contains("over its budget of 50 ms"),
        "{}",
        stderr(&out)
    );
    fs::remove_file(&given).unwrap();
    // With the store free, the same hook answers.
    assert!(injected(repo, "UserPromptSubmit", &ask).is_some());
}

#[test]
fn an_answer_that_cannot_be_written_is_not_given() {
    let s = scenario::build();
    let repo = &s.repo;
    let ask = payload(
        repo,
        "UserPromptSubmit",
        &[("prompt", "Why does src/cache.rs keep a TTL map?".into())],
    );
    // A full disk where the answer goes.
    let full = fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let mut cmd = repo.cmd_in(&repo.root);
    cmd.args(["hook", "UserPromptSubmit"]);
    let out = with_stdout(cmd, full, ask.to_string().as_bytes());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        err.trim_end(),
        "git-agent-context: hook UserPromptSubmit: cannot write the answer: No space left on device (os error 28)"
    );
    let log = repo.log();
    assert!(
        log.contains("hook UserPromptSubmit: failed: cannot write the answer: "),
        "{log}"
    );
    assert!(!log.contains("injected"), "{log}");
    // The session never got it: it is given the next time.
    let context = injected(repo, "UserPromptSubmit", &ask).expect("reasoning for cache.rs");
    assert!(
        context.contains("Use a TTL map for the response cache"),
        "{context}"
    );
}

/// Run `cmd` with `input` on its stdin and `stdout` as its stdout; stderr captured.
fn with_stdout(mut cmd: std::process::Command, stdout: fs::File, input: &[u8]) -> Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(stdout)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn the_budget_counts_from_the_start_of_the_process() {
    let s = scenario::build();
    let repo = &s.repo;
    let ask = payload(
        repo,
        "UserPromptSubmit",
        &[("prompt", "Why does src/cache.rs keep a TTL map?".into())],
    );
    let limit = std::time::Duration::from_secs(10);
    let hook = || {
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.args(["hook", "UserPromptSubmit"]);
        cmd
    };
    let cut = |out: &Output| {
        let err = stderr(out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert!(
            out.stdout.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(
            err.trim_end(),
            "git-agent-context: hook UserPromptSubmit: over its budget of 1000 ms (hook.budget_ms): answered with nothing"
        );
    };
    // Claude Code never closes stdin: the default budget holds while the input is read.
    let (out, took) = run_within(hook(), b"{", true, limit);
    cut(&out);
    assert!(took >= std::time::Duration::from_secs(1), "{took:?}");

    // The shared configuration is a named pipe no one writes to: reading it never ends.
    let shared = repo.root.join(".agent-context.toml");
    let made = std::process::Command::new("mkfifo").arg(&shared).status();
    assert!(made.unwrap().success(), "mkfifo {}", shared.display());
    let (out, _) = run_within(hook(), ask.to_string().as_bytes(), false, limit);
    cut(&out);
    let log = repo.log();
    assert!(
        log.contains("hook UserPromptSubmit: failed: over its budget of 1000 ms (hook.budget_ms)"),
        "{log}"
    );
    fs::remove_file(&shared).unwrap();
    assert!(injected(repo, "UserPromptSubmit", &ask).is_some());
}

#[test]
fn a_new_session_is_briefed_on_recent_work() {
    let s = scenario::build();
    let repo = &s.repo;
    let start = payload(repo, "SessionStart-startup", &[]);
    let brief = injected(repo, "SessionStart", &start).expect("a brief");
    assert!(
        brief.starts_with("Recent work in this repository"),
        "{brief}"
    );
    // The latest three sessions of the branch, newest first; older ones are left out.
    let at = |needle: &str| brief.find(needle);
    let (logs, pool, auth) = (
        at("session s6-logs, 2026-06-01: Our logs are hard to search"),
        at("session s5-pool"),
        at("session s4-auth"),
    );
    assert!(logs.is_some() && logs < pool && pool < auth, "{brief}");
    assert!(!brief.contains("s1-cache"), "{brief}");
    // A decision read out of a transcript is given with its files, not to every session.
    assert!(!brief.contains("decided:"), "{brief}");
    assert!(!brief.to_lowercase().contains("keep to"), "{brief}");
    // Startup gives it once: /clear gives it again, and the session starting is not in it.
    let mut clear = payload(repo, "SessionStart-startup", &[("source", "clear".into())]);
    clear["session_id"] = "s6-logs".into();
    let again = injected(repo, "SessionStart", &clear).expect("a brief after /clear");
    assert!(!again.contains("session s6-logs"), "{again}");
    assert!(again.contains("session s3-confi"), "{again}");
    let log = repo.log();
    assert!(
        log.contains("hook SessionStart: startup: gave the brief"),
        "{log}"
    );
    // Back on the branch as it was after the retry session: a rejection that stands alone is
    // given as one.
    repo.git(&["checkout", "-q", &s.commits["c5"]]);
    let back = injected(repo, "SessionStart", &start).expect("a brief");
    assert!(
        back.contains("- rejected: \"Retrying POST requests was rejected: they are not idempotent and a retry could charge a customer twice; retrying every method\" (src/http/client.rs)"),
        "{back}"
    );
    // A decision recorded on purpose is in it, with what it ruled out; not once a later one
    // replaced it.
    repo.git(&["checkout", "-q", "main"]);
    let said = repo.json(&[
        "record",
        "decision",
        "Size the pool from the CPU count",
        "--rejected",
        "a fixed size: it starves big machines",
        "--files",
        "src/db/pool.rs",
    ]);
    let brief = injected(repo, "SessionStart", &start).expect("a brief");
    assert!(
        brief.contains("- decided: \"Size the pool from the CPU count\" (src/db/pool.rs)\n  not taken: \"a fixed size: it starves big machines\""),
        "{brief}"
    );
    let id = said["event"]["id"].as_str().unwrap();
    repo.commit(
        "src/db/pool.rs",
        "pub const SIZE: usize = 8;\n",
        "pool: size",
    );
    repo.ok(&[
        "record",
        "decision",
        "Size the pool by the config",
        "--supersedes",
        id,
    ]);
    let brief = injected(repo, "SessionStart", &start).expect("a brief");
    assert!(brief.contains("Size the pool by the config"), "{brief}");
    assert!(!brief.contains("from the CPU count"), "{brief}");
    // A repository with nothing recorded gives nothing.
    let empty = TestRepo::new();
    empty.commit("a.txt", "a\n", "first");
    assert_eq!(
        injected(
            &empty,
            "SessionStart",
            &payload(&empty, "SessionStart-startup", &[])
        ),
        None
    );
}

/// The session of `fixtures/claude-code-2.1.330/ttl-cache-session-then-compact.jsonl`.
const TTL_SESSION: &str = "3d06a160-5483-464a-94bc-4a29f10eaa67";

#[test]
fn after_compaction_a_session_is_told_where_its_work_stands() {
    let repo = TestRepo::new();
    repo.commit("README.md", "# cache\n", "first");
    let transcript = repo.install_transcript(
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
        TTL_SESSION,
    );
    let with_session = |name: &str| {
        let mut p = payload(&repo, name, &[]);
        p["session_id"] = TTL_SESSION.into();
        p["transcript_path"] = transcript.to_str().unwrap().into();
        p
    };
    // The session registers its transcript as it starts; a subagent of it writes its own.
    let subagents = transcript.with_extension("").join("subagents");
    fs::create_dir_all(&subagents).unwrap();
    let sub = fs::read_to_string(fixture("claude-code-2.1.330/commit-one-file.jsonl"))
        .unwrap()
        .replace("487902ab-c2ee-410a-8a06-0870ad0ade0c", TTL_SESSION)
        .replace("\"isSidechain\": false", "\"isSidechain\": true");
    fs::write(subagents.join("agent-a1.jsonl"), sub).unwrap();
    injected(&repo, "SessionStart", &with_session("SessionStart-startup"));
    // PreCompact extracts the transcripts (the subagent's too) and saves the continuation; it
    // answers with nothing.
    assert_eq!(
        injected(&repo, "PreCompact", &with_session("PreCompact")),
        None
    );
    assert!(!repo.pending().is_empty(), "the transcript was extracted");
    let saved = repo.root.join(format!(
        ".git/agent-context/continuation/{TTL_SESSION}.json"
    ));
    assert!(saved.is_file());
    let log = repo.log();
    assert!(log.contains("hook PreCompact: 2 transcripts:"), "{log}");

    let context = injected(&repo, "SessionStart", &with_session("SessionStart-compact"))
        .expect("the continuation");
    assert!(
        context.starts_with("Continuing session 3d06a160 after it was compacted"),
        "{context}"
    );
    assert!(
        context.contains("Request: add a small cache module"),
        "{context}"
    );
    // Its TodoWrite failed ("No such tool available"): that list was never the session's.
    assert!(!context.contains("Write cache module"), "{context}");
    // A long sentence is told from its choice, not cut before it.
    assert!(
        context.contains("- …instead I'll go with a simple TTL map because entries expire"),
        "{context}"
    );
    assert!(
        context.contains("Files being modified: cache.py"),
        "{context}"
    );
    // The subagent's commit ("add a") is the session's work too.
    assert!(
        context.contains("Completed:\n- add a\n- Add TTL cache\n"),
        "{context}"
    );
    assert!(
        context.contains("- I chose a TTL map over an LRU because entries expire by time"),
        "{context}"
    );
    // A resume gets the same, said as a resume; the snapshot is not needed for it.
    fs::remove_file(&saved).unwrap();
    let resumed = injected(&repo, "SessionStart", &with_session("SessionStart-resume"))
        .expect("the continuation on resume");
    assert!(
        resumed.starts_with("Continuing session 3d06a160 after it was resumed"),
        "{resumed}"
    );
    assert_eq!(
        resumed.split_once('\n').unwrap().1,
        context.split_once('\n').unwrap().1
    );
    // Another session starting on its branch is told the work is not committed yet; on
    // another branch, it is other work.
    let start = payload(&repo, "SessionStart-startup", &[]);
    assert_eq!(
        injected(&repo, "SessionStart", &start),
        None,
        "it ran on master"
    );
    repo.git(&["checkout", "-q", "-b", "master"]);
    let brief = injected(&repo, "SessionStart", &start).expect("a brief");
    assert!(brief.contains("Work not committed yet:"), "{brief}");
    assert!(brief.contains("session 3d06a160"), "{brief}");
    assert!(brief.contains("changed: cache.py"), "{brief}");
    // Of the sessions whose work waits for a commit, the two whose queues changed last are
    // told, the newest first: three copies of the queue under other sessions' ids, changed a
    // day, an hour and a week ago.
    let queues = repo.root.join(".git/agent-context/pending");
    let queue = fs::read_to_string(queues.join(format!("{TTL_SESSION}.jsonl")))
        .expect("the session's queue");
    let now = std::time::SystemTime::now();
    let hours = |n: u64| now - std::time::Duration::from_secs(n * 3600);
    for (id, changed) in [
        ("aaaaaaaa", hours(24)),
        ("bbbbbbbb", hours(1)),
        ("cccccccc", hours(24 * 7)),
    ] {
        let file = queues.join(format!("{}.jsonl", TTL_SESSION.replace("3d06a160", id)));
        fs::write(&file, queue.replace("3d06a160", id)).unwrap();
        let file = fs::File::options().write(true).open(&file).unwrap();
        file.set_modified(changed).unwrap();
    }
    let start = payload(&repo, "SessionStart-startup", &[]);
    let brief = injected(&repo, "SessionStart", &start).expect("a brief");
    let told: Vec<&str> = (brief.lines())
        .filter_map(|l| l.strip_prefix("- session "))
        .map(|l| &l[..8])
        .collect();
    assert_eq!(told, ["3d06a160", "bbbbbbbb"], "{brief}");
}

/// The session of `fixtures/entireio-cli/e1/2c3e2b3f2a/0/full.jsonl`.
const E1_SESSION: &str = "0cf3db51-1c73-43bb-8d05-dc02739514a5";

#[test]
fn reads_and_searches_are_captured_once_with_the_extractors_ids() {
    let repo = TestRepo::new();
    repo.commit("README.md", "# cli\n", "first");
    let tool = |name: &str, input: Value| {
        payload(
            &repo,
            "PostToolUse-Write",
            &[
                ("tool_name", name.into()),
                ("tool_input", input),
                ("session_id", E1_SESSION.into()),
            ],
        )
    };
    let explain = repo.root.join("cmd/entire/cli/explain.go");
    let read = tool(
        "Read",
        serde_json::json!({"file_path": explain.to_str().unwrap()}),
    );
    assert_eq!(
        injected(&repo, "PostToolUse", &read),
        None,
        "it answers with nothing"
    );
    let kinds = |repo: &TestRepo| -> Vec<(String, String)> {
        repo.pending()
            .iter()
            .map(|e| {
                (
                    e["kind"].as_str().unwrap().to_owned(),
                    e["summary"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    assert_eq!(
        kinds(&repo),
        [(
            "read".to_owned(),
            "Read cmd/entire/cli/explain.go".to_owned()
        )]
    );
    // Once per file and session.
    injected(&repo, "PostToolUse", &read);
    assert_eq!(kinds(&repo).len(), 1);
    let grep = tool(
        "Grep",
        serde_json::json!({"pattern": "checkpoint", "path": "."}),
    );
    injected(&repo, "PostToolUse", &grep);
    assert!(kinds(&repo).contains(&(
        "search".to_owned(),
        "Searched for checkpoint (Grep)".to_owned()
    )));
    // Writes are the extractor's (one event per file and turn), files outside are not ours.
    injected(
        &repo,
        "PostToolUse",
        &tool(
            "Write",
            serde_json::json!({"file_path": explain.to_str().unwrap(), "content": "x"}),
        ),
    );
    injected(
        &repo,
        "PostToolUse",
        &tool("Read", serde_json::json!({"file_path": "/etc/hosts"})),
    );
    assert_eq!(kinds(&repo).len(), 2);
    let log = repo.log();
    assert!(
        log.contains("hook PostToolUse: captured: Read cmd/entire/cli/explain.go"),
        "{log}"
    );

    // The extractor makes the same events from the transcript: nothing is there twice.
    let transcript = repo.install_transcript("entireio-cli/e1/2c3e2b3f2a/0/full.jsonl", E1_SESSION);
    repo.extract(&transcript);
    let events = repo.pending();
    let reads: Vec<&Value> = events
        .iter()
        .filter(|e| e["summary"] == "Read cmd/entire/cli/explain.go")
        .collect();
    assert_eq!(reads.len(), 1, "{reads:#?}");
    assert!(
        reads[0]["timestamp"]
            .as_str()
            .unwrap()
            .starts_with("2026-01"),
        "the extractor's fuller version replaced the hook's"
    );
    let ids: std::collections::HashSet<&str> =
        events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), events.len(), "no event is queued twice");
}

#[test]
fn stop_extracts_the_session_and_refreshes_claude_md_when_asked() {
    let s = scenario::build();
    let repo = &s.repo;
    // The user asks, in their own file: a clone's shared file may not (docs/security.md).
    fs::write(
        repo.root.join(".git/agent-context/config.toml"),
        "[claude_md]\nrefresh = \"on\"\n",
    )
    .unwrap();
    let transcript = repo.install_transcript(
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
        TTL_SESSION,
    );
    let mut stop = payload(repo, "Stop", &[]);
    stop["session_id"] = TTL_SESSION.into();
    stop["transcript_path"] = transcript.to_str().unwrap().into();
    assert_eq!(
        injected(repo, "Stop", &stop),
        None,
        "Stop answers with nothing"
    );
    assert!(
        repo.pending()
            .iter()
            .any(|e| e["session_id"] == TTL_SESSION)
    );
    let claude_md = fs::read_to_string(repo.root.join("CLAUDE.md")).expect("CLAUDE.md made");
    assert!(
        claude_md.contains("<!-- agent-context:begin -->"),
        "{claude_md}"
    );
    assert!(
        claude_md.contains("Derive the connection pool size"),
        "{claude_md}"
    );
    // The turn was in the notes when the hook answered; what is made from them followed in a
    // process of its own.
    let log = repo.log();
    let (hook, rest) = log
        .lines()
        .find_map(|l| {
            let (_, line) = l.split_once(" hook Stop: 1 transcripts: ")?;
            line.split_once("; the rest left to process ")
        })
        .unwrap_or_else(|| panic!("{log}"));
    assert!(!hook.contains("continuation"), "{hook}");
    let pid = rest.trim();
    assert!(pid.parse::<u32>().is_ok(), "{rest}");
    let finished = format!(
        "hook Stop: finish {TTL_SESSION}: the rest of the turn; continuation saved; CLAUDE.md \
         created; the next session's brief made"
    );
    assert!(log.contains(&finished), "{log}");
    // The next session's first hook reads it.
    let mut start = payload(repo, "SessionStart-startup", &[]);
    start["session_id"] = "5e55105-next".into();
    assert!(injected(repo, "SessionStart", &start).is_some());
    assert!(last_start(repo).contains(": gave the brief as kept, about"));
    // A second Stop finds nothing new and changes nothing.
    injected(repo, "Stop", &stop);
    assert_eq!(
        fs::read_to_string(repo.root.join("CLAUDE.md")).unwrap(),
        claude_md
    );
    let log = repo.log();
    assert!(
        log.contains("1 transcripts: 0 new events, 0 updated"),
        "{log}"
    );
    assert!(log.contains("; CLAUDE.md unchanged"), "{log}");
    let last = log.lines().rfind(|l| l.contains(" hook Stop: ")).unwrap();
    assert!(
        !last.contains("the rest left"),
        "nothing left for a process: {last}"
    );
    // The rest's process, started by hand without a session, does nothing.
    let out = repo.run_with_input(&repo.root, &["hook", "Stop", "finish"], b"", &[]);
    assert!(out.status.success() && out.stdout.is_empty(), "{out:?}");
    assert!(
        repo.log()
            .contains("hook Stop: finish: no session given: nothing to do"),
        "{}",
        repo.log()
    );
    // SessionEnd does the same work; with refresh off (the default) CLAUDE.md is not touched.
    fs::remove_file(repo.root.join(".git/agent-context/config.toml")).unwrap();
    fs::remove_file(repo.root.join("CLAUDE.md")).unwrap();
    let mut end = payload(repo, "SessionEnd", &[]);
    end["session_id"] = TTL_SESSION.into();
    end["transcript_path"] = transcript.to_str().unwrap().into();
    assert_eq!(injected(repo, "SessionEnd", &end), None);
    assert!(!repo.root.join("CLAUDE.md").exists());
}

#[test]
fn a_transcript_that_is_a_named_pipe_holds_no_hook_up() {
    let repo = TestRepo::new();
    repo.ok(&["init"]);
    // The session's transcript, where the payload says and where Claude Code keeps it, is a
    // named pipe no one writes to: opening it would block.
    let pipe = repo.project_dir().join(format!("{SESSION}.jsonl"));
    fs::create_dir_all(pipe.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&pipe).status();
    assert!(made.unwrap().success(), "mkfifo {}", pipe.display());
    for (fixture, event) in [
        ("SessionStart-startup", "SessionStart"),
        ("UserPromptSubmit", "UserPromptSubmit"),
        ("PreCompact", "PreCompact"),
        ("Stop", "Stop"),
        ("SessionEnd", "SessionEnd"),
    ] {
        let input = repo.hook_payload(fixture, SESSION, &pipe, &[]);
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.args(["hook", event]);
        let (out, _) = run_within(
            cmd,
            input.to_string().as_bytes(),
            false,
            std::time::Duration::from_secs(10),
        );
        hook_answer(event, &out);
        assert_eq!(stderr(&out), "", "{event}");
    }
    assert!(repo.pending().is_empty());
}

#[test]
fn every_hook_answers_within_its_budget_whatever_its_input_does() {
    let repo = TestRepo::new();
    repo.ok(&["init"]);
    let limit = std::time::Duration::from_secs(10);
    let budgets = [
        ("GIT_AGENT_CONTEXT_HOOK_BUDGET_MS", "200"),
        ("GIT_AGENT_CONTEXT_HOOK_EXTRACT_BUDGET_MS", "300"),
    ];
    // Stdin kept open, with nothing on it or half a payload: the budget the environment sets
    // holds before the configuration is read.
    // Every agent's events.
    let events = Agent::ALL.into_iter().flat_map(|agent| {
        let events = adapter::of(agent).events().iter();
        events.map(move |&(event, moment)| (agent, event, moment))
    });
    for (agent, event, moment) in events {
        let budget = match moment.extracts() {
            true => "300 ms (hook.extract_budget_ms)",
            false => "200 ms (hook.budget_ms)",
        };
        for input in [&b""[..], br#"{"session_id": "9b1f"#] {
            let mut cmd = repo.cmd_in(&repo.root);
            cmd.args(["hook", "--agent", agent.name(), event])
                .envs(budgets);
            let (out, _) = run_within(cmd, input, true, limit);
            assert_eq!(hook_answer(event, &out), None);
            assert_eq!(
                stderr(&out),
                format!(
                    "git-agent-context: hook {event}: over its budget of {budget}: answered with \
                     nothing\n"
                )
            );
        }
    }
    // An input that never ends is cut at its bound, well before a budget far away.
    for event in ["UserPromptSubmit", "Stop"] {
        let mut cmd = repo.cmd_in(&repo.root);
        cmd.args(["hook", event])
            .envs([
                ("GIT_AGENT_CONTEXT_HOOK_BUDGET_MS", "60000"),
                ("GIT_AGENT_CONTEXT_HOOK_EXTRACT_BUDGET_MS", "60000"),
            ])
            .stdin(fs::File::open("/dev/zero").unwrap())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = cmd.spawn().unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > limit {
                child.kill().unwrap();
                panic!("hook {event} still reading /dev/zero after {limit:?}");
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let out = child.wait_with_output().unwrap();
        assert_eq!(hook_answer(event, &out), None);
        assert_eq!(
            stderr(&out),
            format!("git-agent-context: hook {event}: bad input: more than 32 MiB\n")
        );
    }
}

/// The last `SessionStart` line of the log.
fn last_start(repo: &TestRepo) -> String {
    repo.last_logged(" hook SessionStart: ")
}

#[test]
fn the_brief_is_kept_while_what_it_is_made_from_stays() {
    let s = scenario::build();
    let repo = &s.repo;
    let start = payload(repo, "SessionStart-startup", &[]);
    let made = injected(repo, "SessionStart", &start).expect("a brief");
    assert!(last_start(repo).contains(": gave the brief, about"));
    // Asked again with nothing changed, it is read as it was kept.
    assert_eq!(injected(repo, "SessionStart", &start).as_ref(), Some(&made));
    assert!(last_start(repo).contains(": gave the brief as kept, about"));
    // What it is made from changes: the default branch (the work at hand is then the commits
    // the remote's does not have: none) ...
    repo.git(&["update-ref", "refs/remotes/origin/HEAD", "HEAD"]);
    assert_eq!(brief_of(repo), "");
    assert!(last_start(repo).contains(": no brief: nothing recorded"));
    repo.git(&["update-ref", "-d", "refs/remotes/origin/HEAD"]);
    assert_eq!(brief_of(repo), made);
    // ... HEAD's branch through another name (a branch that is a symbolic ref), moved ...
    repo.git(&["symbolic-ref", "refs/heads/trunk", "refs/heads/main"]);
    repo.git(&["checkout", "-q", "trunk"]);
    brief_of(repo);
    assert_eq!(brief_of(repo), made);
    assert!(last_start(repo).contains(": gave the brief as kept, about"));
    repo.commit("notes.txt", "a commit no session made\n", "by hand");
    brief_of(repo);
    assert!(last_start(repo).contains(": gave the brief, about"));
    repo.git(&["checkout", "-q", "main"]);
    // ... a decision recorded (a note), HEAD ...
    repo.ok(&["record", "decision", "Keep the brief in the store"]);
    assert!(brief_of(repo).contains("Keep the brief in the store"));
    repo.git(&["checkout", "-q", &s.commits["c5"]]);
    assert!(!brief_of(repo).contains("Keep the brief in the store"));
    repo.git(&["checkout", "-q", "main"]);
    // ... a queue put there by other means, and taken away.
    let before = brief_of(repo);
    let queue = repo
        .root
        .join(".git/agent-context/pending/0ther5e55-10n.jsonl");
    fs::write(&queue, "not an event\n").unwrap();
    assert_eq!(brief_of(repo), before);
    assert!(last_start(repo).contains(": gave the brief, about"));
    fs::remove_file(&queue).unwrap();
    assert_eq!(brief_of(repo), before);
    assert!(last_start(repo).contains(": gave the brief, about"));
    // A repository's own template is read each time, never kept.
    let templates = repo.root.join(".agent-context/templates");
    fs::create_dir_all(&templates).unwrap();
    fs::write(
        templates.join("brief.md.j2"),
        "Our own brief: {{ sessions | length }} sessions",
    )
    .unwrap();
    for _ in 0..2 {
        assert!(brief_of(repo).starts_with("Our own brief: "));
        assert!(last_start(repo).contains(": gave the brief, about"));
    }
    fs::remove_dir_all(repo.root.join(".agent-context")).unwrap();
    assert_eq!(brief_of(repo), before);
}

#[test]
fn the_brief_tells_the_work_at_hand_not_the_teams_merged_work() {
    let repo = TestRepo::new();
    let made_by = |path: &str, session: &str, request: &str| made_by(&repo, path, session, request);
    let brief = || brief_of(&repo);
    made_by("a.rs", "merged-1", "Add the retry queue");
    // Alone, with no remote: every session of the branch's history is work at hand.
    assert!(brief().contains("Add the retry queue"), "{}", brief());
    // A branch of it: its own commits, against the local default branch.
    repo.git(&["checkout", "-q", "-b", "spike"]);
    made_by("s.rs", "spike-1", "Try a ring buffer");
    let told = brief();
    assert!(told.contains("Try a ring buffer"), "{told}");
    assert!(!told.contains("retry"), "{told}");
    repo.git(&["checkout", "-q", "main"]);
    // Pushed to the team's remote (not named origin, no HEAD of its own: upstream/main), it
    // is done work; so is what a person recorded on it, though it would be told on a commit
    // not pushed.
    let remote = repo.home.parent().unwrap().join("remote.git");
    repo.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "upstream", remote.to_str().unwrap()]);
    repo.git(&["push", "-q", "-u", "upstream", "main"]);
    repo.ok(&["record", "rejection", "A global lock: every worker waits"]);
    assert_eq!(brief(), "");
    // What is not pushed yet is at hand, and what a person recorded on it, as no session.
    made_by("b.rs", "local-1", "Rename the queue");
    repo.ok(&["record", "rejection", "A queue per worker: they starve"]);
    let told = brief();
    assert!(told.contains("Rename the queue"), "{told}");
    assert!(
        told.contains("- rejected: \"A queue per worker: they starve\""),
        "{told}"
    );
    assert!(
        !told.contains("retry") && !told.contains("global lock"),
        "{told}"
    );
    assert!(!told.contains("- session recorded"), "{told}");
    // On a branch: its own commits, not the default branch's.
    repo.git(&["checkout", "-q", "-b", "feature", "upstream/main"]);
    made_by("c.rs", "feature-1", "Let the queue drain on shutdown");
    let told = brief();
    assert!(told.contains("Let the queue drain on shutdown"), "{told}");
    assert!(
        !told.contains("retry") && !told.contains("Rename"),
        "{told}"
    );
    // An orphan branch (its history apart from the default branch's) is all its own.
    repo.git(&["checkout", "-q", "--orphan", "pages"]);
    made_by("index.html", "pages-1", "Publish the docs");
    let told = brief();
    assert!(told.contains("Publish the docs"), "{told}");
    assert!(!told.contains("drain") && !told.contains("retry"), "{told}");
}

#[test]
fn a_checkout_far_behind_the_default_branch_is_told_its_latest_sessions() {
    let repo = TestRepo::new();
    made_by(&repo, "a.rs", "old-1", "Parse the config once");
    let old = repo.git(&["rev-parse", "HEAD"]);
    // 1,100 commits on top, pushed.
    commits_on_top(&repo, 1_100);
    let remote = repo.home.parent().unwrap().join("remote.git");
    repo.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git(&["push", "-q", "-u", "origin", "main"]);
    // A few commits behind: nothing of its own.
    repo.git(&["checkout", "-q", "--detach", "main~3"]);
    assert_eq!(brief_of(&repo), "");
    // Too far behind to tell what is its own at a hook's cost: its latest sessions, as a
    // repository with no remote is told.
    repo.git(&["checkout", "-q", "--detach", &old]);
    let told = brief_of(&repo);
    assert!(told.contains("Parse the config once"), "{told}");
}

/// A commit of `path` made by `session`, which asked `request` (its note written by git, the
/// graph rebuilt).
fn made_by(repo: &TestRepo, path: &str, session: &str, request: &str) {
    let commit = repo.commit(path, &format!("{session}\n"), request);
    let at = "2026-03-01T09:00:00Z";
    let e = scenario::event(
        (session, "session", "session"),
        request,
        at,
        "",
        &[path],
        &[],
    );
    scenario::add_note(repo, &commit, &e.to_string());
    repo.ok(&["rebuild"]);
}

/// `n` empty commits on top of HEAD on `main`, by `git fast-import`.
fn commits_on_top(repo: &TestRepo, n: u32) {
    let head = repo.git(&["rev-parse", "HEAD"]);
    let mut stream = String::new();
    for i in 0..n {
        let message = format!("commit {i}\n");
        stream += &format!(
            "commit refs/heads/main\ncommitter C <c@example.com> {} +0000\ndata {}\n{message}",
            1_893_456_000 + i,
            message.len()
        );
        if i == 0 {
            stream += &format!("from {head}\n");
        }
        stream += "\n";
    }
    repo.git_with_input(&["fast-import", "--quiet"], stream.as_bytes());
}

/// What a session starting in `repo` is told, or nothing.
fn brief_of(repo: &TestRepo) -> String {
    let start = payload(repo, "SessionStart-startup", &[]);
    injected(repo, "SessionStart", &start).unwrap_or_default()
}

#[test]
fn the_brief_finds_sessions_hundreds_of_commits_back_and_on_merged_branches() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "first");
    repo.ok(&[
        "record",
        "decision",
        "Keep the cache in memory",
        "--because",
        "it is small",
    ]);
    // A branch whose commit carries a note, merged without fast-forward: not on HEAD's first
    // parents.
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.commit("b.txt", "b\n", "on the side");
    repo.ok(&["record", "rejection", "A disk cache: too slow to start"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.commit("c.txt", "c\n", "on main");
    repo.git(&["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    // 400 commits on top.
    commits_on_top(&repo, 400);
    let start = payload(&repo, "SessionStart-startup", &[]);
    let brief = injected(&repo, "SessionStart", &start).expect("a brief");
    assert!(brief.contains("Keep the cache in memory"), "{brief}");
    assert!(brief.contains("A disk cache: too slow to start"), "{brief}");
}
