//! A damaged store and unusual repositories (docs/security.md, "Hooks fail open"): a truncated note, a
//! damaged note object, a broken cursor file, an unreadable configuration, store files of the wrong
//! kind, a repository git cannot open, with no commits, bare, with a detached HEAD, shallow.
//!
//! In each, every hook exits 0 with neutral output — nothing, or one valid JSON answer — and,
//! when it fails, says why in one line on stderr and in `$GIT_DIR/agent-context/log` (where
//! there is a store to log to); every command either works, where the state is legitimately
//! fine, or says what is wrong in one `error:` line and exits 2. Nothing panics.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::link::six_commit_session;
use crate::repo::{self, BIN, TestRepo, hook_answer, run_within, stderr};

/// The session of `fixtures/entireio-cli/e1/…/full.jsonl` (what [`six_commit_session`] uses).
const SESSION: &str = "0cf3db51-1c73-43bb-8d05-dc02739514a5";

/// A repository where the real session e1 was extracted: six commits with notes, the graph,
/// the retrieval index, a cursor and the session registry. Returns it, the transcript and the
/// commits.
fn recorded() -> (TestRepo, PathBuf, Vec<String>) {
    let repo = TestRepo::new();
    let (transcript, commits) = six_commit_session(&repo);
    repo.extract(&transcript);
    assert!(!repo.stored_events().is_empty());
    (repo, transcript, commits)
}

/// What a command did.
struct Ran {
    command: String,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Every command as a user runs it (`hook` aside, which has its own checks), data commands
/// also with `--json`. `forget` only lists what it would forget (`--dry-run`): it reads every
/// note and the queue as a real one does, and leaves the scenario as it is for what follows.
fn commands(transcript: &Path) -> Vec<Vec<String>> {
    let transcript = transcript.to_str().unwrap();
    [
        "init",
        "install",
        "doctor",
        "doctor --json",
        "uninstall",
        "extract",
        "extract --json",
        "import",
        "import --json",
        "status",
        "status --json",
        "why f.txt",
        "why f.txt --json",
        "query checkpoint_output_format",
        "query checkpoint_output_format --json",
        "show",
        "show --json",
        "review HEAD~1",
        "review HEAD~1 --json",
        "log",
        "log --json",
        "rebuild",
        "rebuild --json",
        "repair",
        "repair --json",
        "switch session",
        "switch file --json",
        "claude-md --print",
        "claude-md",
        "forget --session 0cf3db51 --dry-run",
        "forget --session 0cf3db51 --dry-run --json",
        "distill",
        "distill --session 0cf3db51 --json",
        "record decision keep-the-format --files f.txt",
        "record rejection a-second-format --json",
        "mcp",
        "sync team",
        "sync team --json",
        "export --format agent-trace HEAD",
        "export --format json 0cf3db51",
        "export --format md 0cf3db51",
    ]
    .iter()
    .map(|c| c.split(' ').map(str::to_owned).collect())
    .chain([vec![
        "extract".to_owned(),
        "--transcript".to_owned(),
        transcript.to_owned(),
    ]])
    .collect()
}

/// Run every command in `dir`. Each must work, or fail with exit 2 in one `error:` line; none
/// may panic. Returns what each did, for the scenario's own expectations. `sync` has a remote,
/// `team`, an empty bare repository, wherever git can add one.
fn run_commands(repo: &TestRepo, dir: &Path, transcript: &Path) -> Vec<Ran> {
    let team = repo.home.join("team.git");
    if !team.exists() {
        repo.git_in(
            &repo.home,
            &["init", "-q", "--bare", team.to_str().unwrap()],
            &[],
        );
    }
    let _ = repo.git_output(dir, &["remote", "add", "team", team.to_str().unwrap()], &[]);
    commands(transcript)
        .into_iter()
        .map(|args| {
            let out = repo.cmd_in(dir).args(&args).output().unwrap();
            let ran = Ran {
                command: args.join(" "),
                code: out.status.code(),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: stderr(&out),
            };
            assert!(
                !ran.stderr.contains("panicked") && ran.code != Some(101),
                "{}: {}",
                ran.command,
                ran.stderr
            );
            match ran.code {
                Some(0) => {}
                // Its answer: the problems it found, listed on stdout.
                Some(1) if ran.command.starts_with("doctor") => assert!(
                    ran.stderr.lines().count() == 1 && ran.stderr.contains(" found"),
                    "{}: {}",
                    ran.command,
                    ran.stderr
                ),
                Some(2) => assert!(
                    ran.stderr.lines().count() == 1 && ran.stderr.starts_with("error: "),
                    "{}: a failure is one `error:` line: {}",
                    ran.command,
                    ran.stderr
                ),
                other => panic!("{} exited {other:?}: {}", ran.command, ran.stderr),
            }
            ran
        })
        .collect()
}

/// The commands that failed, with their one line (`doctor` finding problems did not).
fn failed(ran: &[Ran]) -> BTreeMap<&str, &str> {
    ran.iter()
        .filter(|r| r.code != Some(0) && !(r.code == Some(1) && r.command.starts_with("doctor")))
        .map(|r| (r.command.as_str(), r.stderr.trim_end()))
        .collect()
}

/// `names`, each checked to be a command of `ran`, in the order [`failed`] lists them.
fn these<'a>(ran: &'a [Ran], names: &[&str]) -> Vec<&'a str> {
    let mut found: Vec<&str> = ran
        .iter()
        .map(|r| r.command.as_str())
        .filter(|c| names.contains(c))
        .collect();
    found.sort();
    assert_eq!(found.len(), names.len(), "{names:?} are all commands run");
    found
}

