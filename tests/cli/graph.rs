//! The decision graph on `refs/agent-context`: readable with plain git, kept up to date as
//! events reach commits, the same when rebuilt from the notes, and safe under concurrent
//! writers.

use std::fs;

use git_agent_context::store::graph;
use git_agent_context::store::graph::node::{DecisionNode, SessionNode};

use crate::link::{bash_result, edit_turn, say, store};
use crate::repo::TestRepo;

/// The transcript of a session at 10+`hour`:00 that edits cache.py with `answer` as its
/// reasoning, then commits it as `commit` (made beforehand by the test).
pub fn session(
    repo: &TestRepo,
    id: &str,
    hour: u32,
    ask: &str,
    answer: &str,
    commit: &str,
) -> std::path::PathBuf {
    let turn = edit_turn(repo, 1, ask, 0, answer, "cache.py");
    let at = |s: u32| format!("2026-01-01T10:00:{s:02}Z");
    let commit_call = [
        say(
            "m9",
            &at(20),
            serde_json::json!([{"type": "tool_use", "id": "b9", "name": "Bash",
            "input": {"command": "git commit -am 'cache'"}}]),
        ),
        bash_result(
            "b9",
            &format!("[main {}] cache\n 1 file changed", &commit[..7]),
            &at(21),
        ),
    ]
    .concat();
    let text = (turn + &commit_call)
        .replace("s-link", id)
        .replace("2026-01-01T10:", &format!("2026-01-01T{:02}:", 10 + hour));
    let path = repo.home.join(format!("{id}.jsonl"));
    fs::write(&path, text).unwrap();
    path
}

/// On a base commit, two commits of cache.py, each made by a session: s1 chose a TTL cache,
/// s2 an LRU cache instead; each commit with its session's transcript.
fn two_cache_sessions(repo: &TestRepo) -> [(String, std::path::PathBuf); 2] {
    repo.commit("README.md", "hello\n", "base");
    let c1 = repo.commit("cache.py", "ttl\n", "ttl cache");
    let c2 = repo.commit("cache.py", "lru\n", "lru cache");
    let s1 = session(
        repo,
        "s1",
        0,
        "Add a cache",
        "I'll go with a TTL cache with fixed expiry because entries go stale.",
        &c1,
    );
    let s2 = session(
        repo,
        "s2",
        1,
        "Bound the cache",
        "I'll go with an LRU cache with a size bound instead of fixed expiry because memory is capped.",
        &c2,
    );
    [(c1, s1), (c2, s2)]
}

fn show<T: serde::de::DeserializeOwned>(repo: &TestRepo, path: &str) -> T {
    let text = repo.git(&["show", &format!("refs/agent-context:{path}")]);
    toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}\n{text}"))
}

