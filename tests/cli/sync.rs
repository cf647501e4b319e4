//! `sync`: clones of a bare repository share their notes through it. Every clone ends with the
//! union of all events, none lost or doubled, whatever order the syncs run in, however many at
//! once, and wherever one is killed; git (`fsck --strict`, `notes list`, `cat-file`) is the
//! oracle for what is written.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::git_hooks::{commit_as, transcript_in};
use crate::link::cache_then_readme;
use crate::repo::{TestRepo, stderr};

/// A bare repository with one commit on `main`, standing for the team's remote.
fn remote() -> TestRepo {
    let origin = TestRepo::new();
    origin.commit("README", "hello\n", "first");
    origin.clone_with(&["--bare"])
}

/// A decision recorded by hand on HEAD, after a commit of its own.
fn decide(clone: &TestRepo, text: &str) {
    let file: String = text.chars().filter(char::is_ascii_alphanumeric).collect();
    clone.commit(&format!("{file}.txt"), text, text);
    clone.ok(&["record", "decision", text]);
}

/// Each note of `repo`'s notes ref as git stores it: its commit and its text.
fn notes_of(repo: &TestRepo) -> Vec<(String, String)> {
    let list = repo.git(&["notes", "--ref=agent-context", "list"]);
    list.lines()
        .map(|line| {
            let (blob, commit) = line.split_once(' ').unwrap();
            (commit.to_owned(), repo.git(&["cat-file", "blob", blob]))
        })
        .collect()
}