/// What a hook did: its answer, and its line on stderr when it failed.
struct Hooked {
    name: &'static str,
    context: Option<String>,
    error: Option<String>,
}

/// Run every hook as Claude Code and git run them, in `dir`, for [`SESSION`] with
/// `transcript`, post-rewrite with `rewritten` on its stdin (`<old> <new>` lines); the store's
/// log is in `store`. Each must exit 0 with neutral output, and a failure must be one line on
/// stderr that the log repeats when there is a store.
fn run_hooks(
    repo: &TestRepo,
    dir: &Path,
    transcript: &Path,
    store: &Path,
    rewritten: &[u8],
) -> Vec<Hooked> {
    let claude = [
        (
            "SessionStart",
            "SessionStart",
            "SessionStart-startup",
            vec![],
        ),
        (
            "SessionStart compact",
            "SessionStart",
            "SessionStart-compact",
            vec![],
        ),
        (
            "SessionStart resume",
            "SessionStart",
            "SessionStart-resume",
            vec![],
        ),
        (
            "UserPromptSubmit",
            "UserPromptSubmit",
            "UserPromptSubmit",
            vec![(
                "prompt",
                "Why does f.txt print the checkpoint output format?".into(),
            )],
        ),
        (
            "PreToolUse",
            "PreToolUse",
            "PreToolUse-Write",
            vec![
                ("tool_name", "Read".into()),
                (
                    "tool_input",
                    serde_json::json!({"file_path": dir.join("f.txt")}),
                ),
            ],
        ),
        (
            "PostToolUse",
            "PostToolUse",
            "PostToolUse-Write",
            vec![
                ("tool_name", "Read".into()),
                (
                    "tool_input",
                    serde_json::json!({"file_path": dir.join("f.txt")}),
                ),
            ],
        ),
        ("PreCompact", "PreCompact", "PreCompact", vec![]),
        ("PostCompact", "PostCompact", "PostCompact", vec![]),
        ("Stop", "Stop", "Stop", vec![]),
        ("SessionEnd", "SessionEnd", "SessionEnd", vec![]),
    ];
    let mut runs = Vec::new();
    for (name, event, fixture, changes) in claude {
        let mut payload = repo.hook_payload(fixture, SESSION, transcript, &changes);
        payload["cwd"] = dir.to_str().unwrap().into();
        let before = repo.log().len();
        let out = repo.run_with_input(dir, &["hook", event], payload.to_string().as_bytes(), &[]);
        let context = hook_answer(event, &out);
        let hooked = checked(name, event, context, &out, store);
        runs.push(or_as_logged(repo, hooked, event, before));
    }
    // The git hooks, as the scripts in git-hooks/ run them: post-commit inside the agent's
    // `git commit` (its session named, stdin empty), post-rewrite after an amend.
    let session = [("CLAUDE_CODE_SESSION_ID", SESSION)];
    for (name, args, input, vars) in [
        (
            "post-commit",
            &["hook", "post-commit"][..],
            &b""[..],
            &session[..],
        ),
        (
            "post-rewrite",
            &["hook", "post-rewrite", "amend"][..],
            rewritten,
            &[][..],
        ),
    ] {
        let before = repo.log().len();
        let out = repo.run_with_input(dir, args, input, vars);
        assert!(
            out.status.code() == Some(0) && !stderr(&out).contains("panicked"),
            "hook {name}: {out:?}"
        );
        assert!(out.stdout.is_empty(), "a git hook prints nothing: {out:?}");
        let hooked = checked(name, name, None, &out, store);
        runs.push(or_as_logged(repo, hooked, name, before));
    }
    runs
}

/// `hooked`, or when it did not fail, the failure of what it left to a process of its own (the
/// rest of an agent's commit or of a turn's end), which says why in the log alone (no terminal
/// sees it): the log's lines past `before`.
fn or_as_logged(repo: &TestRepo, mut hooked: Hooked, event: &str, before: usize) -> Hooked {
    if hooked.error.is_none() {
        let failed = format!("hook {event}: failed: ");
        hooked.error = repo.log().get(before..).and_then(|new| {
            let line = new.lines().find(|l| l.contains(&failed))?;
            Some(line.split_once(&failed)?.1.to_owned())
        });
    }
    hooked
}

