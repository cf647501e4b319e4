//! Events as git notes: written with gix, checked with git, and the reverse.

use std::process::{Command, Stdio};

use git_agent_context::event::note::encode;
use git_agent_context::event::{Event, Kind, Merged, Origin};
use git_agent_context::store::{Store, notes};

use crate::repo::{TestRepo, stderr};

fn event(session: &str, source: &str, kind: Kind, summary: &str) -> Event {
    Event {
        files_affected: vec!["src/cache.rs".to_owned()],
        ..Event::new(
            session,
            source,
            kind,
            Origin::Text,
            summary,
            "2026-01-01T00:00:00Z",
        )
    }
}

fn store(repo: &TestRepo) -> Store {
    Store::discover(&repo.root).unwrap()
}

#[test]
fn notes_we_write_are_what_git_shows_and_merge_by_event_id() {
    let repo = TestRepo::new();
    let commit = repo.commit("src/cache.rs", "ttl\n", "cache");
    let decision = event(
        "s1",
        "m1",
        Kind::Decision,
        "Use a TTL map because entries expire by time",
    );
    let rejection = event(
        "s1",
        "m1",
        Kind::Rejection,
        "An LRU won't fit: keys are unbounded",
    );
    let attached = notes::attach(
        &store(&repo),
        &commit,
        &[decision.clone(), rejection.clone()],
    )
    .unwrap();
    assert_eq!(
        attached,
        Merged {
            added: 2,
            updated: 0,
            removed: 0
        }
    );

    let shown = repo.git(&["notes", "--ref=agent-context", "show", &commit]);
    assert_eq!(
        format!("{shown}\n").as_bytes(),
        encode(&[decision.clone(), rejection.clone()])
    );
    let log = repo.git(&["log", "--notes=agent-context", "-1", "--format=%N"]);
    assert!(
        log.lines()
            .next()
            .unwrap()
            .starts_with(r#"{"kind":"decision","summary":"Use a TTL map"#),
        "{log}"
    );

    // Again: nothing changes, no new commit on the notes ref.
    let before = repo.git(&["rev-parse", notes::REF]);
    assert_eq!(
        notes::attach(&store(&repo), &commit, std::slice::from_ref(&decision)).unwrap(),
        Merged::default()
    );
    assert_eq!(repo.git(&["rev-parse", notes::REF]), before);

    // A newer version of one event and a new event merge into the note.
    let mut revised = decision.clone();
    revised.rationale = "Entries expire after 5 minutes.".to_owned();
    let tradeoff = event("s2", "m9", Kind::Tradeoff, "Slower but bounded");
    let attached =
        notes::attach(&store(&repo), &commit, &[revised.clone(), tradeoff.clone()]).unwrap();
    assert_eq!(
        attached,
        Merged {
            added: 1,
            updated: 1,
            removed: 0
        }
    );
    let mut read = notes::read(&store(&repo), &commit).unwrap();
    read.sort_by(|a, b| a.id.cmp(&b.id));
    let mut want = vec![revised, rejection, tradeoff];
    want.sort_by(|a, b| a.id.cmp(&b.id));
    assert_eq!(read, want);
    assert_eq!(
        repo.git(&["rev-list", "--count", notes::REF]),
        "2",
        "one notes commit per change"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn notes_git_wrote_in_a_fanned_out_tree_are_read_and_extended() {
    let repo = TestRepo::new();
    // 600 commits and a note on each, written by git fast-import (which fans the notes tree out).
    let n = 600;
    let mut stream = String::new();
    for i in 1..=n {
        stream.push_str(&format!(
            "commit refs/heads/main\nmark :{i}\ncommitter T <t@e> {} +0000\ndata 2\nc\n",
            1_700_000_000 + i
        ));
        if i > 1 {
            stream.push_str(&format!("from :{}\n", i - 1));
        }
        stream.push_str(&format!(
            "M 644 inline f\ndata {}\n{i}\n\n",
            i.to_string().len() + 1
        ));
    }
    stream.push_str(
        "commit refs/notes/agent-context\ncommitter T <t@e> 1800000000 +0000\ndata 5\nnotes\n",
    );
    for i in 1..=n {
        let line = encode(&[event(
            "s-git",
            &format!("m{i}"),
            Kind::Decision,
            &format!("decision {i}"),
        )]);
        stream.push_str(&format!(
            "N inline :{i}\ndata {}\n{}\n",
            line.len(),
            String::from_utf8(line).unwrap()
        ));
    }
    repo.git_with_input(&["fast-import", "--quiet"], stream.as_bytes());
    let top = repo.git(&["ls-tree", "--name-only", notes::REF]);
    assert!(
        top.lines().all(|l| l.len() == 2),
        "git made a fan-out tree: {top}"
    );

    let commits: Vec<String> = repo
        .git(&["rev-list", "main"])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(commits.len(), n);
    let store = store(&repo);
    for (i, commit) in commits.iter().enumerate().step_by(97) {
        let events = notes::read(&store, commit).unwrap();
        assert_eq!(events.len(), 1, "commit {i}");
        assert_eq!(events[0].summary, format!("decision {}", n - i));
    }
    // Extend one of git's notes; git reads the result, and fsck is clean.
    let extra = event("s-us", "m1", Kind::Rejection, "No daemon");
    notes::attach(&store, &commits[0], &[extra]).unwrap();
    let shown = repo.git(&["notes", "--ref=agent-context", "show", &commits[0]]);
    assert_eq!(shown.lines().count(), 2);
    assert!(
        shown.contains(r#""summary":"No daemon""#)
            && shown.contains(&format!(r#""summary":"decision {n}""#))
    );
    assert_eq!(
        repo.git(&["notes", "--ref=agent-context", "list"])
            .lines()
            .count(),
        n
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// Set in the child processes of the test below: `<repo>|<writer>|<commit>,<commit>,…`.
const WRITER: &str = "AGENT_CONTEXT_TEST_WRITER";

#[test]
fn sixteen_processes_writing_to_the_same_notes_at_once_lose_nothing() {
    if let Ok(spec) = std::env::var(WRITER) {
        return write_as_child(&spec);
    }
    let repo = TestRepo::new();
    let commits: Vec<String> = (0..10)
        .map(|i| repo.commit("a.txt", &format!("{i}\n"), &format!("c{i}")))
        .collect();
    // Each writer is this test binary run again, running only this test, as a child.
    let children: Vec<std::process::Child> = (0..16)
        .map(|writer| {
            Command::new(std::env::current_exe().unwrap())
                .args([
                    "--exact",
                    "notes::sixteen_processes_writing_to_the_same_notes_at_once_lose_nothing",
                    "--test-threads=1",
                ])
                .env(
                    WRITER,
                    format!("{}|{writer}|{}", repo.root.display(), commits.join(",")),
                )
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let store = store(&repo);
    let mut ids = std::collections::HashSet::new();
    let mut lines = 0;
    for commit in &commits {
        for e in notes::read(&store, commit).unwrap() {
            assert!(ids.insert(e.id), "one event, one line");
        }
        let note = repo.git(&["notes", "--ref=agent-context", "show", commit]);
        lines += note.lines().count();
    }
    assert_eq!(ids.len(), 16 * 100);
    assert_eq!(lines, 16 * 100, "no duplicate lines");
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// One writer: 100 events, one update of the notes ref each, spread over all the commits.
fn write_as_child(spec: &str) {
    let mut parts = spec.split('|');
    let root = parts.next().unwrap();
    let writer = parts.next().unwrap();
    let commits: Vec<&str> = parts.next().unwrap().split(',').collect();
    let store = Store::discover(std::path::Path::new(root)).unwrap();
    for i in 0..100 {
        let e = event(
            &format!("s{writer}"),
            &format!("m{i}"),
            Kind::Decision,
            &format!("writer {writer}, event {i}"),
        );
        notes::attach(&store, commits[i % commits.len()], &[e]).unwrap();
    }
}

#[test]
fn attaching_to_something_that_is_not_a_commit_of_this_repository_fails_cleanly() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "c");
    let e = event("s", "m", Kind::Decision, "x");
    for bad in ["not-hex", "0123456789012345678901234567890123456789"] {
        assert!(
            notes::attach(&store(&repo), bad, std::slice::from_ref(&e)).is_err(),
            "{bad}"
        );
    }
    let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
    assert!(
        notes::attach(&store(&repo), &tree, &[e]).is_err(),
        "a tree is not a commit"
    );
    let notes_ref = repo.git_output(
        &repo.root,
        &["rev-parse", "--verify", "--quiet", notes::REF],
        &[],
    );
    assert!(
        !notes_ref.status.success(),
        "nothing was written to {}",
        notes::REF
    );
}

#[test]
fn after_init_notes_follow_their_commits_through_amend_and_rebase() {
    let repo = TestRepo::new();
    repo.commit("base.txt", "base\n", "base");
    assert!(
        repo.ok(&["init"])
            .contains("notes follow commits through amend and rebase")
    );
    let config = std::fs::read_to_string(repo.root.join(".git/config")).unwrap();
    assert!(
        !repo.ok(&["init"]).contains("notes.rewrite"),
        "a second init changes nothing"
    );
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".git/config")).unwrap(),
        config
    );
    assert_eq!(repo.git(&["config", "notes.rewriteRef"]), notes::REF);
    assert_eq!(repo.git(&["config", "notes.rewriteMode"]), "cat_sort_uniq");
    // The notes ref exists from the start, so git has nothing to warn about on an amend.
    let amend = repo.git_output(&repo.root, &["commit", "-q", "--amend", "-m", "base"], &[]);
    assert!(amend.status.success());
    assert_eq!(crate::repo::stderr(&amend), "");

    let decision = event("s1", "m1", Kind::Decision, "Use a TTL map");
    let first = repo.commit("src/cache.rs", "ttl\n", "cache");
    notes::attach(&store(&repo), &first, std::slice::from_ref(&decision)).unwrap();

    repo.git(&["commit", "-q", "--amend", "-m", "cache, amended"]);
    let amended = repo.git(&["rev-parse", "HEAD"]);
    assert_ne!(amended, first);
    assert_eq!(
        notes::read(&store(&repo), &amended).unwrap(),
        vec![decision.clone()]
    );

    // Rebase a branch carrying the note onto a main that moved on.
    repo.git(&["checkout", "-q", "-b", "topic"]);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["reset", "-q", "--hard", "HEAD~1"]);
    repo.commit("other.txt", "other\n", "other work");
    repo.git(&["checkout", "-q", "topic"]);
    repo.git(&["rebase", "-q", "main"]);
    let rebased = repo.git(&["rev-parse", "HEAD"]);
    assert_ne!(rebased, amended);
    assert_eq!(
        notes::read(&store(&repo), &rebased).unwrap(),
        vec![decision]
    );
}

#[test]
fn init_keeps_the_users_own_note_settings() {
    let repo = TestRepo::new();
    repo.git(&["config", "notes.rewriteRef", "refs/notes/commits"]);
    repo.git(&["config", "notes.rewrite.amend", "false"]);
    repo.ok(&["init"]);
    let refs = repo.git(&["config", "--get-all", "notes.rewriteRef"]);
    assert_eq!(
        refs.lines().collect::<Vec<_>>(),
        ["refs/notes/commits", notes::REF]
    );
    assert_eq!(repo.git(&["config", "notes.rewrite.amend"]), "false");
    assert_eq!(repo.git(&["config", "notes.rewrite.rebase"]), "true");
}

#[test]
fn init_says_in_one_line_why_it_cannot_edit_git_config() {
    let repo = TestRepo::new();
    let config = repo.root.join(".git/config");
    std::fs::remove_file(&config).unwrap();
    std::fs::create_dir(&config).unwrap();
    let out = repo.run(&["init"]);
    let err = crate::repo::stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(
        err.trim_end(),
        format!(
            "error: git: edit .git/config: The configuration file at \"{}\" could not be read: Is a directory (os error 21)",
            config.display()
        )
    );
}

/// Our commits on the notes ref are by the committer the environment names, else the
/// repository's configuration, at the time `GIT_COMMITTER_DATE` says when it is set, else now
/// (at UTC): as git shows them.
#[test]
fn our_commits_are_by_the_configured_committer_at_the_given_time_or_now() {
    let repo = TestRepo::new();
    repo.commit("a.txt", "a\n", "first");
    let record = |text: &str, vars: &[(&str, &str)]| {
        let args = ["record", "decision", text, "--files", "a.txt"];
        let out = repo.run_with_input(&repo.root, &args, b"", vars);
        assert!(out.status.success(), "{}", stderr(&out));
    };
    let last = || {
        repo.git(&[
            "log",
            "-1",
            "--format=%cn|%ce|%ct|%ci",
            "refs/notes/agent-context",
        ])
    };
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // Whatever the local time zone (a POSIX one, which needs no time zone database): no
    // offset is worked out for our commits.
    record("Keep the file short", &[("TZ", "<+05>-5")]);
    let shown = last();
    let fields: Vec<&str> = shown.split('|').collect();
    assert_eq!(
        fields[..2],
        ["Test Committer", "committer@example.com"],
        "{shown}"
    );
    let at: u64 = fields[2].parse().unwrap();
    assert!(at >= before && at <= before + 60, "now: {shown}");
    assert!(fields[3].ends_with(" +0000"), "at UTC: {shown}");
    let reflog = repo.git(&[
        "reflog",
        "-1",
        "--format=%gn|%ge",
        "refs/notes/agent-context",
    ]);
    assert_eq!(reflog, "Test Committer|committer@example.com");
    // A date that cannot be read is now.
    for unread in ["", "not a date"] {
        let text = format!("Keep the file short when the date is {unread:?}");
        record(&text, &[("GIT_COMMITTER_DATE", unread)]);
        let at: u64 = last().split('|').nth(2).unwrap().parse().unwrap();
        assert!(at >= before && at <= before + 60, "{unread:?}: {}", last());
    }

    let date = [("GIT_COMMITTER_DATE", "2026-03-04T05:06:07+02:00")];
    record("Keep the file plain", &date);
    assert_eq!(
        last(),
        "Test Committer|committer@example.com|1772593567|2026-03-04 05:06:07 +0200"
    );
    // Without the environment's, the repository's configured one.
    repo.git(&["config", "user.name", "Configured Person"]);
    repo.git(&["config", "user.email", "person@example.com"]);
    let out = repo
        .cmd_in(&repo.root)
        .args([
            "record",
            "decision",
            "Keep the file small",
            "--files",
            "a.txt",
        ])
        .env_remove("GIT_COMMITTER_NAME")
        .env_remove("GIT_COMMITTER_EMAIL")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        last().starts_with("Configured Person|person@example.com|"),
        "{}",
        last()
    );
}