#[test]
fn decisions_on_the_same_subject_supersede_or_conflict_and_a_rebuild_changes_nothing() {
    let repo = TestRepo::new();
    let [(c1, s1), (c2, s2)] = two_cache_sessions(&repo);
    repo.git(&["checkout", "-q", "-b", "side", "HEAD~2"]);
    let c3 = repo.commit("cache.py", "sliding\n", "sliding ttl");
    repo.git(&["checkout", "-q", "main"]);
    let s3 = session(
        &repo,
        "s3",
        2,
        "Cache on the side branch",
        "I'll go with a TTL cache with sliding expiry because reads refresh entries.",
        &c3,
    );
    // The oldest session is linked last: the newer ones' edges to it are drawn then.
    for path in [&s2, &s3, &s1] {
        repo.extract(path);
    }

    // Plain git tells the story and shows every node.
    let log = repo.git(&["log", "--format=%s", "refs/agent-context"]);
    assert_eq!(log.lines().count(), 3, "{log}");
    assert!(
        log.lines().all(|l| l.starts_with("agent-context: session")),
        "{log}"
    );
    assert!(
        log.starts_with("agent-context: sessions s1, s2, s3:"),
        "linking s1 made s2 and s3 again: {log}"
    );
    let first: SessionNode = show(&repo, "sessions/s1.toml");
    assert_eq!(first.request, "Add a cache");
    assert_eq!(first.commits, std::slice::from_ref(&c1));
    assert_eq!(first.files, ["cache.py"]);
    assert_eq!(first.decisions.len(), 1);
    let second: SessionNode = show(&repo, "sessions/s2.toml");
    assert_eq!(
        second.built_on,
        ["s1"],
        "s2's commit descends from s1's, on the same file"
    );
    let third: SessionNode = show(&repo, "sessions/s3.toml");
    assert!(third.built_on.is_empty());

    let d1: DecisionNode = show(&repo, &format!("decisions/{}.toml", first.decisions[0]));
    assert_eq!(d1.subject, "Add a cache");
    assert!(d1.choice.starts_with("I'll go with a TTL cache"), "{d1:?}");
    let d2: DecisionNode = show(&repo, &format!("decisions/{}.toml", second.decisions[0]));
    assert_eq!(d2.supersedes, std::slice::from_ref(&d1.id));
    assert_eq!(d2.rejected, ["fixed expiry"]);
    let d3: DecisionNode = show(&repo, &format!("decisions/{}.toml", third.decisions[0]));
    assert_eq!(
        d3.conflicts_with,
        std::slice::from_ref(&d1.id),
        "a parallel branch, same subject"
    );
    assert!(d3.supersedes.is_empty());

    let files = repo.git(&["show", "refs/agent-context:index/files.tsv"]);
    assert!(
        files.contains(&format!("cache.py\tdecision\t{}", d2.id)),
        "{files}"
    );
    assert!(files.contains("cache.py\tsession\ts3"), "{files}");
    // The reverse view of the edges, in buckets: both edges point at d1, so one bucket holds
    // them, though s1 came last and d2 and d3 were made again with it.
    let buckets = repo.git(&["ls-tree", "--name-only", "refs/agent-context:index/edges"]);
    assert_eq!(buckets.lines().count(), 1, "{buckets}");
    let edges = repo.git(&[
        "show",
        &format!("refs/agent-context:index/edges/{}", buckets.trim()),
    ]);
    assert_eq!(
        edges,
        format!(
            "{d1}\tconflicts_with\t{}\t{}\t{c3}\n{d1}\tsupersedes\t{}\t{}\t{c2}\n",
            d3.timestamp,
            d3.id,
            d2.timestamp,
            d2.id,
            d1 = d1.id
        )
        .trim_end(),
    );

    // What the updates made, a rebuild from the notes makes again.
    let tree = repo.git(&["rev-parse", "refs/agent-context^{tree}"]);
    let out = repo.ok(&["rebuild"]);
    assert!(
        out.contains("is up to date: 3 sessions, 3 decisions"),
        "{out}"
    );
    repo.git(&["update-ref", "-d", "refs/agent-context"]);
    let out = repo.ok(&["rebuild"]);
    assert!(
        out.starts_with("rebuilt refs/agent-context from the notes: 3 sessions, 3 decisions"),
        "{out}"
    );
    assert_eq!(repo.git(&["rev-parse", "refs/agent-context^{tree}"]), tree);
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn switch_sets_the_backend_for_this_clone_and_brings_the_graph_up_to_date() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "base");
    let c1 = repo.commit("cache.py", "ttl\n", "ttl cache");
    let path = session(
        &repo,
        "s1",
        0,
        "Add a cache",
        "I'll go with a TTL cache because entries go stale.",
        &c1,
    );
    repo.extract(&path);
    repo.git(&["update-ref", "-d", "refs/agent-context"]);

    let out = repo.ok(&["switch", "decision"]);
    assert!(
        out.starts_with("query backend: decision (was file)\n"),
        "{out}"
    );
    assert!(out.contains("rebuilt refs/agent-context"), "{out}");
    let status = repo.json(&["status"]);
    let backend = status["config"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == "query.backend")
        .unwrap();
    assert_eq!(backend["value"], "decision");
    assert!(
        backend["source"]
            .as_str()
            .unwrap()
            .ends_with(".git/agent-context/config.toml")
    );
    assert_eq!(status["graph"]["sessions"], 1);

    let out = repo.run(&["switch", "graph"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn concurrent_graph_writers_keep_every_session() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "base");
    let commit = repo.commit("cache.py", "ttl\n", "ttl cache");
    // Eight sessions' events on one commit, then eight writers updating the graph at once.
    let sessions: Vec<String> = (0..8).map(|i| format!("w{i}")).collect();
    let store = store(&repo);
    let id = git_agent_context::store::notes::ObjectId::from_hex(commit.as_bytes()).unwrap();
    for s in &sessions {
        let e = git_agent_context::event::Event {
            prompt_context: format!("task of {s}"),
            files_affected: vec!["cache.py".to_owned()],
            ..git_agent_context::event::Event::new(
                s,
                "m1",
                git_agent_context::event::Kind::Decision,
                git_agent_context::event::Origin::Text,
                &format!("I'll go with plan {s}"),
                "2026-01-01T10:00:00Z",
            )
        };
        git_agent_context::store::notes::attach(&store, &commit, &[e]).unwrap();
    }
    let threads: Vec<_> = sessions
        .iter()
        .map(|s| {
            let root = repo.root.clone();
            let s = s.clone();
            std::thread::spawn(move || {
                let store = git_agent_context::store::Store::discover(&root).unwrap();
                let touched =
                    std::collections::BTreeMap::from([(s, std::collections::BTreeSet::from([id]))]);
                graph::update(&store, &touched).unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for s in &sessions {
        let node: SessionNode = show(&repo, &format!("sessions/{s}.toml"));
        assert_eq!(node.decisions.len(), 1, "{s}");
    }
    let commits = repo.git(&["show", "refs/agent-context:index/commits.tsv"]);
    assert_eq!(commits.lines().count(), 8, "{commits}");
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn rebuild_replaces_a_graph_ref_that_names_no_commit() {
    let repo = TestRepo::new();
    let (transcript, _) = crate::link::six_commit_session(&repo);
    repo.extract(&transcript);
    let tree = repo.git(&["rev-parse", "refs/agent-context^{tree}"]);
    let blob = repo.git(&["hash-object", "-w", "f.txt"]);
    repo.git(&["update-ref", "refs/agent-context", &blob]);

    // Every reader says what is wrong and how to mend it, in one line.
    for args in [
        &["claude-md", "--print"][..],
        &["query", "checkpoint output format"][..],
        &["status"][..],
    ] {
        let out = repo.run(args);
        let err = crate::repo::stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.starts_with("error: git: read refs/agent-context: ")
                && err.contains("run 'git agent-context rebuild'"),
            "{args:?}: {err}"
        );
    }

    let out = repo.ok(&["rebuild"]);
    assert!(out.starts_with("rebuilt refs/agent-context"), "{out}");
    // The same graph as before, on a commit of its own: the blob is no parent.
    assert_eq!(repo.git(&["rev-parse", "refs/agent-context^{tree}"]), tree);
    assert_eq!(
        repo.git(&["rev-list", "--count", "refs/agent-context"]),
        "1"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
    repo.ok(&["claude-md", "--print"]);
}

#[test]
fn a_graph_ref_that_cannot_be_made_says_why_at_once() {
    let repo = TestRepo::new();
    let (transcript, _) = crate::link::six_commit_session(&repo);
    repo.extract(&transcript);
    // A ref below the graph's name: git cannot make refs/agent-context beside it.
    repo.git(&["update-ref", "-d", "refs/agent-context"]);
    repo.git(&["update-ref", "refs/agent-context/foo", "HEAD"]);
    let out = repo.run(&["rebuild"]);
    let err = crate::repo::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: git: update refs/agent-context: ") && !err.contains("race"),
        "the cause, not a lost race: {err}"
    );
}

/// A run that changed notes and died before the graph followed leaves the sessions owed in
/// `graph-owed`; the next run that settles the graph makes their nodes, and nothing else does
/// (the control: the same run without the file leaves the graph behind).
#[test]
fn a_graph_left_behind_its_notes_is_brought_up_by_the_next_run_that_owes_it() {
    let repo = TestRepo::new();
    let [(_, s1), (c2, s2)] = two_cache_sessions(&repo);
    repo.extract(&s1);
    let before = repo.git(&["rev-parse", "refs/agent-context"]);
    repo.extract(&s2);
    let whole = repo.git(&["rev-parse", "refs/agent-context^{tree}"]);
    let tree_of = |r: &str| repo.git(&["rev-parse", &format!("{r}^{{tree}}")]);
    assert_ne!(tree_of(&before), whole);

    // The notes hold s2, the graph is as before it.
    repo.git(&["update-ref", "refs/agent-context", before.trim()]);
    repo.extract(&s2);
    assert_eq!(
        tree_of("refs/agent-context"),
        tree_of(&before),
        "nothing owed, nothing new: the graph stays"
    );
    let owed = repo.root.join(".git/agent-context/graph-owed");
    fs::write(&owed, format!("s2\t{c2}\n")).unwrap();
    repo.extract(&s2);
    assert_eq!(tree_of("refs/agent-context"), whole);
    assert_eq!(fs::read_to_string(&owed).unwrap(), "", "settled");
    let status: serde_json::Value = serde_json::from_str(&repo.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["graph_owed_sessions"], 0, "{status:#}");
    let out = repo.ok(&["rebuild"]);
    assert!(out.contains("is up to date"), "{out}");
}

/// A graph that cannot be written keeps what is owed and holds up nothing else of a turn's
/// end: what the `Stop` hook leaves to a process of its own still saves the session's
/// continuation, and its log says why the graph did not follow.
#[test]
fn a_graph_that_cannot_be_written_holds_up_nothing_else_of_a_turns_end() {
    let repo = TestRepo::new();
    let (transcript, commits) = crate::link::six_commit_session(&repo);
    let session = "0cf3db51-1c73-43bb-8d05-dc02739514a5";
    repo.extract(&transcript);
    repo.git(&["update-ref", "-d", "refs/agent-context"]);
    repo.git(&["update-ref", "refs/agent-context/foo", "HEAD"]);
    let owed = repo.root.join(".git/agent-context/graph-owed");
    let debt = format!("{session}\t{}\n", commits[0]);
    fs::write(&owed, &debt).unwrap();

    let payload = repo.hook_payload("Stop", session, &transcript, &[]);
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "Stop"],
        payload.to_string().as_bytes(),
        &[],
    );
    assert!(out.status.success(), "{}", crate::repo::stderr(&out));
    let continuation = format!(".git/agent-context/continuation/{session}.json");
    assert!(repo.root.join(continuation).is_file());
    let log = repo.log();
    assert!(
        log.lines()
            .any(|l| l.contains("hook Stop") && l.contains("update refs/agent-context")),
        "{log}"
    );
    assert_eq!(fs::read_to_string(&owed).unwrap(), debt, "still owed");
    // And says so.
    let status: serde_json::Value = serde_json::from_str(&repo.ok(&["status", "--json"])).unwrap();
    assert_eq!(status["graph_owed_sessions"], 1, "{status:#}");
    let text = repo.ok(&["status"]);
    assert!(
        text.contains("graph: behind the notes for 1 sessions"),
        "{text}"
    );
}
