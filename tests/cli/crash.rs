//! A writer killed at any moment (SIGKILL: no cleanup runs) leaves the repository consistent,
//! and the next run completes its work without losing or doubling anything.

use std::process::Stdio;
use std::time::Instant;

use crate::link::six_commit_session;
use crate::repo::TestRepo;

/// Everything a run stores that must come out the same: each commit's note as git shows it,
/// the decision graph's tree, the pending queue byte for byte, the attached index, and the
/// retrieval index's lines (in any order; its `state` names the notes commit, which differs
/// when a run was cut short).
pub fn stored(repo: &TestRepo, commits: &[String]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = commits
        .iter()
        .map(|c| {
            let note = repo.git_output(
                &repo.root,
                &["notes", "--ref=agent-context", "show", c],
                &[],
            );
            (format!("note {c}"), String::from_utf8(note.stdout).unwrap())
        })
        .collect();
    out.extend(repo.pending_bytes().into_iter().map(|(name, bytes)| {
        (
            format!("pending {name}"),
            String::from_utf8_lossy(&bytes).into_owned(),
        )
    }));
    let attached = repo.root.join(".git/agent-context/attached");
    if let Ok(entries) = std::fs::read_dir(&attached) {
        for e in entries.flatten() {
            out.push((
                format!("attached {}", e.file_name().to_string_lossy()),
                std::fs::read_to_string(e.path()).unwrap(),
            ));
        }
    }
    let graph = repo.git_output(
        &repo.root,
        &["rev-parse", "--verify", "-q", "refs/agent-context^{tree}"],
        &[],
    );
    out.push((
        "graph tree".to_owned(),
        String::from_utf8(graph.stdout).unwrap(),
    ));
    let index = repo.root.join(".git/agent-context/index");
    let mut folders = vec![index.clone()];
    while let Some(dir) = folders.pop() {
        for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = e.path();
            if path.is_dir() {
                folders.push(path);
            } else if e.file_name() != "state" {
                let mut lines: Vec<String> = std::fs::read_to_string(&path)
                    .unwrap()
                    .lines()
                    .map(str::to_owned)
                    .collect();
                lines.sort();
                let name = path.strip_prefix(&index).unwrap().display().to_string();
                out.push((format!("index {name}"), lines.join("\n")));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_writer_killed_at_any_point_leaves_a_consistent_repository_that_the_next_run_completes() {
    // The reference: one uninterrupted run. Test repositories are reproducible, so every trial
    // makes the same commits.
    let reference = TestRepo::new();
    let (transcript, commits) = six_commit_session(&reference);
    reference.extract(&transcript);
    let expected = stored(&reference, &commits);
    assert!(
        expected
            .iter()
            .any(|(k, v)| k == "graph tree" && !v.is_empty())
            && expected.iter().any(|(k, _)| k.starts_with("index terms/")),
        "the reference has a graph and an index to compare"
    );
    // How long a whole run takes, warm: the shortest of three.
    let whole = (0..3)
        .map(|_| {
            let repo = TestRepo::new();
            let (transcript, _) = six_commit_session(&repo);
            let start = Instant::now();
            repo.extract(&transcript);
            start.elapsed()
        })
        .min()
        .unwrap();
    let notes = expected
        .iter()
        .filter(|(k, v)| k.starts_with("note") && !v.is_empty());
    assert_eq!(notes.count(), 6);

    // Kill points spread over the whole run (golden-ratio steps). How long a run takes depends on
    // the load of the moment: a run that ends before its kill point shortens the estimate, and
    // the trials go on until enough kills have landed.
    let mut whole = whole;
    let (wanted, most) = (34, 75);
    let (mut interrupted, mut trial) = (0, 0);
    while interrupted < wanted && trial < most {
        trial += 1;
        let repo = TestRepo::new();
        let (transcript, ours) = six_commit_session(&repo);
        assert_eq!(ours, commits);
        let at = whole.mul_f64((trial as f64 * 0.618_034) % 1.0);
        let mut child = repo
            .cmd_in(&repo.root)
            .args(["extract", "--transcript", transcript.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        // Already finished when the kill point is past the end: then this does nothing.
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.success() {
            whole = whole.mul_f64(0.8);
        } else {
            interrupted += 1;
        }
        repo.git(&["fsck", "--strict", "--no-progress"]);
        repo.ok(&["status"]);
        repo.extract(&transcript);
        let got = stored(&repo, &commits);
        let keys = |v: &[(String, String)]| v.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        assert_eq!(
            keys(&got),
            keys(&expected),
            "trial {trial}: killed after {at:?} of {whole:?}"
        );
        for ((key, a), (_, b)) in got.iter().zip(&expected) {
            assert!(
                a == b,
                "trial {trial}: {key} differs after a kill at {at:?} of {whole:?}"
            );
        }
    }
    println!("{interrupted} of {trial} runs were killed before their end");
    // Enough kills must have landed mid-run for the test to mean anything.
    assert!(
        interrupted >= wanted,
        "only {interrupted} of {trial} runs were interrupted"
    );
}
