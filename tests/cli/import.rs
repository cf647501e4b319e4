//! `import`: every past transcript of the repository — sessions run at its top, in a
//! subfolder, in a linked worktree — read once, with a line per transcript on stderr when it is
//! not a terminal and a bar when it is; run again, it reads only what is new.

use std::fs;
use std::path::Path;
use std::process::Command;

use crate::link::edit_turn;
use crate::repo::{BIN, TestRepo, stderr};

/// A session `id` run in `cwd`, as Claude Code keeps it: in `cwd`'s project folder, each line
/// with its cwd.
fn session_in(repo: &TestRepo, cwd: &Path, id: &str, n: u32) -> std::path::PathBuf {
    let folder = repo.project_dir_for(cwd);
    fs::create_dir_all(&folder).unwrap();
    let path = folder.join(format!("{id}.jsonl"));
    let turn = edit_turn(repo, n, "Add a cache", n, "I'll use a TTL map.", "cache.py");
    let cwd = serde_json::to_string(cwd.to_str().unwrap()).unwrap();
    let lines = turn.replace(
        "\"sessionId\":\"s-link\"",
        &format!("\"cwd\":{cwd},\"sessionId\":\"{id}\""),
    );
    assert_ne!(lines, turn);
    fs::write(&path, lines).unwrap();
    path
}

#[test]
fn import_reads_the_top_a_subfolder_and_a_linked_worktree_once_and_resumes() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hi\n", "init");
    let sub = repo.root.join("services/api");
    fs::create_dir_all(&sub).unwrap();
    let wt = repo.home.parent().unwrap().join("wt");
    repo.git(&["worktree", "add", "-q", wt.to_str().unwrap()]);
    let top = session_in(&repo, &repo.root, "s-top", 1);
    session_in(&repo, &sub, "s-sub", 2);
    session_in(&repo, &wt, "s-wt", 3);
    // Another project's session is not ours.
    session_in(&repo, &repo.home.join("elsewhere"), "s-other", 4);

    let out = repo.run(&["import"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains(" new events from 3 transcripts"), "{said}");
    assert!(
        said.contains("an import cut short goes on where it stopped"),
        "{said}"
    );
    let progress = stderr(&out);
    let lines: Vec<&str> = progress.lines().collect();
    assert_eq!(lines.len(), 3, "{progress}");
    for (n, line) in lines.iter().enumerate() {
        assert!(
            line.starts_with(&format!("[{}/3] ", n + 1)) && line.ends_with(" ~0 events"),
            "{progress}"
        );
    }
    let sessions: Vec<String> = (repo.pending().iter())
        .map(|e| e["session_id"].as_str().unwrap().to_owned())
        .collect();
    for id in ["s-top", "s-sub", "s-wt"] {
        assert!(sessions.iter().any(|s| s == id), "{id}: {sessions:?}");
    }
    assert!(!sessions.iter().any(|s| s == "s-other"));

    // Again: nothing is read twice; what a session added since is read.
    let out = repo.ok(&["import"]);
    assert!(out.starts_with("0 new events from 3 transcripts"), "{out}");
    let more = edit_turn(&repo, 5, "And a TTL", 5, "I'll keep it short.", "ttl.py")
        .replace("\"sessionId\":\"s-link\"", "\"sessionId\":\"s-top\"");
    let mut text = fs::read_to_string(&top).unwrap();
    text.push_str(&more);
    fs::write(&top, text).unwrap();
    let out = repo.ok(&["import"]);
    assert!(out.contains("new event from 3 transcripts"), "{out}");
    assert!(
        out.contains("s-top.jsonl  +1 ~1  3 lines read"),
        "only the new lines: {out}"
    );
}

#[test]
fn import_on_a_terminal_shows_a_bar_and_clears_it() {
    let repo = TestRepo::new();
    repo.commit("README.md", "hi\n", "init");
    session_in(&repo, &repo.root, "s-top", 1);
    // `script` gives the command a terminal; stdout is the terminal too.
    let command = format!(
        "HOME='{}' GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 '{BIN}' import",
        repo.home.display()
    );
    let Ok(out) = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&repo.root)
        .output()
    else {
        eprintln!("skipped: no `script` to give import a terminal");
        return;
    };
    let seen = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{seen}");
    assert!(
        seen.contains("[1/1] s-top.jsonl"),
        "the bar names the transcript: {seen:?}"
    );
    assert!(
        seen.contains("\u{1b}["),
        "drawn and cleared with escapes: {seen:?}"
    );
    assert!(seen.contains("2 new events from 1 transcript"), "{seen:?}");
}
