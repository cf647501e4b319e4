//! `forget`: events taken out of the notes, the graph, the pending queue and the caches, with
//! new commits on the refs whose messages and diffs never hold the forgotten text; checked
//! with plain git.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::graph::session;
use crate::link::{edit_turn, say, text};
use crate::repo::{TestRepo, stderr};

const NOTES: &str = "refs/notes/agent-context";
const GRAPH: &str = "refs/agent-context";
/// A secret the first session's reasoning let slip.
const SECRET: &str = "HUSHPUPPY-7731-codename";

/// Three sessions: `sess-alpha` (commit `c1`, its decision quoting [`SECRET`]) and `sess-bravo`
/// (commit `c2`) on cache.py; `sess-charlie`, uncommitted, pending.
struct Scene {
    repo: TestRepo,
    c1: String,
    c2: String,
    alpha: PathBuf,
}

fn scene() -> Scene {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "base");
    let c1 = repo.commit("cache.py", "ttl\n", "ttl cache");
    let c2 = repo.commit("cache.py", "lru\n", "lru cache");
    let alpha = session(
        &repo,
        "sess-alpha",
        0,
        "Add a cache",
        &format!(
            "I'll go with a TTL cache with fixed expiry because the vendor {SECRET} is rate limited."
        ),
        &c1,
    );
    let bravo = session(
        &repo,
        "sess-bravo",
        1,
        "Bound the cache",
        "I'll go with an LRU cache with a size bound instead of fixed expiry because memory is capped.",
        &c2,
    );
    let charlie = repo.home.join("sess-charlie.jsonl");
    let turn = edit_turn(
        &repo,
        1,
        "Document the cache",
        0,
        "I'll go with a short README section because the cache is small.",
        "README.md",
    )
    .replace("s-link", "sess-charlie")
    .replace("2026-01-01T10:", "2026-01-01T12:");
    fs::write(&charlie, turn).unwrap();
    for path in [&alpha, &bravo, &charlie] {
        repo.extract(path);
    }
    Scene {
        repo,
        c1,
        c2,
        alpha,
    }
}

fn note(repo: &TestRepo, commit: &str) -> String {
    repo.git(&["notes", "--ref=agent-context", "show", commit])
}

fn note_events(repo: &TestRepo, commit: &str) -> Vec<Value> {
    note(repo, commit)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every file under `.git`, with its bytes: the whole state a dry run must leave alone.
fn git_dir_files(repo: &TestRepo) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(&repo.root.join(".git"), &mut out);
    out
}