/// A hook's run, checked: a failure is one line on stderr, which the store's log repeats.
fn checked(
    name: &'static str,
    event: &str,
    context: Option<String>,
    out: &std::process::Output,
    store: &Path,
) -> Hooked {
    let err = stderr(out);
    if err.is_empty() {
        return Hooked {
            name,
            context,
            error: None,
        };
    }
    assert_eq!(err.lines().count(), 1, "hook {name}: one line: {err}");
    let prefix = format!("git-agent-context: hook {event}: ");
    let why = err
        .trim_end()
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("hook {name}: {err}"));
    assert!(context.is_none(), "hook {name} failed yet answered: {err}");
    if store.is_dir() {
        let log = fs::read_to_string(store.join("log")).unwrap_or_default();
        let logged = format!("hook {event}: failed: {why}");
        assert!(
            log.contains(&logged),
            "hook {name}: {logged:?} not in the log:\n{log}"
        );
    }
    Hooked {
        name,
        context,
        error: Some(why.to_owned()),
    }
}

/// The hooks that failed, with their reason.
fn hooks_failed(runs: &[Hooked]) -> BTreeMap<&'static str, &str> {
    runs.iter()
        .filter_map(|h| Some((h.name, h.error.as_deref()?)))
        .collect()
}

/// Put `bytes` in place of the note of `commit`, with git's plumbing: a blob, a new notes
/// tree, a commit on refs/notes/agent-context.
fn replace_note(repo: &TestRepo, commit: &str, bytes: &[u8]) {
    let old = repo.git(&["notes", "--ref=agent-context", "list", commit]);
    let blob = repo.git_with_input(&["hash-object", "-w", "--stdin"], bytes);
    let tree = repo.git(&["ls-tree", "refs/notes/agent-context"]);
    assert!(tree.contains(&old), "a flat notes tree holds {old}: {tree}");
    let tree = repo.git_with_input(&["mktree"], tree.replace(&old, &blob).as_bytes());
    let parent = repo.git(&["rev-parse", "refs/notes/agent-context"]);
    let note_commit = repo.git(&["commit-tree", &tree, "-p", &parent, "-m", "a damaged note"]);
    repo.git(&["update-ref", "refs/notes/agent-context", &note_commit]);
}

#[test]
fn every_command_the_binary_lists_is_tried() {
    let out = std::process::Command::new(BIN)
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    let listed: Vec<&str> = help
        .split_once("Commands:")
        .unwrap()
        .1
        .split_once("Options:")
        .unwrap()
        .0
        .lines()
        // A command's line, not a description wrapped onto the next.
        .filter_map(|l| l.strip_prefix("  ").filter(|l| !l.starts_with(' ')))
        .filter_map(|l| l.split_whitespace().next())
        // `man`, `completions` and `demo` read no repository: nothing here bears on them.
        .filter(|name| !["help", "hook", "man", "completions", "demo"].contains(name))
        .collect();
    assert!(listed.contains(&"status"), "{help}");
    let tried: Vec<String> = commands(Path::new("t.jsonl"))
        .into_iter()
        .map(|c| c[0].clone())
        .collect();
    for name in listed {
        assert!(tried.iter().any(|t| t == name), "{name} is not tried here");
    }
}

#[test]
fn a_truncated_note_is_read_up_to_the_cut() {
    let (repo, transcript, commits) = recorded();
    let head = commits.last().unwrap();
    let note = repo.git(&["notes", "--ref=agent-context", "show", head]);
    assert!(note.lines().count() >= 2, "{note}");
    // Cut in the middle of the last event.
    let cut = note.rfind('\n').unwrap() + note.lines().last().unwrap().len() / 2;
    replace_note(&repo, head, &note.as_bytes()[..cut]);

    let ran = run_commands(&repo, &repo.root, &transcript);
    assert_eq!(failed(&ran), BTreeMap::new());
    // The events before the cut are there; the cut one is skipped.
    let shown = &ran.iter().find(|r| r.command == "show --json").unwrap();
    let shown: Value = serde_json::from_str(&shown.stdout).unwrap();
    assert_eq!(shown["head"], head.as_str());
    let ids = |line: &str| serde_json::from_str::<Value>(line).map(|e| e["id"].clone());
    let (kept, cut_line) = note.rsplit_once('\n').unwrap();
    let kept: Vec<Value> = kept.lines().map(|l| ids(l).unwrap()).collect();
    let cut_id = ids(cut_line).unwrap();
    let reasons: Vec<&Value> = shown["general"]
        .as_array()
        .unwrap()
        .iter()
        .chain(
            shown["files"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|f| f["reasons"].as_array().unwrap()),
        )
        .map(|r| &r["id"])
        .collect();
    assert!(!reasons.is_empty(), "{shown:#}");
    assert!(
        reasons.iter().all(|id| kept.contains(id) && **id != cut_id),
        "{shown:#}"
    );

    let hooks = run_hooks(&repo, &repo.root, &transcript, &repo.store_dir(), b"");
    assert_eq!(hooks_failed(&hooks), BTreeMap::new());
    let log = repo.log();
    assert!(log.contains("hook Stop: 1 transcripts:"), "{log}");
    // The hook that wrote the note again left it readable.
    repo.git(&["fsck", "--strict", "--no-progress"]);
    let note = repo.git(&["notes", "--ref=agent-context", "show", head]);
    for line in note.lines() {
        serde_json::from_str::<Value>(line).expect("every line of the note is JSON again");
    }
    repo.assert_each_event_once();
}