/// Every event of `repo`'s notes, with its commit.
fn notes_events(repo: &TestRepo) -> Vec<(String, Value)> {
    notes_of(repo)
        .into_iter()
        .flat_map(|(commit, note)| {
            note.lines()
                .map(|l| (commit.clone(), serde_json::from_str(l).unwrap()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every event of every note of `repo`'s notes ref: (commit, event id) once each, after
/// checking that no note holds an id twice.
fn events(repo: &TestRepo) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for (commit, event) in notes_events(repo) {
        let id = event["id"].as_str().unwrap().to_owned();
        assert!(
            out.insert((commit.clone(), id.clone())),
            "event {id} twice in the note of {commit}"
        );
    }
    out
}

/// The recorded decisions' summaries in `repo`'s notes.
fn decisions(repo: &TestRepo) -> BTreeSet<String> {
    (notes_events(repo).into_iter())
        .filter(|(_, e)| e["kind"] == "decision")
        .map(|(_, e)| e["summary"].as_str().unwrap().to_owned())
        .collect()
}

fn fsck(repo: &TestRepo) {
    let out = repo.git_output(&repo.root, &["fsck", "--strict", "--no-dangling"], &[]);
    assert!(out.status.success(), "fsck: {out:?}");
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("error"),
        "fsck: {out:?}"
    );
}

/// The graph holds what the notes say: a rebuild from them changes nothing.
fn graph_follows_the_notes(repo: &TestRepo) {
    let rebuilt = repo.json(&["rebuild"]);
    assert_eq!(
        rebuilt["commit"],
        Value::Null,
        "the graph was behind: {rebuilt}"
    );
}

#[test]
fn two_clones_share_their_decisions_through_a_bare_remote() {
    let bare = remote();
    let a = bare.clone_with(&[]);
    let b = bare.clone_with(&[]);
    decide(&a, "Keep a TTL map for the price cache");
    let first = a.json(&["sync"]);
    assert_eq!(first["fetched"], false, "{first}");
    assert_eq!(first["pushed"], true, "{first}");
    assert_eq!(
        b.ok(&["sync"]).trim(),
        "origin: 1 event new here on 1 note; it has all of ours"
    );
    decide(&b, "No LRU for the price cache: prices expire by time");
    assert_eq!(
        b.ok(&["sync"]).trim(),
        "origin: nothing new from it; ours pushed"
    );
    let merged = a.json(&["sync"]);
    assert_eq!(merged["merged_events"], 1, "{merged}");
    assert_eq!(merged["pushed"], false, "{merged}");
    for clone in [&a, &b] {
        assert_eq!(
            decisions(clone),
            BTreeSet::from([
                "Keep a TTL map for the price cache".to_owned(),
                "No LRU for the price cache: prices expire by time".to_owned()
            ])
        );
        // Where they came from is the remote's notes, fetched beside ours.
        clone.git(&[
            "rev-parse",
            "--verify",
            "refs/notes/remotes/origin/agent-context",
        ]);
        fsck(clone);
        graph_follows_the_notes(clone);
    }
    assert_eq!(events(&a), events(&b));
    assert_eq!(events(&a), events(&bare));
    fsck(&bare);
    // Once b's branch is there too, `log` gives its decision beside its commit.
    b.git(&["push", "-q", "origin", "main"]);
    a.git(&["fetch", "-q", "origin"]);
    assert!(
        a.ok(&["log", "origin/main"])
            .contains("No LRU for the price cache")
    );
    // Nothing is left to do either way.
    let again = b.json(&["sync"]);
    assert_eq!(
        (again["merged_events"].clone(), again["pushed"].clone()),
        (0.into(), false.into())
    );
}

#[test]
fn no_push_takes_in_and_gives_nothing() {
    let bare = remote();
    let a = bare.clone_with(&[]);
    let b = bare.clone_with(&[]);
    decide(&a, "Stream the transcript line by line");
    a.ok(&["sync"]);
    decide(&b, "Keep the cursor in the store");
    let out = b.ok(&["sync", "--no-push"]);
    assert_eq!(
        out.trim(),
        "origin: 1 event new here on 1 note; nothing pushed (--no-push)"
    );
    assert_eq!(decisions(&bare).len(), 1);
    assert_eq!(decisions(&b).len(), 2);
}

#[test]
fn a_forgotten_event_does_not_come_back_with_the_remote_notes() {
    let bare = remote();
    let a = bare.clone_with(&[]);
    let b = bare.clone_with(&[]);
    decide(&a, "Name the price cache after its owner, Jane");
    decide(&a, "Keep the cache in memory");
    a.ok(&["sync"]);
    b.ok(&["sync"]);
    let forgotten = a.json(&["forget", "--match", "Jane"]);
    assert_eq!(
        forgotten["events"].as_array().unwrap().len(),
        1,
        "{forgotten}"
    );
    // The forget is a new commit of the notes: the push takes it to the remote.
    a.ok(&["sync"]);
    let kept = BTreeSet::from(["Keep the cache in memory".to_owned()]);
    assert_eq!(decisions(&bare), kept);
    // A clone that had it gives it back to the remote; this clone still leaves it out.
    decide(&b, "Cap the cache at a thousand entries");
    b.ok(&["sync"]);
    assert_eq!(decisions(&bare).len(), 3);
    a.ok(&["sync"]);
    assert_eq!(decisions(&a).len(), 2);
    assert!(!decisions(&a).iter().any(|d| d.contains("Jane")));
    graph_follows_the_notes(&a);
}

#[test]
fn a_remote_that_does_not_exist_or_cannot_be_reached_is_one_error_line() {
    let bare = remote();
    let a = bare.clone_with(&[]);
    decide(&a, "Keep the cache in memory");
    let unknown = a.run(&["sync", "upstream"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert_eq!(
        stderr(&unknown).trim(),
        "error: no remote named \"upstream\" (git remote lists them)"
    );
    let lonely = TestRepo::new();
    lonely.commit("a", "a", "a");
    let none = lonely.run(&["sync"]);
    assert_eq!(none.status.code(), Some(2));
    assert!(
        stderr(&none).starts_with("error: no remote to sync with"),
        "{}",
        stderr(&none)
    );
    a.git(&["remote", "add", "gone", "/nonexistent/repository.git"]);
    let gone = a.run(&["sync", "gone"]);
    assert_eq!(gone.status.code(), Some(1));
    let text = stderr(&gone);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.starts_with("error: git fetch gone: "), "{text}");
    // Nothing was lost or half-written.
    assert_eq!(decisions(&a).len(), 1);
    fsck(&a);
}

#[test]
fn four_clones_syncing_twenty_times_at_once_end_with_every_event_once() {
    const CLONES: usize = 4;
    const ROUNDS: usize = 20;
    let bare = remote();
    let clones: Vec<TestRepo> = (0..CLONES).map(|_| bare.clone_with(&[])).collect();
    let started = Instant::now();
    let clones: Vec<TestRepo> = clones
        .into_iter()
        .enumerate()
        .map(|(i, clone)| {
            std::thread::spawn(move || {
                let mut contended = 0;
                for round in 0..ROUNDS {
                    decide(&clone, &format!("Clone {i} decided {round}"));
                    let out = clone.run(&["sync"]);
                    match out.status.code() {
                        Some(0) => {}
                        // Other clones won every round of this one: the next sync takes it up.
                        Some(1) if stderr(&out).contains("run sync again") => contended += 1,
                        _ => panic!("clone {i} round {round}: {}", stderr(&out)),
                    }
                }
                (clone, contended)
            })
        })
        .map(|t| t.join().unwrap())
        .map(|(clone, contended)| {
            assert!(contended < ROUNDS / 2, "{contended} syncs gave up");
            clone
        })
        .collect();
    eprintln!(
        "{CLONES} clones × {ROUNDS} syncs at once: {:?}",
        started.elapsed()
    );
    // Each clone syncs once more, in turn, twice round: the last pushes reach everyone.
    for _ in 0..2 {
        for clone in &clones {
            clone.ok(&["sync"]);
        }
    }
    let all = events(&bare);
    let expected: BTreeSet<String> = (0..CLONES)
        .flat_map(|i| (0..ROUNDS).map(move |r| format!("Clone {i} decided {r}")))
        .collect();
    assert_eq!(decisions(&bare), expected);
    for clone in &clones {
        assert_eq!(events(clone), all);
        fsck(clone);
        graph_follows_the_notes(clone);
    }
    fsck(&bare);
}

#[test]
fn a_sync_killed_at_any_point_leaves_everything_consistent_and_the_next_completes() {
    const KILLS: usize = 30;
    let bare = remote();
    let a = bare.clone_with(&[]);
    let b = bare.clone_with(&[]);
    decide(&a, "A decided first");
    a.ok(&["sync"]);
    // How long a sync with something to take in and to give takes here.
    decide(&a, "A decided again");
    a.ok(&["sync"]);
    decide(&b, "B decided first");
    let timed = Instant::now();
    b.ok(&["sync"]);
    let mut length = timed.elapsed();
    let mut kills = 0;
    let mut expected: BTreeMap<String, ()> = BTreeMap::new();
    for trial in 0..KILLS * 3 {
        if kills == KILLS {
            break;
        }
        decide(&a, &format!("A decided in trial {trial}"));
        a.ok(&["sync"]);
        decide(&b, &format!("B decided in trial {trial}"));
        expected.insert(format!("A decided in trial {trial}"), ());
        expected.insert(format!("B decided in trial {trial}"), ());
        // Kill points spread over the sync's length, measured again whenever one ends first.
        let at = length.mul_f64((trial * 7 % 31) as f64 / 31.0);
        // Its own process group, so that the git it was running can be waited for: the kill
        // takes the sync, and the git it started finishes on its own (git's updates are each
        // atomic), as when a machine's OOM killer picks the sync.
        let mut child = b
            .cmd_in(&b.root)
            .arg("sync")
            .process_group(0)
            .spawn()
            .unwrap();
        let group = format!("-{}", child.id());
        let begun = Instant::now();
        std::thread::sleep(at);
        match child.try_wait().unwrap() {
            Some(_) => length = length.min(begun.elapsed()),
            None => {
                child.kill().unwrap();
                kills += 1;
            }
        }
        child.wait().unwrap();
        let gone = Instant::now();
        while Command::new("kill")
            .args(["-0", "--", &group])
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success()
        {
            assert!(
                gone.elapsed() < Duration::from_secs(30),
                "git still running"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // Whatever the kill interrupted, git reads every ref and object.
        fsck(&b);
        b.git(&["notes", "--ref=agent-context", "list"]);
        // The next sync completes it: every event on both sides, the graph caught up.
        let out = b.run(&["sync"]);
        assert!(out.status.success(), "trial {trial}: {}", stderr(&out));
        a.ok(&["sync"]);
        let known = decisions(&b);
        for text in expected.keys() {
            assert!(known.contains(text), "trial {trial}: {text} missing in b");
        }
        assert_eq!(events(&a), events(&b), "trial {trial}");
        graph_follows_the_notes(&b);
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(
        kills, KILLS,
        "only {kills} syncs were still running when killed"
    );
    assert!(!b.store_dir().join("sync-merging").exists());
    fsck(&bare);
}

#[test]
fn install_sync_pushes_the_notes_beside_each_branch_and_a_pull_brings_them() {
    let bare = remote();
    let a = bare.clone_with(&[]);
    let b = bare.clone_with(&[]);
    for clone in [&a, &b] {
        let out = clone.ok(&["install", "--sync"]);
        assert!(
            out.contains(
                "added the fetch refspec +refs/notes/agent-context:refs/notes/remotes/origin/agent-context \
                 to the remote origin"
            ),
            "{out}"
        );
        assert!(
            out.contains("installed the git hook .git/hooks/pre-push"),
            "{out}"
        );
        // Installing again changes nothing.
        assert!(
            clone
                .ok(&["install", "--sync"])
                .starts_with("already installed: ")
        );
    }
    decide(&a, "Keep a TTL map for the price cache");
    let pushed = a.git_output(&a.root, &["push", "-q", "origin", "main"], &[]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    assert_eq!(
        stderr(&pushed),
        "",
        "the hook says nothing when all is well"
    );
    assert_eq!(decisions(&bare).len(), 1, "the notes went with the branch");
    // A pull fetches the notes beside ours, and the post-merge hook takes them in.
    b.git(&["pull", "-q"]);
    assert_eq!(decisions(&b).len(), 1);
    assert!(
        b.ok(&["log"])
            .contains("Keep a TTL map for the price cache")
    );
    graph_follows_the_notes(&b);
    assert!(b.log().contains("hook post-merge"), "{}", b.log());
    // Uninstall takes it all out again.
    let out = a.ok(&["uninstall"]);
    assert!(
        out.contains("took the fetch refspec of our notes out of the remote origin"),
        "{out}"
    );
    assert!(!a.root.join(".git/hooks/pre-push").exists());
    assert_eq!(
        a.git(&["config", "--get-all", "remote.origin.fetch"]),
        "+refs/heads/*:refs/remotes/origin/*"
    );
}

#[test]
fn the_pre_push_hook_never_stops_the_push_and_says_why_the_notes_did_not_go() {
    let bare = remote();
    // The remote takes branches but refuses notes.
    let refuse = bare.root.join("hooks/pre-receive");
    std::fs::write(
        &refuse,
        "#!/bin/sh\nwhile read old new ref; do case $ref in refs/notes/*) echo 'no notes here' >&2; exit 1;; esac; done\n",
    )
    .unwrap();
    std::fs::set_permissions(&refuse, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let a = bare.clone_with(&[]);
    a.ok(&["install", "--sync"]);
    decide(&a, "Keep a TTL map for the price cache");
    let pushed = a.git_output(&a.root, &["push", "-q", "origin", "main"], &[]);
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    let said: Vec<String> = stderr(&pushed)
        .lines()
        .filter(|l| l.starts_with("git-agent-context:"))
        .map(str::to_owned)
        .collect();
    assert_eq!(said.len(), 1, "{}", stderr(&pushed));
    assert!(
        said[0].starts_with("git-agent-context: hook pre-push: git push origin: "),
        "{said:?}"
    );
    assert_eq!(
        a.git(&["rev-parse", "main"]),
        bare.git(&["rev-parse", "main"])
    );
    assert!(decisions(&bare).is_empty());

    // A remote that hangs: past its budget the hook ends, and the push goes on.
    let slow = bare.clone_with(&["--bare"]);
    a.git(&["remote", "add", "slow", slow.root.to_str().unwrap()]);
    a.git(&[
        "config",
        "remote.slow.uploadpack",
        "sleep 30; git-upload-pack",
    ]);
    let begun = Instant::now();
    let pushed = a.git_output(
        &a.root,
        &["push", "-q", "slow", "main"],
        &[("GIT_AGENT_CONTEXT_SYNC_PUSH_BUDGET_MS", "1000")],
    );
    assert!(pushed.status.success(), "{}", stderr(&pushed));
    assert!(
        begun.elapsed() < Duration::from_secs(25),
        "{:?}",
        begun.elapsed()
    );
    assert!(
        stderr(&pushed).contains("hook pre-push: over its budget of 1000 ms (sync.push_budget_ms)"),
        "{}",
        stderr(&pushed)
    );
    assert_eq!(
        a.git(&["rev-parse", "main"]),
        slow.git(&["rev-parse", "main"])
    );
}

/// The kinds of the events in `repo`'s notes, and the notes' whole text.
fn kinds(repo: &TestRepo) -> (BTreeSet<String>, String) {
    let kinds = (notes_events(repo).into_iter())
        .map(|(_, e)| e["kind"].as_str().unwrap().to_owned())
        .collect();
    let text = notes_of(repo).into_iter().map(|(_, note)| note).collect();
    (kinds, text)
}

#[test]
fn what_is_pushed_is_what_share_level_shares_and_the_rest_stays_here() {
    let bare = remote();
    let a = bare.clone_with(&[]);
    a.ok(&["init"]);
    a.install_git_hooks();
    transcript_in(&a, &a.root, "s-share", &cache_then_readme(&a));
    commit_as(&a, &a.root, Some("s-share"), "cache.py", "cache");
    let strs = |v: &[&str]| -> BTreeSet<String> { v.iter().map(|s| s.to_string()).collect() };
    let (here, _) = kinds(&a);
    assert!(
        here.is_superset(&strs(&["decision", "exploration", "session", "write"])),
        "{here:?}"
    );
    a.ok(&["sync"]);
    let (shared, text) = kinds(&bare);
    assert_eq!(shared, strs(&["decision", "session", "write"]));
    assert!(
        !text.contains(a.root.to_str().unwrap()),
        "no path of the author's machine: {text}"
    );
    assert!(!text.contains("tool_calls"), "{text}");
    // This clone keeps all of it, whole, even once the shared copies come back to it; and a
    // teammate gets the reasoning on the file.
    let whole = kinds(&a).1;
    assert!(whole.contains("tool_calls"), "{whole}");
    a.ok(&["sync"]);
    assert_eq!(kinds(&a), (here.clone(), whole));
    let b = bare.clone_with(&[]);
    b.ok(&["sync"]);
    a.git(&["push", "-q", "origin", "main"]);
    b.git(&["pull", "-q"]);
    let why = b.ok(&["why", "cache.py"]);
    assert!(why.contains("TTL map"), "{why}");

    for (level, expected) in [("summary", strs(&["session"])), ("none", BTreeSet::new())] {
        let other = remote();
        a.git(&["remote", "add", level, other.root.to_str().unwrap()]);
        let out = a
            .cmd_in(&a.root)
            .args(["sync", level])
            .env("GIT_AGENT_CONTEXT_SHARE_LEVEL", level)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        if level == "none" {
            assert_eq!(
                String::from_utf8_lossy(&out.stdout).trim(),
                "none: it has no notes yet; nothing pushed (share.level = none)"
            );
            let absent = other.git_output(
                &other.root,
                &["rev-parse", "--verify", "-q", "refs/notes/agent-context"],
                &[],
            );
            assert!(!absent.status.success());
        } else {
            assert_eq!(kinds(&other).0, expected);
        }
    }
}

#[test]
fn a_sync_that_writes_many_notes_leaves_them_packed() {
    const NOTES: usize = 300;
    let bare = remote();
    let a = bare.clone_with(&[]);
    // Commits with a note each, made by fast-import (which writes a pack, not loose objects).
    let data = |text: &str| format!("data {}\n{text}\n", text.len());
    let mut stream = String::new();
    for i in 1..=NOTES {
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter T <t@example.com> {} +0000\n{}",
            1_700_000_000 + i,
            data(&format!("change {i}"))
        ));
        if i == 1 {
            stream.push_str("from refs/heads/main^0\n");
        }
        stream.push_str(&format!("M 644 inline f{i}.txt\n{}", data(&i.to_string())));
    }
    stream.push_str(&format!(
        "commit refs/notes/agent-context\ncommitter T <t@example.com> 1700001000 +0000\n{}",
        data("notes")
    ));
    for i in 1..=NOTES {
        let event = format!(
            r#"{{"kind":"decision","summary":"Decision {i}","id":"{i:032x}","schema_version":1,"session_id":"s","timestamp":"2026-01-01T00:00:00Z","origin":"text","source":"m{i}","tool_calls":[{{"name":"Edit","input":"/home/jane/f{i}.txt","outcome":"success"}}],"session":{{}}}}"#
        );
        stream.push_str(&format!("N inline :{i}\n{}", data(&event)));
    }
    a.git_with_input(&["fast-import", "--quiet"], stream.as_bytes());
    let before = a.loose_objects();
    let out = a.ok(&["sync"]);
    assert_eq!(out.trim(), "origin: it has no notes yet; ours pushed");
    // The shared copies of 300 notes and their trees were written, then packed.
    assert!(
        a.loose_objects() <= before,
        "{} loose objects",
        a.loose_objects()
    );
    assert_eq!(decisions(&bare).len(), NOTES);
    fsck(&a);
}