/// `git grep` for `text` in the tree of `rev`: the matching lines.
fn grep(repo: &TestRepo, text: &str, rev: &str) -> String {
    let out = repo.git_output(&repo.root, &["grep", "-F", text, rev], &[]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "git grep: {}",
        stderr(&out)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn tips(repo: &TestRepo) -> String {
    repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"])
}

/// The one decision event of `commit`'s note (of its session).
fn decision_id(repo: &TestRepo, commit: &str) -> String {
    let events = note_events(repo, commit);
    let decisions: Vec<&Value> = events.iter().filter(|e| e["kind"] == "decision").collect();
    assert_eq!(decisions.len(), 1, "{events:#?}");
    decisions[0]["id"].as_str().unwrap().to_owned()
}

#[test]
fn match_forgets_the_text_everywhere_with_one_new_commit_per_ref() {
    let s = scene();
    let repo = &s.repo;
    let leaked = decision_id(repo, &s.c1);
    assert!(note(repo, &s.c1).contains(SECRET));
    assert!(!grep(repo, SECRET, GRAPH).is_empty(), "the graph quotes it");
    let shown = repo.ok(&["show", &s.c1, "--json"]);
    let found = repo.ok(&["query", "rate limited vendor cache", "--json"]);
    for out in [&shown, &found] {
        assert!(out.contains(SECRET), "{out}");
    }
    // The query kept its copy of what it read of the note.
    let told = repo.root.join(".git/agent-context/told");
    let copies_quoting = || {
        (git_dir_files(repo).into_iter())
            .filter(|(p, text)| {
                p.starts_with(&told) && String::from_utf8_lossy(text).contains(SECRET)
            })
            .count()
    };
    assert!(copies_quoting() > 0);
    let notes_before = repo.git(&["rev-parse", NOTES]);
    let graph_before = repo.git(&["rev-parse", GRAPH]);
    let others_before: Vec<Value> = note_events(repo, &s.c1)
        .into_iter()
        .filter(|e| e["id"] != leaked.as_str())
        .collect();
    assert!(!others_before.is_empty());
    let bravo_before = note(repo, &s.c2);
    // A continuation summary a hook saved for the session quotes it too.
    let continuation = repo
        .root
        .join(".git/agent-context/continuation/sess-alpha.json");
    fs::create_dir_all(continuation.parent().unwrap()).unwrap();
    fs::write(&continuation, format!("{{\"decisions\": [\"{SECRET}\"]}}")).unwrap();

    let out = repo.run(&["forget", "--match", r"HUSH[A-Z]+-\d+-codename"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(copies_quoting(), 0, "the copies of the notes go with it");
    let printed = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(printed.starts_with("forgot 1 event:\n"), "{printed}");
    assert!(printed.contains(&leaked[..12]), "{printed}");
    assert!(printed.contains("sess-alpha"), "{printed}");
    assert!(
        !printed.contains(SECRET),
        "a forget does not print the text: {printed}"
    );
    assert!(
        stderr(&out).contains("Purging pushed data"),
        "{}",
        stderr(&out)
    );

    // The note keeps the session's other events, byte for byte as plain git shows them; the
    // other commit's note is untouched.
    let after = note(repo, &s.c1);
    assert!(
        !after.contains(SECRET) && !after.contains(&leaked),
        "{after}"
    );
    assert_eq!(note_events(repo, &s.c1), others_before);
    assert_eq!(note(repo, &s.c2), bravo_before);

    // One new commit on each ref, on top of the old tip; its message says how many, and its
    // diff holds the text only as removed lines.
    for (git_ref, before) in [(NOTES, &notes_before), (GRAPH, &graph_before)] {
        assert_eq!(repo.git(&["rev-parse", &format!("{git_ref}~1")]), *before);
        let message = repo.git(&["log", "-1", "--format=%B", git_ref]);
        assert!(!message.contains(SECRET), "{message}");
        let diff = repo.git(&["diff", before, git_ref]);
        let mentions: Vec<&str> = diff.lines().filter(|l| l.contains(SECRET)).collect();
        assert!(
            !mentions.is_empty(),
            "{git_ref}: the diff shows the removal"
        );
        assert!(
            mentions.iter().all(|l| l.starts_with('-')),
            "{git_ref}: {mentions:#?}"
        );
        assert_eq!(grep(repo, SECRET, git_ref), "", "{git_ref}");
        let tree = repo.git(&["ls-tree", "-r", git_ref]);
        for line in tree.lines() {
            let blob = line.split_whitespace().nth(2).unwrap();
            assert!(!repo.git(&["cat-file", "-p", blob]).contains(SECRET));
        }
    }
    assert_eq!(
        repo.git(&["log", "-1", "--format=%s", NOTES]),
        format!(
            "agent-context: 0 new, 0 updated, 1 removed on {}",
            &s.c1[..12]
        )
    );
    assert!(
        repo.git(&["log", "-1", "--format=%s", GRAPH])
            .starts_with("agent-context: forgot 1 event, rebuilt from the notes: 2 sessions,"),
    );

    // The graph: the decision's node is gone, nothing names it, the sessions stay.
    assert_eq!(grep(repo, &leaked, GRAPH), "");
    let nodes = repo.git(&["ls-tree", "-r", "--name-only", GRAPH]);
    assert!(!nodes.contains(&leaked), "{nodes}");
    assert!(nodes.contains("sessions/sess-alpha.toml"), "{nodes}");

    // Nothing that reads the store returns it.
    for args in [
        &["why", "cache.py", "--json"][..],
        &["show", &s.c1, "--json"],
        &["query", "rate limited vendor cache", "--json"],
        &["log", "--json"],
    ] {
        let out = repo.run(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            !text.contains(SECRET) && !text.contains(&leaked),
            "{args:?}: {text}"
        );
    }
    let index = repo.root.join(".git/agent-context/index");
    let mut found = Vec::new();
    for file in git_dir_files(repo)
        .into_iter()
        .filter(|(p, _)| p.starts_with(&index))
    {
        if String::from_utf8_lossy(&file.1).contains(&leaked) {
            found.push(file.0);
        }
    }
    assert!(!continuation.exists(), "the saved continuation goes");
    assert!(
        found.is_empty(),
        "the retrieval index still names it: {found:?}"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);

    // Again: nothing left to forget, nothing written.
    let tips_now = tips(repo);
    let out = repo.run(&["forget", "--match", SECRET]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(tips(repo), tips_now);
}

#[test]
fn a_forgotten_event_stays_forgotten_when_its_turn_is_extracted_again() {
    let s = scene();
    let repo = &s.repo;
    let leaked = decision_id(repo, &s.c1);
    repo.ok(&["forget", "--event", &leaked[..8]]);
    assert!(!note(repo, &s.c1).contains(SECRET));

    // The turn was still open: the session goes on, and its open turn is extracted again.
    let more = say(
        "m10",
        "2026-01-01T10:00:30Z",
        serde_json::json!([text("The cache is in place.")]),
    )
    .replace("s-link", "sess-alpha");
    let mut transcript = fs::read_to_string(&s.alpha).unwrap();
    transcript.push_str(&more);
    fs::write(&s.alpha, &transcript).unwrap();
    repo.extract(&s.alpha);
    // And read from its start, as after the transcript was replaced.
    fs::write(&s.alpha, format!("\n{transcript}")).unwrap();
    let report = repo.extract(&s.alpha);
    assert!(
        report["transcripts"][0]["restarted"].is_string(),
        "{report:#}"
    );

    assert!(!note(repo, &s.c1).contains(SECRET));
    assert!(repo.pending().iter().all(|e| e["id"] != leaked.as_str()));
    assert_eq!(grep(repo, SECRET, GRAPH), "");
    assert_eq!(grep(repo, SECRET, NOTES), "");
    // The session's other events are still kept up to date.
    assert!(
        note_events(repo, &s.c1)
            .iter()
            .any(|e| e["kind"] == "session")
    );
}

#[test]
fn forgetting_every_event_of_a_note_removes_the_note_and_the_session_node() {
    let s = scene();
    let repo = &s.repo;
    let bravo_note = note(repo, &s.c2);
    let out = repo.json(&["forget", "--session", "sess-alpha"]);
    assert_eq!(out["dry_run"], false);
    assert_eq!(out["notes"]["notes_deleted"], 1, "{out:#}");
    assert!(
        out["events"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["session"] == "sess-alpha" && e.get("summary").is_none()),
        "{out:#}"
    );

    let shown = repo.git_output(
        &repo.root,
        &["notes", "--ref=agent-context", "show", &s.c1],
        &[],
    );
    assert!(!shown.status.success());
    assert!(
        stderr(&shown).contains("no note found"),
        "{}",
        stderr(&shown)
    );
    assert_eq!(note(repo, &s.c2), bravo_note);
    let nodes = repo.git(&["ls-tree", "-r", "--name-only", GRAPH]);
    assert!(!nodes.contains("sess-alpha"), "{nodes}");
    assert!(nodes.contains("sessions/sess-bravo.toml"), "{nodes}");
    assert_eq!(grep(repo, "sess-alpha", GRAPH), "");
    assert_eq!(
        grep(repo, &s.c1, GRAPH),
        "",
        "no index line names its commit"
    );
    let status = repo.json(&["status"]);
    assert_eq!(status["graph"]["sessions"], 1, "{status:#}");
    assert!(
        !repo
            .root
            .join(".git/agent-context/attached/sess-alpha.jsonl")
            .exists()
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_pending_session_is_forgotten_from_the_queue_without_touching_the_refs() {
    let s = scene();
    let repo = &s.repo;
    let queue = repo
        .root
        .join(".git/agent-context/pending/sess-charlie.jsonl");
    assert!(queue.is_file());
    let refs = tips(repo);
    let queues = repo.json(&["status"])["pending"]["sessions"]
        .as_u64()
        .unwrap();
    let out = repo.ok(&["forget", "--session", "sess-charlie"]);
    assert!(out.contains("pending queue: "), "{out}");
    assert!(!queue.exists(), "the session's queue file goes");
    assert!(
        repo.pending()
            .iter()
            .all(|e| e["session_id"] != "sess-charlie")
    );
    assert_eq!(tips(repo), refs, "no note or node held them: no commit");
    let status = repo.json(&["status"]);
    assert_eq!(status["pending"]["sessions"], queues - 1, "{status:#}");
}

#[test]
fn criteria_of_different_kinds_narrow_and_values_of_one_kind_add_up() {
    let s = scene();
    let repo = &s.repo;
    // Both committed sessions decided "I'll go with …"; only alpha's mentions the key.
    let both = repo.json(&["forget", "--dry-run", "--match", "I'll go with a"]);
    assert_eq!(both["events"].as_array().unwrap().len(), 3, "{both:#}");
    let narrowed = repo.json(&[
        "forget",
        "--dry-run",
        "--match",
        "I'll go with a",
        "--session",
        "sess-bravo",
    ]);
    let events = narrowed["events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{narrowed:#}");
    assert_eq!(events[0]["session"], "sess-bravo");
    let either = repo.json(&[
        "forget",
        "--dry-run",
        "--session",
        "sess-bravo",
        "--session",
        "sess-charlie",
    ]);
    let sessions: Vec<&str> = either["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["session"].as_str().unwrap())
        .collect();
    assert!(sessions.contains(&"sess-bravo") && sessions.contains(&"sess-charlie"));
    assert!(!sessions.contains(&"sess-alpha"));
    // A session and a text it never said: nothing, exit 1.
    let out = repo.run(&["forget", "--session", "sess-bravo", "--match", SECRET]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "error: nothing to forget: no stored event meets --session sess-bravo and --match {SECRET:?}\n"
        )
    );
}

#[test]
fn a_dry_run_lists_what_would_go_and_changes_nothing() {
    let s = scene();
    let repo = &s.repo;
    let leaked = decision_id(repo, &s.c1);
    let files = git_dir_files(repo);
    let refs = tips(repo);
    let out = repo.ok(&["forget", "--dry-run", "--match", SECRET]);
    let mut lines = out.lines();
    assert_eq!(lines.next(), Some("would forget 1 event:"));
    let line = lines.next().unwrap();
    assert!(line.contains(&leaked[..12]), "{line}");
    assert!(line.contains("sess-alpha"), "{line}");
    assert!(line.contains(&s.c1[..7]), "{line}");
    assert!(line.contains(SECRET), "a dry run shows the summary: {line}");
    assert!(out.contains("would take 1 entry off 1 note"), "{out}");

    let json = repo.json(&["forget", "-n", "--session", "sess-alpha"]);
    assert_eq!(json["dry_run"], true);
    assert_eq!(json["notes"]["notes_deleted"], 1);
    assert_eq!(json["notes"]["commit"], Value::Null);

    assert_eq!(tips(repo), refs);
    let after = git_dir_files(repo);
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        files.keys().collect::<Vec<_>>()
    );
    assert!(after == files, "a file changed");
}

#[test]
fn bad_input_and_nothing_found_fail_in_one_line_and_change_nothing() {
    let s = scene();
    let repo = &s.repo;
    // Two sessions that share a prefix.
    let other = session(
        repo,
        "sess-alpine",
        3,
        "Tune it",
        "I'll go with a smaller cache because it is enough.",
        &s.c2,
    );
    repo.extract(&other);
    let refs = tips(repo);
    let files = git_dir_files(repo);
    let cases: [(&[&str], i32, &str); 9] = [
        (
            &["forget", "--match", "key ("],
            2,
            "error: --match \"key (\": not a valid regular expression: unclosed group\n",
        ),
        (
            &["forget", "--match", ""],
            2,
            "error: --match needs a regular expression (an empty one matches every event)\n",
        ),
        (
            &["forget", "--event", "not-hex"],
            2,
            "error: --event \"not-hex\": not an event id (event ids are hex digits)\n",
        ),
        (
            &["forget", "--event", "abc"],
            2,
            "error: --event abc: too short; give at least 4 hex digits\n",
        ),
        (
            &["forget", "--session", "sess-alp"],
            2,
            "error: --session sess-alp is ambiguous: 2 sessions start with it\n",
        ),
        (
            &["forget", "--session", " "],
            2,
            "error: --session needs a session id\n",
        ),
        (
            &["forget", "--event", "0123456789abcdef"],
            1,
            "error: no stored event has id 0123456789abcdef\n",
        ),
        (
            &["forget", "--session", "sess-zulu", "--dry-run"],
            1,
            "error: no stored event is of session sess-zulu\n",
        ),
        (
            &["forget", "--match", "nowhere to be found"],
            1,
            "error: nothing to forget: no stored event meets --match \"nowhere to be found\"\n",
        ),
    ];
    for (args, code, message) in cases {
        let out = repo.run(args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), message, "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    // No criterion: clap's usage error.
    let out = repo.run(&["forget"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--session <id>|--event <id>|--match <regex>|--again"),
        "{}",
        stderr(&out)
    );
    // Outside a repository.
    let out = repo
        .cmd_in(&repo.outside())
        .args(["forget", "--session", "x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("error: not a git repository"));
    // A good id beside a bad one: nothing is forgotten.
    let good = decision_id(repo, &s.c1);
    let out = repo.run(&["forget", "--event", &good, "--event", "fedcba98"]);
    assert_eq!(out.status.code(), Some(1));

    assert_eq!(tips(repo), refs);
    assert!(
        git_dir_files(repo) == files,
        "a failed forget changed a file"
    );
}

#[test]
fn a_forget_that_died_is_completed_by_the_next() {
    let s = scene();
    let repo = &s.repo;
    let leaked = decision_id(repo, &s.c1);
    // What a forget leaves when it dies after remembering the ids: the events still stored,
    // the marker there.
    let store = repo.root.join(".git/agent-context");
    fs::write(store.join("forgotten"), format!("{leaked}\tsess-alpha\n")).unwrap();
    fs::write(store.join("forgetting"), "").unwrap();
    let dry = repo.run(&["forget", "--dry-run", "--session", "sess-charlie", "--json"]);
    assert!(
        stderr(&dry).contains("a forget was interrupted"),
        "{}",
        stderr(&dry)
    );
    let charlie = serde_json::from_slice::<Value>(&dry.stdout).unwrap()["events"]
        .as_array()
        .unwrap()
        .len();
    assert!(charlie > 0);

    let out = repo.ok(&["forget", "--session", "sess-charlie"]);
    assert!(
        out.starts_with("completed an interrupted forget: 1 event taken out\n"),
        "{out}"
    );
    assert!(!note(repo, &s.c1).contains(SECRET));
    assert_eq!(grep(repo, SECRET, GRAPH), "");
    assert!(!store.join("forgetting").exists());
    let forgotten = fs::read_to_string(store.join("forgotten")).unwrap();
    assert_eq!(forgotten.lines().count(), 1 + charlie, "{forgotten}");
    assert!(forgotten.lines().all(|l| !l.contains(SECRET)));
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn claude_md_made_from_the_graph_is_made_again() {
    let s = scene();
    let repo = &s.repo;
    repo.ok(&["claude-md"]);
    let path = repo.root.join("CLAUDE.md");
    assert!(fs::read_to_string(&path).unwrap().contains(SECRET));
    let out = repo.ok(&["forget", "--match", SECRET]);
    assert!(out.contains("CLAUDE.md: its section made again"), "{out}");
    assert!(!fs::read_to_string(&path).unwrap().contains(SECRET));
}

/// Run Claude Code hook `event` of `session` in `repo`, `fields` added to its payload; it must
/// succeed, as every hook does.
fn hook(repo: &TestRepo, event: &str, session: &str, fields: Value) {
    let mut payload = serde_json::json!({"session_id": session, "cwd": repo.root,
        "hook_event_name": event,
        "transcript_path": repo.home.join(format!("{session}.jsonl"))});
    for (key, value) in fields.as_object().unwrap() {
        payload[key] = value.clone();
    }
    let out = repo.run_with_input(
        &repo.root,
        &["hook", event],
        payload.to_string().as_bytes(),
        &[],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_search_captured_again_after_a_forget_stays_forgotten() {
    let s = scene();
    let repo = &s.repo;
    let search = serde_json::json!({"tool_name": "Grep",
        "tool_input": {"pattern": "HUSHPUPPY_codename", "path": "."}});
    let searches = |repo: &TestRepo| -> Vec<Value> {
        repo.pending()
            .into_iter()
            .filter(|e| {
                e["summary"]
                    .as_str()
                    .unwrap()
                    .contains("HUSHPUPPY_codename")
            })
            .collect()
    };
    hook(repo, "PostToolUse", "sess-charlie", search.clone());
    assert_eq!(searches(repo).len(), 1, "{:#?}", repo.pending());
    let queue = repo
        .root
        .join(".git/agent-context/pending/sess-charlie.jsonl");
    let captured: String = fs::read_to_string(&queue)
        .unwrap()
        .lines()
        .filter(|l| l.contains("HUSHPUPPY_codename"))
        .map(|l| format!("{l}\n"))
        .collect();
    repo.ok(&["forget", "--match", "HUSHPUPPY_codename"]);
    assert!(searches(repo).is_empty());

    // The session searches for it again: the search has the same id, which stays forgotten.
    hook(repo, "PostToolUse", "sess-charlie", search);
    assert_eq!(searches(repo), Vec::<Value>::new());
    // A capture that checked before the forget remembered the id appends after it emptied the
    // queue (the hook does not take the store's lock).
    fs::OpenOptions::new()
        .append(true)
        .open(&queue)
        .unwrap()
        .write_all(captured.as_bytes())
        .unwrap();
    // The session commits what it did: its events go to the commit, the search does not.
    let commit = repo.commit("README.md", "hello, cache\n", "document the cache");
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "post-commit"],
        b"",
        &[("CLAUDE_CODE_SESSION_ID", "sess-charlie")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(note(repo, &commit).contains("sess-charlie"), "linked");
    assert_eq!(grep(repo, "HUSHPUPPY_codename", NOTES), "");
    assert_eq!(grep(repo, "HUSHPUPPY_codename", GRAPH), "");
    assert_eq!(searches(repo), Vec::<Value>::new(), "it left the queue");
}

#[test]
fn an_unreadable_queue_line_that_matches_goes_too() {
    let s = scene();
    let repo = &s.repo;
    let queue = repo
        .root
        .join(".git/agent-context/pending/sess-charlie.jsonl");
    // Hooks killed mid-append left half lines, each glued to the next append: one quotes the
    // secret, one a token nothing else holds, one neither.
    let halves = [
        format!("{{\"kind\":\"search\",\"summary\":\"Searched for {SECRET} (Gr"),
        "{\"kind\":\"search\",\"summary\":\"Searched for ZULU-TOKEN-99".to_owned(),
        "{\"kind\":\"read\",\"summary\":\"Read READ".to_owned(),
    ];
    let mut file = fs::OpenOptions::new().append(true).open(&queue).unwrap();
    for half in &halves {
        writeln!(file, "{half}").unwrap();
    }
    drop(file);
    let unreadable =
        |repo: &TestRepo| repo.json(&["status"])["pending"]["unreadable_lines"].clone();
    assert_eq!(unreadable(repo), 3);

    let dry = repo.json(&["forget", "--dry-run", "--match", SECRET]);
    assert_eq!(dry["events"].as_array().unwrap().len(), 1, "{dry:#}");
    assert_eq!(dry["pending_unreadable_lines"], 1, "{dry:#}");
    let out = repo.ok(&["forget", "--match", SECRET]);
    assert!(
        out.contains("pending queue: 1 unreadable line that the patterns match taken out"),
        "{out}"
    );
    let text = fs::read_to_string(&queue).unwrap();
    assert!(!text.contains(SECRET), "{text}");
    assert!(
        text.contains(&halves[1]) && text.contains(&halves[2]),
        "{text}"
    );
    assert_eq!(unreadable(repo), 2, "the others are kept");

    // A line the only holder of a text: it goes alone. In another session's queue, it is not
    // that session's.
    let out = repo.run(&["forget", "--session", "sess-bravo", "--match", "ZULU-TOKEN"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = repo.ok(&["forget", "--match", "ZULU-TOKEN"]);
    assert_eq!(
        out,
        "pending queue: 1 unreadable line that the patterns match taken out\n"
    );
    let text = fs::read_to_string(&queue).unwrap();
    assert!(
        !text.contains("ZULU-TOKEN") && text.contains(&halves[2]),
        "{text}"
    );
}

/// Every file of the store (`.git/agent-context`) that holds `text`.
fn store_files_holding(repo: &TestRepo, text: &str) -> Vec<PathBuf> {
    let store = repo.root.join(".git/agent-context");
    git_dir_files(repo)
        .into_iter()
        .filter(|(path, bytes)| {
            path.starts_with(&store) && String::from_utf8_lossy(bytes).contains(text)
        })
        .map(|(path, _)| path)
        .collect()
}

#[test]
fn match_takes_the_text_out_of_the_saved_extraction_state_and_the_log() {
    const CODENAME: &str = "ZEBRACODENAME-42";
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "base");
    // A turn still going: its prompt (and so every event of the turn) names the codename.
    let transcript = repo.home.join("s-link.jsonl");
    let ask = format!("Rename the flag to {CODENAME} in cache.py");
    let answer = "I'll go with a constant because the flag is read in one place.";
    fs::write(
        &transcript,
        edit_turn(&repo, 1, &ask, 0, answer, "cache.py"),
    )
    .unwrap();
    repo.extract(&transcript);
    hook(
        &repo,
        "PostToolUse",
        "s-link",
        serde_json::json!({"tool_name": "Grep", "tool_input": {"pattern": CODENAME}}),
    );
    assert!(
        repo.log()
            .contains(&format!("captured: Searched for {CODENAME}"))
    );
    // A session starting is told of the turn, its prompt too, in the brief kept for the next.
    hook(
        &repo,
        "SessionStart",
        "s-next",
        serde_json::json!({"source": "startup"}),
    );
    let holding = store_files_holding(&repo, CODENAME);
    for kept in ["/cursors/", "/brief.json"] {
        assert!(
            holding.iter().any(|p| p.to_string_lossy().contains(kept)),
            "{kept} holds the prompt: {holding:?}"
        );
    }

    let files = git_dir_files(&repo);
    let dry = repo.json(&["forget", "--dry-run", "--match", "ZEBRACODENAME"]);
    assert_eq!(dry["replaced"]["extraction_states"], 1, "{dry:#}");
    assert_eq!(dry["replaced"]["log_lines"], 1, "{dry:#}");
    assert!(git_dir_files(&repo) == files, "a dry run changes nothing");
    // Two patterns that cannot be joined into one (the same group name), one of which matches
    // hex: the cursor beside the state (a hash of the transcript's head) stays as it is.
    let out = repo.ok(&[
        "forget",
        "--match",
        "(?P<name>ZEBRACODENAME)",
        "--match",
        "(?P<name>[0-9a-f]{16}XYZ)|(?P<hash>\\b[0-9a-f]{16}\\b)",
    ]);
    assert!(
        out.contains("extraction state: the text replaced in the saved state of 1 transcript\n"),
        "{out}"
    );
    assert!(out.contains("log: the text replaced in 1 line\n"), "{out}");
    assert_eq!(
        store_files_holding(&repo, "ZEBRACODENAME"),
        Vec::<PathBuf>::new()
    );
    assert!(
        repo.log()
            .contains("captured: Searched for [REDACTED:forgotten]-42 (Grep)"),
        "{}",
        repo.log()
    );

    // The turn goes on: its next message, extracted from where the state left off.
    let more = say(
        "m2",
        "2026-01-01T10:00:30Z",
        serde_json::json!([text(
            "I'll go with one test for the rename because it is a small change."
        )]),
    );
    fs::OpenOptions::new()
        .append(true)
        .open(&transcript)
        .unwrap()
        .write_all(more.as_bytes())
        .unwrap();
    let report = repo.extract(&transcript);
    assert!(
        report["transcripts"][0].get("restarted").is_none(),
        "{report:#}"
    );
    let new: Vec<Value> = repo
        .pending()
        .into_iter()
        .filter(|e| e["summary"].as_str().unwrap().contains("one test"))
        .collect();
    assert_eq!(new.len(), 1, "{:#?}", repo.pending());
    assert_eq!(
        new[0]["prompt_context"],
        "Rename the flag to [REDACTED:forgotten]-42 in cache.py"
    );
    assert_eq!(
        store_files_holding(&repo, "ZEBRACODENAME"),
        Vec::<PathBuf>::new()
    );
    // Nothing is left to forget or to replace.
    let out = repo.run(&["forget", "--match", "ZEBRACODENAME"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// [`scene`], with what a forget of [`SECRET`] also has to reach: CLAUDE.md made from the
/// graph, a search for it captured (in the queue and the log), and a half line in a queue.
fn scene_to_forget() -> Scene {
    let s = scene();
    let repo = &s.repo;
    repo.ok(&["claude-md"]);
    hook(
        repo,
        "PostToolUse",
        "sess-charlie",
        serde_json::json!({"tool_name": "Grep", "tool_input": {"pattern": SECRET}}),
    );
    let queue = repo
        .root
        .join(".git/agent-context/pending/sess-charlie.jsonl");
    let mut file = fs::OpenOptions::new().append(true).open(queue).unwrap();
    writeln!(file, "{{\"kind\":\"read\",\"summary\":\"{SECRET} in hal").unwrap();
    s
}

/// What a forget leaves that must come out the same however often it is killed and run again:
/// what `crash::stored` compares (each note, the graph's tree, the queue, the attached and
/// retrieval indexes), every other store file byte for byte — but the lock, the log (times)
/// and the files that name a commit of the refs (whose times differ) — and CLAUDE.md.
fn left_by_forget(s: &Scene) -> Vec<(String, String)> {
    let repo = &s.repo;
    let mut out = crate::crash::stored(repo, &[s.c1.clone(), s.c2.clone()]);
    let store = repo.root.join(".git/agent-context");
    for (path, bytes) in git_dir_files(repo) {
        let Ok(name) = path.strip_prefix(&store) else {
            continue;
        };
        let name = name.to_string_lossy().into_owned();
        let compared = ["pending/", "attached/", "index/"];
        // The count of changes to the queues grows with every run: a forget run again is two.
        let varying = ["lock", "log", "claude-md.graph", "pending.changes"];
        if compared.iter().any(|c| name.starts_with(c)) || varying.contains(&name.as_str()) {
            continue;
        }
        out.push((
            format!("store {name}"),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    let claude_md = fs::read_to_string(repo.root.join("CLAUDE.md")).unwrap();
    out.push(("CLAUDE.md".to_owned(), claude_md));
    out.sort();
    out
}

/// Put `repo`'s folders back as `saved` (a copy of the folder holding them) has them.
fn restore(repo: &TestRepo, saved: &Path) {
    let base = repo.root.parent().unwrap();
    for name in ["repo", "home"] {
        fs::remove_dir_all(base.join(name)).unwrap();
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(saved.join(name))
            .arg(base)
            .status()
            .unwrap();
        assert!(status.success());
    }
}

#[test]
fn a_forget_killed_at_any_point_is_completed_by_running_it_again() {
    let started = std::time::Instant::now();
    let args = ["forget", "--match", "HUSHPUPPY"];
    let s = scene_to_forget();
    let repo = &s.repo;
    let saved = tempfile::tempdir().unwrap();
    for name in ["repo", "home"] {
        let status = std::process::Command::new("cp")
            .arg("-a")
            .arg(repo.root.parent().unwrap().join(name))
            .arg(saved.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
    assert!(!store_files_holding(repo, SECRET).is_empty());
    assert!(
        fs::read_to_string(repo.root.join("CLAUDE.md"))
            .unwrap()
            .contains(SECRET)
    );

    // The reference: the forget run to its end. How long it takes, warm: the shortest of three.
    let mut whole = std::time::Duration::MAX;
    let mut expected = Vec::new();
    for _ in 0..3 {
        restore(repo, saved.path());
        let begun = std::time::Instant::now();
        repo.ok(&args);
        whole = whole.min(begun.elapsed());
        expected = left_by_forget(&s);
    }
    assert!(
        expected
            .iter()
            .any(|(k, v)| k == "CLAUDE.md" && !v.is_empty())
            && expected
                .iter()
                .any(|(k, _)| k.starts_with("store cursors/")),
        "{expected:?}"
    );

    let (mut interrupted, mut completions) = (0, 0);
    let marker = repo.root.join(".git/agent-context/forgetting");
    // Kill points spread over the whole run (golden-ratio steps). How long a run takes depends on
    // the load of the moment: a run that ends before its kill point shortens the estimate, and the
    // trials go on until enough kills have landed.
    let (wanted, most) = (8, 48);
    let mut trial = 0;
    while interrupted < wanted && trial < most {
        let at = whole.mul_f64((trial as f64 * 0.618_034) % 1.0);
        trial += 1;
        restore(repo, saved.path());
        let mut child = repo
            .cmd_in(&repo.root)
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        // Already finished when the kill point is past its end: then this does nothing.
        let _ = child.kill();
        let finished = child.wait().unwrap().success();
        interrupted += usize::from(!finished);
        if finished {
            whole = whole.mul_f64(0.8);
        }
        let when = format!("trial {trial}: killed after {at:?} of {whole:?}");
        repo.git(&["fsck", "--strict", "--no-progress"]);
        crate::races::age_dead_ref_locks(repo);
        let was_marked = marker.exists();
        let done_before = left_by_forget(&s) == expected;

        let out = repo.run(&args);
        let printed = String::from_utf8_lossy(&out.stdout);
        match out.status.code() {
            // Only a forget that had done everything leaves nothing to do.
            Some(1) => {
                assert!(done_before && !was_marked, "{when}: {}", stderr(&out));
                assert!(
                    stderr(&out).starts_with("error: nothing to forget"),
                    "{when}: {}",
                    stderr(&out)
                );
            }
            Some(0) if was_marked => {
                assert!(
                    printed.starts_with("completed an interrupted forget"),
                    "{when}: {printed}"
                );
                completions += 1;
            }
            Some(0) => assert!(!finished, "{when}: {printed}"),
            code => panic!("{when}: exit {code:?}: {}", stderr(&out)),
        }
        repo.git(&["fsck", "--strict", "--no-progress"]);
        assert!(!marker.exists(), "{when}");
        for git_ref in [NOTES, GRAPH, "HEAD"] {
            assert_eq!(grep(repo, SECRET, git_ref), "", "{when}: {git_ref}");
        }
        assert_eq!(
            store_files_holding(repo, "HUSHPUPPY"),
            Vec::<PathBuf>::new(),
            "{when}"
        );
        let got = left_by_forget(&s);
        let keys = |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&got), keys(&expected), "{when}");
        for ((key, a), (_, b)) in got.iter().zip(&expected) {
            assert!(a == b, "{when}: {key} differs:\n{a}\n---\n{b}");
        }
    }
    println!(
        "{interrupted} of {trial} forgets killed before their end, {completions} completed by the next, {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert!(
        interrupted >= wanted,
        "only {interrupted} of {trial} forgets were interrupted"
    );
    assert!(completions > 0, "no kill landed mid-forget");
}

#[test]
fn the_same_forget_run_again_after_it_died_says_what_it_completed() {
    let s = scene();
    let repo = &s.repo;
    repo.ok(&["claude-md"]);
    let claude_md = repo.root.join("CLAUDE.md");
    assert!(fs::read_to_string(&claude_md).unwrap().contains(SECRET));
    let leaked = decision_id(repo, &s.c1);
    // `forget --event <leaked>` died after remembering the id.
    let store = repo.root.join(".git/agent-context");
    fs::write(store.join("forgotten"), format!("{leaked}\tsess-alpha\n")).unwrap();
    fs::write(store.join("forgetting"), "").unwrap();

    let out = repo.run(&["forget", "--event", &leaked]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        format!(
            "completed an interrupted forget: 1 event taken out\n\
             nothing more to forget: no stored event has id {leaked}\n\
             CLAUDE.md: its section made again\n"
        )
    );
    assert!(!fs::read_to_string(&claude_md).unwrap().contains(SECRET));
    assert!(!store.join("forgetting").exists());
    assert_eq!(grep(repo, SECRET, NOTES), "");
    // Done: the next run has nothing to do.
    let out = repo.run(&["forget", "--event", &leaked]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_rerun_whose_session_is_gone_replaces_text_in_no_other_session() {
    let s = scene();
    let repo = &s.repo;
    // Each session's saved state holds its request.
    assert!(!store_files_holding(repo, "Bound the cache").is_empty());
    // A forget died; the command run again names a session no longer stored.
    let store = repo.root.join(".git/agent-context");
    fs::write(store.join("forgetting"), "").unwrap();
    let out = repo.run(&["forget", "--session", "sess-gone", "--match", "cache"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("nothing more to forget: no stored event is of session sess-gone"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        !store_files_holding(repo, "Bound the cache").is_empty(),
        "the other sessions' states are left alone"
    );
}

#[test]
fn again_takes_out_what_a_notes_merge_brought_back() {
    let s = scene();
    let repo = &s.repo;
    let leaked = decision_id(repo, &s.c1);
    // A teammate's clone, with the notes, adds reasoning of its own to the same note.
    let mate = repo.clone_with(&[]);
    mate.git(&[
        "fetch",
        "-q",
        "origin",
        "refs/notes/agent-context:refs/notes/agent-context",
    ]);
    let delta = session(
        &mate,
        "sess-delta",
        2,
        "Tune the cache",
        "I'll go with a smaller cache because it is enough.",
        &s.c1,
    );
    mate.extract(&delta);
    assert!(note(&mate, &s.c1).contains("sess-delta"));
    // Here the secret is forgotten, then the teammate's notes are merged, as git merges them.
    repo.ok(&["forget", "--match", SECRET]);
    let theirs = mate.root.to_str().unwrap();
    repo.git(&[
        "fetch",
        "-q",
        theirs,
        "refs/notes/agent-context:refs/notes/mate",
    ]);
    repo.git(&[
        "notes",
        "--ref=agent-context",
        "merge",
        "-q",
        "-s",
        "cat_sort_uniq",
        "refs/notes/mate",
    ]);
    let merged = note(repo, &s.c1);
    assert!(
        merged.contains(SECRET),
        "the merge brought it back: {merged}"
    );
    assert!(merged.contains("sess-delta"), "{merged}");

    let dry = repo.json(&["forget", "--again", "--dry-run"]);
    let ids: Vec<&str> = dry["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [leaked.as_str()], "{dry:#}");
    let out = repo.ok(&["forget", "--again"]);
    assert!(out.starts_with("forgot 1 event:\n"), "{out}");
    let after = note(repo, &s.c1);
    assert!(!after.contains(SECRET), "{after}");
    assert!(
        after.contains("sess-delta"),
        "the teammate's reasoning stays: {after}"
    );
    assert_eq!(grep(repo, SECRET, NOTES), "");
    assert_eq!(grep(repo, SECRET, GRAPH), "");
    assert!(grep(repo, "sess-delta", GRAPH).contains("sessions/sess-delta.toml"));
    repo.git(&["fsck", "--strict", "--no-progress"]);

    let out = repo.run(&["forget", "--again"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "error: nothing to forget: no event forgotten in this clone is stored again\n"
    );
}