#[test]
fn a_damaged_note_object_fails_commands_in_one_line_and_hooks_open() {
    let (repo, transcript, commits) = recorded();
    let head = commits.last().unwrap();
    damage_note_object(&repo, head);
    // No retrieval index yet: the queries build it, without that note.
    fs::remove_dir_all(repo.store_dir().join("index")).unwrap();

    let ran = run_commands(&repo, &repo.root, &transcript);
    let failing = failed(&ran);
    // Those that read the note say which, once, in one line.
    assert_eq!(
        failing.keys().copied().collect::<Vec<_>>(),
        these(
            &ran,
            &[
                "why f.txt",
                "why f.txt --json",
                "show",
                "show --json",
                "review HEAD~1",
                "review HEAD~1 --json",
                "log",
                "log --json",
                "rebuild",
                "rebuild --json",
                "switch session",
                "switch file --json",
                "forget --session 0cf3db51 --dry-run",
                "forget --session 0cf3db51 --dry-run --json",
                "record decision keep-the-format --files f.txt",
                "sync team",
                "sync team --json",
                "export --format agent-trace HEAD",
                "export --format json 0cf3db51",
                "export --format md 0cf3db51",
                "record rejection a-second-format --json",
            ]
        ),
        "{failing:#?}"
    );
    for (command, line) in &failing {
        assert!(
            line.starts_with(&format!("error: git: read the note of {head}: ")),
            "{command}: {line}"
        );
        assert!(!line.contains("Message {"), "{command}: {line}");
    }
    // The queries answer from the other notes, and say which they could not read.
    for query in these(
        &ran,
        &[
            "query checkpoint_output_format",
            "query checkpoint_output_format --json",
        ],
    ) {
        let ran = ran.iter().find(|r| r.command == query).unwrap();
        assert!(
            ran.stderr
                .starts_with(&format!("warning: the note of {head} (")),
            "{query}: {}",
            ran.stderr
        );
    }
    // post-rewrite after an amend of the commit whose note is damaged: it reads that note.
    let new = repo.git(&[
        "commit-tree",
        "HEAD^{tree}",
        "-p",
        "HEAD~1",
        "-m",
        "amended",
    ]);
    let rewritten = format!("{head} {new}\n");
    let hooks = run_hooks(
        &repo,
        &repo.root,
        &transcript,
        &repo.store_dir(),
        rewritten.as_bytes(),
    );
    let failing = hooks_failed(&hooks);
    assert_eq!(
        failing.keys().copied().collect::<Vec<_>>(),
        [
            "PreCompact",
            "PreToolUse",
            "SessionEnd",
            "SessionStart compact",
            "SessionStart resume",
            "Stop",
            "UserPromptSubmit",
            "post-commit",
            "post-rewrite"
        ],
        "{failing:#?}"
    );
    for why in failing.values() {
        assert!(
            why.starts_with(&format!("git: read the note of {head}")),
            "{why}"
        );
    }
}

/// Cut the object file of `commit`'s note in half, as a full disk or a crash leaves it;
/// returns the path and the bytes it had.
fn damage_note_object(repo: &TestRepo, commit: &str) -> (PathBuf, Vec<u8>) {
    let blob = repo.git(&["notes", "--ref=agent-context", "list", commit]);
    let object = repo
        .root
        .join(".git/objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    let bytes = fs::read(&object).unwrap();
    make_writable(&object);
    fs::write(&object, &bytes[..bytes.len() / 2]).unwrap();
    (object, bytes)
}

#[test]
fn a_note_that_cannot_be_read_is_left_out_of_the_index_until_it_can() {
    let (repo, transcript, commits) = recorded();
    let head = commits.last().unwrap();
    let built = repo::index_files(&repo.store_dir().join("index"));
    let (object, bytes) = damage_note_object(&repo, head);
    // No index yet: the query builds it, without the note it cannot read, and says so.
    fs::remove_dir_all(repo.store_dir().join("index")).unwrap();
    let warning = format!("warning: the note of {head} (");
    for _ in 0..2 {
        let out = repo.run(&["query", "checkpoint_output_format"]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with(&warning)
                && err
                    .trim_end()
                    .ends_with("cannot be read: left out of the retrieval index until it can be"),
            "{err}"
        );
    }
    // A hook that reads the index logs it.
    let ask = repo.hook_payload(
        "UserPromptSubmit",
        SESSION,
        &transcript,
        &[("prompt", "checkpoint_output_format".into())],
    );
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "UserPromptSubmit"],
        ask.to_string().as_bytes(),
        &[],
    );
    hook_answer("UserPromptSubmit", &out);
    let log = repo.log();
    let said = format!("the note of {head} (");
    assert!(
        log.lines()
            .any(|l| l.contains(" hook UserPromptSubmit: ") && l.contains(&said)),
        "{log}"
    );

    // Repaired, the note is indexed by the next refresh: the index is the one built from
    // the whole notes.
    fs::write(&object, &bytes).unwrap();
    let out = repo.run(&["query", "checkpoint_output_format"]);
    assert_eq!(stderr(&out), "");
    assert_eq!(repo::index_files(&repo.store_dir().join("index")), built);
    repo.ok(&["rebuild"]);
    assert_eq!(repo::index_files(&repo.store_dir().join("index")), built);
}

#[test]
fn a_note_indexed_then_changed_to_one_that_cannot_be_read_is_taken_out_and_back_in() {
    let (repo, _, commits) = recorded();
    let head = commits.last().unwrap();
    let index = repo.store_dir().join("index");
    let built = repo::index_files(&index);
    let note = repo.git(&["notes", "--ref=agent-context", "show", head]);
    // The indexed note changes: a decision is added, and the new note's object is damaged.
    let added = r#"{"kind":"decision","summary":"Keep the output format flag as a string","id":"fedcba9876543210fedcba9876543210","schema_version":1,"session_id":"s9","timestamp":"2026-07-01T08:59:00Z","origin":"text","source":"m9"}"#;
    let grown = format!("{}\n{added}\n", note.trim_end());
    replace_note(&repo, head, grown.as_bytes());
    let (object, bytes) = damage_note_object(&repo, head);
    // Its old keyword postings are taken out, as it cannot be read; the lines its commit
    // added stay, and so do the other notes' postings.
    let out = repo.run(&["query", "checkpoint_output_format"]);
    assert!(stderr(&out).contains("cannot be read"), "{}", stderr(&out));
    let terms = |files: &BTreeMap<String, Vec<String>>, of: &str| -> usize {
        (files.iter())
            .filter(|(name, _)| name.starts_with("terms/"))
            .flat_map(|(_, lines)| lines)
            .filter(|l| l.split('\t').nth(1) == Some(of))
            .count()
    };
    let before = repo::index_files(&index);
    assert!(terms(&built, head) > 0);
    assert_eq!(terms(&before, head), 0);
    assert!(commits.iter().any(|c| terms(&before, c) > 0));
    // Mended, the new note is indexed whole: the index is the one a rebuild makes.
    fs::write(&object, &bytes).unwrap();
    let answer = repo.json(&["query", "keep the output format flag as a string"]);
    assert_eq!(answer["items"][0]["id"], "fedcba9876543210fedcba9876543210");
    repo::index_as_a_rebuild_makes_it(&repo, &index);
}

#[test]
fn a_broken_cursor_file_makes_the_transcript_read_again_without_doubling_anything() {
    let (repo, transcript, _) = recorded();
    let cursors = repo.root.join(".git/agent-context/cursors");
    let break_cursors = || {
        for entry in fs::read_dir(&cursors).unwrap() {
            let path = entry.unwrap().path();
            let bytes = fs::read(&path).unwrap();
            fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        }
    };
    let before = repo.stored_events();
    break_cursors();
    let status = repo.ok(&["status"]);
    assert!(status.contains("1 cursor file(s) unreadable"), "{status}");
    let extracted = repo.ok(&["extract", "--transcript", transcript.to_str().unwrap()]);
    assert!(
        extracted.contains("(read again from the start: cursor unreadable)"),
        "{extracted}"
    );
    assert_eq!(repo.stored_events(), before, "nothing new, nothing twice");

    // A hook meets the broken cursor next: it says so in the log.
    break_cursors();
    let hooks = run_hooks(&repo, &repo.root, &transcript, &repo.store_dir(), b"");
    assert_eq!(hooks_failed(&hooks), BTreeMap::new());
    let log = repo.log();
    assert!(
        log.contains(&format!(
            "{} read again from the start: cursor unreadable",
            transcript.display()
        )),
        "{log}"
    );
    let ran = run_commands(&repo, &repo.root, &transcript);
    assert_eq!(failed(&ran), BTreeMap::new());
    repo.assert_each_event_once();
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_damaged_attached_index_is_made_again_from_the_notes() {
    // The hooks, then extract, with the session's attached index damaged before each or not:
    // the index after each (test repositories are reproducible), and the log.
    let run = |damaged: bool| {
        let (repo, transcript, _) = recorded();
        let attached = repo.store_dir().join("attached");
        let files: Vec<PathBuf> = fs::read_dir(&attached)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        let [index] = &files[..] else {
            panic!("one session, one index: {files:?}")
        };
        let damage = || {
            if damaged {
                let good = fs::read(index).unwrap();
                let mut bytes = good[..good.len() / 3].to_vec();
                bytes.extend(b"\xff\xfe not an index line\n");
                fs::write(index, bytes).unwrap();
            }
        };
        damage();
        let hooks = run_hooks(&repo, &repo.root, &transcript, &repo.store_dir(), b"");
        assert_eq!(hooks_failed(&hooks), BTreeMap::new());
        let after_hooks = fs::read_to_string(index).unwrap();
        damage();
        repo.ok(&["extract", "--transcript", transcript.to_str().unwrap()]);
        let after_extract = fs::read_to_string(index).unwrap();
        repo.assert_each_event_once();
        repo.git(&["fsck", "--strict", "--no-progress"]);
        let name = index.file_name().unwrap().to_string_lossy().into_owned();
        (after_hooks, after_extract, repo.log(), name)
    };
    let (hooks, extract, _, _) = run(false);
    let (hooks_damaged, extract_damaged, log, name) = run(true);
    assert!(hooks.lines().count() > 10, "{hooks}");
    assert_eq!(hooks_damaged, hooks);
    assert_eq!(extract_damaged, extract);
    // Said once each time, by the first writer that met it.
    let said = format!(" attached/{name}: unreadable, made again from the notes (");
    assert_eq!(log.matches(&said).count(), 2, "{log}");
}

/// Every command stops with exit 2 naming `file`; every hook answers nothing and says so, in
/// its line and in the log.
fn assert_config_refused(repo: &TestRepo, transcript: &Path, file: &Path, cause: &str) {
    let file = file.display().to_string();
    let ran = run_commands(repo, &repo.root, transcript);
    for r in &ran {
        assert_eq!(r.code, Some(2), "{}: {}", r.command, r.stderr);
        assert!(r.stderr.contains(&file), "{}: {}", r.command, r.stderr);
        assert_eq!(
            r.stderr.matches(cause).count(),
            1,
            "{}: the cause once: {}",
            r.command,
            r.stderr
        );
    }
    let hooks = run_hooks(repo, &repo.root, transcript, &repo.store_dir(), b"");
    for h in &hooks {
        let why = h
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{} did not fail", h.name));
        assert!(
            why.contains(&file) && why.contains(cause),
            "{}: {why}",
            h.name
        );
    }
    assert!(hooks.iter().all(|h| h.context.is_none()));
}

#[test]
fn an_unreadable_configuration_stops_commands_and_hooks_say_why_in_the_log() {
    let (repo, transcript, _) = recorded();
    let shared = repo.root.join(".agent-context.toml");
    fs::write(&shared, "[hook\nbudget_ms = \n").unwrap();
    assert_config_refused(&repo, &transcript, &shared, "not valid TOML");
    // A folder where the file goes: cannot be read, whoever runs the test.
    fs::remove_file(&shared).unwrap();
    fs::create_dir(&shared).unwrap();
    assert_config_refused(&repo, &transcript, &shared, "Is a directory");
    fs::remove_dir(&shared).unwrap();
    // The same for the local file (a mode-000 file would do, but not for root, who reads it).
    let local = repo.root.join(".git/agent-context/config.toml");
    fs::create_dir(&local).unwrap();
    assert_config_refused(&repo, &transcript, &local, "Is a directory");
    fs::remove_dir(&local).unwrap();

    // A named pipe no one writes to, as a hung file system: reading it never ends, so a hook
    // is cut at its (default) budget, says so and logs it, as a command would wait.
    let made = std::process::Command::new("mkfifo").arg(&local).status();
    assert!(made.unwrap().success(), "mkfifo {}", local.display());
    let mut ask = repo.hook_payload("UserPromptSubmit", SESSION, &transcript, &[]);
    ask["prompt"] = "Why does f.txt print the checkpoint output format?".into();
    let mut hook = repo.cmd_in(&repo.root);
    hook.args(["hook", "UserPromptSubmit"]);
    let limit = std::time::Duration::from_secs(10);
    let (out, _) = run_within(hook, ask.to_string().as_bytes(), false, limit);
    assert_eq!(hook_answer("UserPromptSubmit", &out), None);
    let why = "over its budget of 1000 ms (hook.budget_ms): answered with nothing";
    assert_eq!(
        stderr(&out).trim_end(),
        format!("git-agent-context: hook UserPromptSubmit: {why}")
    );
    assert!(
        repo.log()
            .contains(&format!("hook UserPromptSubmit: failed: {why}"))
    );
    fs::remove_file(&local).unwrap();
    repo.ok(&["status"]);
}

#[test]
fn store_files_of_the_wrong_kind_are_named_with_their_cause() {
    let (repo, transcript, _) = recorded();
    // The store's lock is a folder: nothing that writes can take it.
    let lock = repo.root.join(".git/agent-context/lock");
    fs::remove_file(&lock).unwrap();
    fs::create_dir(&lock).unwrap();
    let ran = run_commands(&repo, &repo.root, &transcript);
    let failing = failed(&ran);
    assert_eq!(
        failing.keys().copied().collect::<Vec<_>>(),
        these(
            &ran,
            &[
                "extract",
                "extract --json",
                "import",
                "import --json",
                "rebuild",
                "rebuild --json",
                "switch session",
                "switch file --json",
                "record decision keep-the-format --files f.txt",
                "record rejection a-second-format --json",
                // The first sync has nothing to merge (the remote had no notes), so no lock to
                // take; the second merges what the first pushed.
                "sync team --json",
                &format!("extract --transcript {}", transcript.display()),
            ]
        ),
        "{failing:#?}"
    );
    let expected = format!("error: cannot open {}: Is a directory", lock.display());
    for (command, line) in &failing {
        assert!(line.starts_with(&expected), "{command}: {line}");
    }
    let hooks = run_hooks(&repo, &repo.root, &transcript, &repo.store_dir(), b"");
    let failing = hooks_failed(&hooks);
    assert_eq!(
        failing.keys().copied().collect::<Vec<_>>(),
        [
            "PreCompact",
            "SessionEnd",
            "Stop",
            "post-commit",
            "post-rewrite"
        ],
        "{failing:#?}"
    );
    for why in failing.values() {
        assert!(why.contains("Is a directory"), "the cause is said: {why}");
    }
}

#[test]
fn a_repository_git_cannot_open_is_refused_in_one_line() {
    let (repo, transcript, _) = recorded();
    let config = repo.root.join(".git/config");
    fs::write(&config, fs::read_to_string(&config).unwrap() + "[core\n").unwrap();
    let ran = run_commands(&repo, &repo.root, &transcript);
    for r in &ran {
        assert_eq!(r.code, Some(2), "{}: {}", r.command, r.stderr);
        assert!(
            r.stderr.contains("cannot open the git repository") && r.stderr.contains("line"),
            "{}: {}",
            r.command,
            r.stderr
        );
    }
    // Hooks say it (they said nothing before), in the store's log too.
    let store = repo.root.join(".git/agent-context");
    let hooks = run_hooks(&repo, &repo.root, &transcript, &store, b"");
    for h in &hooks {
        let why = h
            .error
            .as_deref()
            .unwrap_or_else(|| panic!("{} did not fail", h.name));
        assert!(why.starts_with("cannot open the git repository"), "{why}");
    }
    // A session whose folder is gone is in no repository: nothing to say.
    let gone = repo.root.join("removed-worktree");
    let mut payload = repo.hook_payload("UserPromptSubmit", SESSION, &transcript, &[]);
    payload["cwd"] = gone.to_str().unwrap().into();
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "UserPromptSubmit"],
        payload.to_string().as_bytes(),
        &[],
    );
    assert_eq!(hook_answer("UserPromptSubmit", &out), None);
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_repository_without_commits() {
    let repo = TestRepo::new();
    let transcript = repo.install_transcript("entireio-cli/e1/2c3e2b3f2a/0/full.jsonl", SESSION);
    let ran = run_commands(&repo, &repo.root, &transcript);
    let failing = failed(&ran);
    assert_eq!(
        failing.keys().copied().collect::<Vec<_>>(),
        these(
            &ran,
            &[
                "why f.txt",
                "why f.txt --json",
                "show",
                "show --json",
                "review HEAD~1",
                "review HEAD~1 --json",
                "log",
                "log --json",
                "record decision keep-the-format --files f.txt",
                "record rejection a-second-format --json",
                "export --format agent-trace HEAD",
            ]
        ),
        "{failing:#?}"
    );
    for (command, line) in &failing {
        assert_eq!(
            *line, "error: this repository has no commit yet",
            "{command}"
        );
    }
    // What the transcript holds waits for a commit.
    let extracted = repo.stored_events();
    assert!(!extracted.is_empty());
    // The extracting hooks, each on a store of its own (`extract` has read the transcript
    // above): each reads it from the start, and keeps what `extract` kept.
    for event in ["PreCompact", "Stop", "SessionEnd"] {
        fs::remove_dir_all(repo.store_dir()).unwrap();
        let payload = repo.hook_payload(event, SESSION, &transcript, &[]);
        let input = payload.to_string();
        let out = repo.run_with_input(&repo.root, &["hook", event], input.as_bytes(), &[]);
        assert_eq!(hook_answer(event, &out), None);
        assert_eq!(stderr(&out), "", "hook {event}");
        let log = repo.log();
        assert!(
            log.contains(&format!("hook {event}: 1 transcripts: "))
                && !log.contains(": 0 new events"),
            "{log}"
        );
        assert_eq!(repo.stored_events(), extracted, "hook {event}");
    }
    let hooks = run_hooks(&repo, &repo.root, &transcript, &repo.store_dir(), b"");
    // post-commit never runs without a commit; run anyway, it says why.
    let failing = hooks_failed(&hooks);
    assert_eq!(
        failing.keys().copied().collect::<Vec<_>>(),
        ["post-commit"],
        "{failing:#?}"
    );
    assert!(failing["post-commit"].starts_with("git: read HEAD: "));
}

#[test]
fn a_broken_worktree_inside_a_repository_is_no_repository() {
    let (repo, transcript, _) = recorded();
    // A linked worktree whose git directory is gone, as Claude Code's worktrees are left after
    // `git worktree prune`: git stops at its .git, and so do we, whatever is around it.
    let worktree = repo.root.join(".claude/worktrees/x");
    fs::create_dir_all(worktree.join("src")).unwrap();
    let gone = repo.root.join(".git/worktrees/x");
    fs::write(
        worktree.join(".git"),
        format!("gitdir: {}\n", gone.display()),
    )
    .unwrap();
    let dir = worktree.join("src");
    let git = repo.git_output(&dir, &["status"], &[]);
    assert!(stderr(&git).contains("not a git repository"), "{git:?}");
    let (before, log) = (repo.stored_events(), repo.log());

    let ran = run_commands(&repo, &dir, &transcript);
    let expected = format!(
        "error: {} names {}, which is not a git repository",
        worktree.join(".git").display(),
        gone.display()
    );
    for r in &ran {
        assert_eq!(r.code, Some(2), "{}: {}", r.command, r.stderr);
        assert_eq!(r.stderr.trim_end(), expected, "{}", r.command);
    }
    // Hooks there do nothing, as outside a repository: the repository around it is untouched.
    let hooks = run_hooks(&repo, &dir, &transcript, &repo.store_dir(), b"");
    assert_eq!(hooks_failed(&hooks), BTreeMap::new());
    assert!(hooks.iter().all(|h| h.context.is_none()));
    assert_eq!(repo.stored_events(), before);
    assert_eq!(repo.log(), log);
}

#[test]
fn a_bare_repository() {
    let (origin, transcript, commits) = recorded();
    let bare = origin.clone_with(&["--mirror"]);
    let store = bare.store_dir();
    assert_eq!(store, bare.root.join("agent-context"));
    let ran = run_commands(&bare, &bare.root, &transcript);
    let failing = failed(&ran);
    assert_eq!(
        failing,
        BTreeMap::from([
            (
                "claude-md",
                "error: this repository has no working tree, so no CLAUDE.md"
            ),
            (
                "extract",
                "error: this repository has no working tree; name a transcript with --transcript"
            ),
            (
                "extract --json",
                "error: this repository has no working tree; name a transcript with --transcript"
            ),
            (
                "import",
                "error: this repository has no working tree; name a transcript with --transcript"
            ),
            (
                "import --json",
                "error: this repository has no working tree; name a transcript with --transcript"
            ),
            (
                "install",
                "error: this repository has no working tree for a .claude folder; use --scope user"
            ),
            (
                "uninstall",
                "error: this repository has no working tree for a .claude folder; use --scope user"
            ),
            (
                "record decision keep-the-format --files f.txt",
                "error: this repository has no working tree to find f.txt in"
            ),
            (
                "why f.txt",
                "error: this repository has no working tree to find f.txt in"
            ),
            (
                "why f.txt --json",
                "error: this repository has no working tree to find f.txt in"
            ),
        ])
    );
    // The reasoning came with the notes.
    let shown = &ran
        .iter()
        .find(|r| r.command == "show --json")
        .unwrap()
        .stdout;
    assert!(shown.contains(commits.last().unwrap()), "{shown}");
    assert!(
        shown.contains("Let me look at the current help text."),
        "{shown}"
    );
    let hooks = run_hooks(&bare, &bare.root, &transcript, &store, b"");
    assert_eq!(hooks_failed(&hooks), BTreeMap::new());
    assert!(
        fs::read_to_string(store.join("log"))
            .unwrap()
            .contains("hook Stop: ")
    );
}

#[test]
fn a_detached_head_is_a_head_like_any_other() {
    let (repo, transcript, commits) = recorded();
    repo.git(&["checkout", "-q", "--detach", &commits[3]]);
    let ran = run_commands(&repo, &repo.root, &transcript);
    assert_eq!(failed(&ran), BTreeMap::new());
    let output = |command: &str| &ran.iter().find(|r| r.command == command).unwrap().stdout;
    assert!(
        output("log").starts_with(&commits[3][..7]),
        "{}",
        output("log")
    );
    let shown: Value = serde_json::from_str(output("show --json")).unwrap();
    assert_eq!(shown["head"], commits[3].as_str());
    assert!(
        output("why f.txt").contains(&commits[3][..7]),
        "{}",
        output("why f.txt")
    );
    let hooks = run_hooks(&repo, &repo.root, &transcript, &repo.store_dir(), b"");
    assert_eq!(hooks_failed(&hooks), BTreeMap::new());
    assert!(
        repo.log()
            .contains(&format!("hook post-commit: {}", &commits[3][..12]))
    );
    repo.assert_each_event_once();
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_shallow_clone_puts_no_event_on_a_second_commit() {
    let (origin, transcript, commits) = recorded();
    let shallow = origin.clone_with(&["--depth", "2"]);
    shallow.git(&[
        "fetch",
        "-q",
        "--depth",
        "1",
        "origin",
        "refs/notes/agent-context:refs/notes/agent-context",
    ]);
    assert_eq!(shallow.git(&["rev-list", "--count", "HEAD"]), "2");
    let notes_of = |repo: &TestRepo| {
        let mut by_commit: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (at, _, id) in repo.stored_events() {
            if let Some(commit) = at.strip_prefix("note ") {
                by_commit.entry(commit.to_owned()).or_default().push(id);
            }
        }
        by_commit
    };
    let fetched = notes_of(&shallow);
    assert_eq!(fetched, notes_of(&origin));

    // The session's transcript read again here: the commits it names beyond the shallow
    // boundary are not here, and what led to them must not go to the first commit that is.
    let ran = run_commands(&shallow, &shallow.root, &transcript);
    assert_eq!(failed(&ran), BTreeMap::new());
    let hooks = run_hooks(
        &shallow,
        &shallow.root,
        &transcript,
        &shallow.store_dir(),
        b"",
    );
    assert_eq!(hooks_failed(&hooks), BTreeMap::new());
    let now = notes_of(&shallow);
    let oldest = &commits[commits.len() - 2];
    assert_eq!(
        now[oldest], fetched[oldest],
        "the oldest commit here got nothing else"
    );
    shallow.assert_each_event_once();
    shallow.git(&["fsck", "--strict", "--no-progress"]);
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

/// git writes its objects read-only.
fn make_writable(path: &Path) {
    set_mode(path, 0o644);
}
