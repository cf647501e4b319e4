//! The shipped git hooks (`git-hooks/post-commit`, `post-rewrite`), installed in repositories
//! the tests build and run by git itself, as `git agent-context hook …`.

use std::fs;
use std::path::Path;

use git_agent_context::event::Kind;
use git_agent_context::store::notes;

use crate::link::{
    TTL, bash_result, cache_turn, edit_turn, kinds_in_note, say, store, text, ttl_session,
};
use crate::repo::TestRepo;

const SESSION: &str = "s-link";

/// A repository with one commit, `init` run and the git hooks installed.
pub fn hooked_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit("README.md", "hello\n", "first");
    repo.ok(&["init"]);
    repo.install_git_hooks();
    repo
}

/// Write `content` as the transcript of `session` in the project folder of `dir`.
pub fn transcript_in(
    repo: &TestRepo,
    dir: &Path,
    session: &str,
    content: &str,
) -> std::path::PathBuf {
    let folder = repo.project_dir_for(dir);
    fs::create_dir_all(&folder).unwrap();
    let path = folder.join(format!("{session}.jsonl"));
    fs::write(&path, content.replace("s-link", session)).unwrap();
    path
}

/// Change `file` and commit it with git, as the session `session` (if any) would.
pub fn commit_as(
    repo: &TestRepo,
    dir: &Path,
    session: Option<&str>,
    file: &str,
    message: &str,
) -> String {
    fs::write(dir.join(file), format!("{message}\n")).unwrap();
    repo.git_in(dir, &["add", file], &[]);
    let vars: Vec<(&str, &str)> = session
        .map(|s| ("CLAUDE_CODE_SESSION_ID", s))
        .into_iter()
        .collect();
    repo.git_in(dir, &["commit", "-q", "-m", message], &vars);
    repo.git_in(dir, &["rev-parse", "HEAD"], &[])
}

fn pending_kinds(repo: &TestRepo) -> Vec<String> {
    let mut kinds: Vec<String> = repo
        .pending()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    kinds.sort();
    kinds
}

#[test]
fn the_commit_a_session_makes_gets_its_reasoning_at_once() {
    let repo = hooked_repo();
    let path = transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    // No extract has run: the hook reads the transcript itself.
    let head = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
    assert_eq!(pending_kinds(&repo), ["session"]);
    assert!(
        repo.log().contains("session s-link: 2 events"),
        "{}",
        repo.log()
    );
    let shown = repo.git(&["log", "-1", "--notes=agent-context", "--format=%N"]);
    assert!(shown.contains("I'll go with a TTL map"), "{shown}");

    // The transcript then shows the commit's output: the commit event joins the same note and
    // nothing moves.
    let short = &head[..7];
    let more = [
        say("m9", "2026-01-01T10:00:07Z", serde_json::json!([{"type": "tool_use", "id": "b9", "name": "Bash", "input": {"command": "git commit -am 'feat: cache'"}}])),
        bash_result("b9", &format!("[main {short}] feat: cache\n 1 file changed"), "2026-01-01T10:00:08Z"),
    ]
    .concat();
    fs::write(&path, fs::read_to_string(&path).unwrap() + &more).unwrap();
    repo.extract(&path);
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "feature", "session", "write"]
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// Write `n` small blobs named `batch` to `repo`'s object store, loose, as a busy repository
/// keeps its newest objects until git's own gc; on a branch of their own (a tree and a commit)
/// when `reached`, else reached by nothing, as a rebase leaves the commits it replaced.
fn loose_blobs(repo: &TestRepo, batch: &str, n: usize, reached: bool) {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<String> = (0..n)
        .map(|i| {
            let path = dir.path().join(format!("blob-{i}"));
            fs::write(&path, format!("{batch} {i}\n")).unwrap();
            path.to_str().unwrap().to_owned()
        })
        .collect();
    let mut args = vec!["hash-object", "-w"];
    args.extend(files.iter().map(String::as_str));
    let blobs = repo.git(&args);
    if reached {
        let listing: String = (blobs.lines().enumerate())
            .map(|(i, blob)| format!("100644 blob {blob}\tblob-{i}\n"))
            .collect();
        let tree = repo.git_with_input(&["mktree"], listing.as_bytes());
        let commit = repo.git(&["commit-tree", tree.trim(), "-m", "many"]);
        repo.git(&["update-ref", &format!("refs/heads/{batch}"), commit.trim()]);
    }
}

/// A hooked repository with `setting` in its configuration, where the session's agent committed
/// its cache turn; the commit.
fn agent_committed_with(setting: Option<(&str, &str)>) -> (TestRepo, String) {
    let repo = hooked_repo();
    if let Some((key, value)) = setting {
        repo.git(&["config", key, value]);
    }
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    let head = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    (repo, head)
}

#[test]
fn an_agents_commit_packs_the_repositorys_loose_objects_once_there_are_many() {
    let packed = |repo: &TestRepo| repo.log().matches("the loose objects packed").count();
    for off in [
        None,
        Some(("gc.auto", "0")),
        Some(("gc.auto", "-1")),
        Some(("maintenance.auto", "false")),
    ] {
        let (repo, head) = agent_committed_with(off);
        // A few loose objects are left as they are.
        let few = repo.loose_objects();
        assert!(few > 0 && few < 100, "{few} loose objects");
        loose_blobs(&repo, "many", 300, true);
        commit_as(&repo, &repo.root, Some(SESSION), "b.txt", "second");
        let left = repo.loose_objects();
        match off {
            // Packed by the process the commit's hook left its work to, once it was done.
            None => assert_eq!((left, packed(&repo)), (0, 1), "log: {}", repo.log()),
            // The user said nothing packs on its own.
            Some(_) => assert!(left > 300 && packed(&repo) == 0, "{off:?}: {left} loose"),
        }
        assert_eq!(
            kinds_in_note(&repo, &head),
            ["decision", "session", "write"],
            "log: {}",
            repo.log()
        );
        repo.git(&["fsck", "--no-dangling", "--no-progress"]);
        if off.is_none() {
            // Objects no ref reaches stay loose when packed: they are not packed again and
            // again, only once as many new ones have come.
            loose_blobs(&repo, "dropped", 300, false);
            commit_as(&repo, &repo.root, Some(SESSION), "c.txt", "third");
            assert!(repo.loose_objects() >= 300);
            commit_as(&repo, &repo.root, Some(SESSION), "d.txt", "fourth");
            assert_eq!(packed(&repo), 2, "log: {}", repo.log());
            // Once git's own gc has taken them away, new ones count from what it left.
            repo.git(&["gc", "-q", "--prune=now"]);
            commit_as(&repo, &repo.root, Some(SESSION), "e.txt", "fifth");
            loose_blobs(&repo, "more", 300, true);
            commit_as(&repo, &repo.root, Some(SESSION), "f.txt", "sixth");
            assert_eq!(packed(&repo), 3, "log: {}", repo.log());
        }
    }
}

#[test]
fn a_clone_without_a_commit_graph_is_given_one_as_git_maintenance_would() {
    let chain = ".git/objects/info/commit-graphs/commit-graph-chain";
    let written = |repo: &TestRepo| repo.log().matches("git's commit-graph written").count();
    for declined in [
        None,
        Some(("gc.writeCommitGraph", "false")),
        Some(("core.commitGraph", "false")),
        Some(("gc.auto", "0")),
    ] {
        let (repo, _) = agent_committed_with(declined);
        let Some(_) = declined else {
            // Written by the process the commit's hook left its work to, and read by git.
            assert!(repo.root.join(chain).is_file(), "log: {}", repo.log());
            assert_eq!(written(&repo), 1, "log: {}", repo.log());
            repo.git(&["commit-graph", "verify"]);
            let layers = fs::read_to_string(repo.root.join(chain)).unwrap();
            assert_eq!(layers.lines().count(), 1, "{layers}");
            // A few commits more are read from their objects; once a hundred are not in it (a
            // fetch, commits made without the hooks), a layer is written over it.
            commit_as(&repo, &repo.root, Some(SESSION), "b.txt", "second");
            assert_eq!(written(&repo), 1, "log: {}", repo.log());
            for n in 0..100 {
                let tree = repo.git(&["rev-parse", "HEAD^{tree}"]);
                let parent = repo.git(&["rev-parse", "HEAD"]);
                let message = format!("without the hooks {n}");
                let made = repo.git(&[
                    "commit-tree",
                    tree.trim(),
                    "-p",
                    parent.trim(),
                    "-m",
                    &message,
                ]);
                repo.git(&["update-ref", "HEAD", made.trim()]);
            }
            commit_as(&repo, &repo.root, Some(SESSION), "c.txt", "third");
            assert_eq!(written(&repo), 2, "log: {}", repo.log());
            repo.git(&["commit-graph", "verify"]);
            continue;
        };
        assert!(!repo.root.join(chain).exists(), "{declined:?}");
        assert_eq!(written(&repo), 0, "{declined:?}: log: {}", repo.log());
    }
    // git's own graph, in one file, holding the history, is left as it is.
    let repo = hooked_repo();
    repo.git(&["commit-graph", "write", "--reachable"]);
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    assert!(!repo.root.join(chain).exists());
    assert!(repo.root.join(".git/objects/info/commit-graph").is_file());
    assert_eq!(written(&repo), 0, "log: {}", repo.log());
    // A command that writes does it too; in a repository with no commit yet, there is none to
    // write.
    for commits in [true, false] {
        let repo = TestRepo::new();
        if commits {
            repo.commit("README.md", "hello\n", "first");
        }
        repo.ok(&["init"]);
        let transcript = transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
        repo.extract(&transcript);
        assert_eq!(repo.root.join(chain).is_file(), commits);
    }
}

#[test]
fn a_session_outside_the_project_folder_is_found_through_the_registry() {
    let repo = hooked_repo();
    let elsewhere = repo.home.join("elsewhere/transcript.jsonl");
    fs::create_dir_all(elsewhere.parent().unwrap()).unwrap();
    fs::write(&elsewhere, cache_turn(&repo)).unwrap();
    repo.extract(&elsewhere);
    let registry =
        fs::read_to_string(repo.root.join(".git/agent-context/sessions/s-link.json")).unwrap();
    assert!(
        registry.contains("elsewhere/transcript.jsonl"),
        "{registry}"
    );

    // The session goes on; the hook reads what is new before attaching it all (both turns'
    // events were waiting for a commit).
    let next = edit_turn(
        &repo,
        2,
        "Cap it",
        5,
        "An LRU won't work because the keys are unbounded.",
        "cache.py",
    );
    fs::write(&elsewhere, cache_turn(&repo) + &next).unwrap();
    let head = commit_as(
        &repo,
        &repo.root,
        Some(SESSION),
        "cache.py",
        "feat: capped cache",
    );
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "rejection", "session", "write", "write"],
        "log: {}",
        repo.log()
    );
}

#[test]
fn without_the_session_variable_the_active_sessions_that_touched_the_files_take_the_commit() {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, "s-cache", &cache_turn(&repo));
    let docs = edit_turn(
        &repo,
        1,
        "Write docs",
        0,
        "I'll use a table because it reads well.",
        "docs.md",
    );
    transcript_in(&repo, &repo.root, "s-docs", &docs);
    let talk = [
        crate::link::prompt("p1", "How does the cache expire?", "2026-01-01T10:00:00Z"),
        say(
            "m1",
            "2026-01-01T10:00:05Z",
            serde_json::json!([text("We chose time-based expiry because entries go stale.")]),
        ),
    ]
    .concat();
    transcript_in(&repo, &repo.root, "s-talk", &talk);
    // The user commits by hand (no CLAUDE_CODE_SESSION_ID).
    let head = commit_as(&repo, &repo.root, None, "cache.py", "cache");
    let events = notes::read(&store(&repo), &head).unwrap();
    let mut sessions: Vec<&str> = events.iter().map(|e| e.session_id.as_str()).collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(
        sessions,
        ["s-cache", "s-talk"],
        "the session that edited other files waits; log: {}",
        repo.log()
    );
    assert!(pending_kinds(&repo).contains(&"write".to_owned()));
}

#[test]
fn a_cherry_pick_copies_the_note_and_takes_nothing_pending() {
    let repo = hooked_repo();
    repo.git(&["checkout", "-q", "-b", "side"]);
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    let picked = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    let original = kinds_in_note(&repo, &picked);
    assert_eq!(original, ["decision", "session", "write"]);

    // More reasoning waits when the session cherry-picks onto main.
    let next = [
        cache_turn(&repo),
        crate::link::prompt("p2", "Port it", "2026-01-01T10:05:00Z"),
        say(
            "m2",
            "2026-01-01T10:05:05Z",
            serde_json::json!([text(
                "We should not port the tests because main lacks the fixtures."
            )]),
        ),
    ]
    .concat();
    let path = transcript_in(&repo, &repo.root, SESSION, &next);
    repo.git(&["checkout", "-q", "main"]);
    repo.git_in(
        &repo.root,
        &["cherry-pick", "-x", "side"],
        &[("CLAUDE_CODE_SESSION_ID", SESSION)],
    );
    let copy = repo.git(&["rev-parse", "HEAD"]);
    assert_ne!(copy, picked);
    assert_eq!(kinds_in_note(&repo, &copy), original, "log: {}", repo.log());
    assert!(repo.log().contains("cherry-picked from"), "{}", repo.log());
    repo.extract(&path);
    assert!(pending_kinds(&repo).contains(&"rejection".to_owned()));
    assert_eq!(kinds_in_note(&repo, &copy), original);
}

#[test]
fn rebase_and_amend_carry_notes_and_later_updates_follow_them() {
    let repo = hooked_repo();
    repo.git(&["checkout", "-q", "-b", "feat"]);
    // The turn is still open when the session commits: its decision is provisional.
    let open_turn = [
        crate::link::prompt("p1", "Add a cache", "2026-01-01T10:00:00Z"),
        say(
            "m1",
            "2026-01-01T10:00:05Z",
            serde_json::json!([text(
                "I'll go with a TTL map because entries expire by time."
            )]),
        ),
    ]
    .concat();
    let path = transcript_in(&repo, &repo.root, SESSION, &open_turn);
    let first = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    assert_eq!(kinds_in_note(&repo, &first), ["decision", "session"]);

    repo.git(&["checkout", "-q", "main"]);
    repo.commit("other.txt", "x\n", "meanwhile");
    repo.git(&["checkout", "-q", "feat"]);
    repo.git_in(
        &repo.root,
        &["rebase", "-q", "main"],
        &[("CLAUDE_CODE_SESSION_ID", SESSION)],
    );
    let rebased = repo.git(&["rev-parse", "HEAD"]);
    assert_ne!(rebased, first);
    assert_eq!(
        kinds_in_note(&repo, &rebased),
        ["decision", "session"],
        "log: {}",
        repo.log()
    );
    assert!(repo.log().contains("rebase in progress"), "{}", repo.log());

    repo.git_in(
        &repo.root,
        &["commit", "-q", "--amend", "-m", "feat: TTL cache"],
        &[("CLAUDE_CODE_SESSION_ID", SESSION)],
    );
    let amended = repo.git(&["rev-parse", "HEAD"]);
    assert_eq!(kinds_in_note(&repo, &amended), ["decision", "session"]);

    // The turn goes on: the decision now names the file it led to. The newer version lands on
    // the amended commit, not on the commits it replaced.
    let more = [
        say(
            "m2",
            "2026-01-01T10:00:09Z",
            serde_json::json!([crate::link::edit(&repo, "e2", "cache.py")]),
        ),
        bash_result("e2", "ok", "2026-01-01T10:00:10Z"),
    ]
    .concat();
    fs::write(&path, open_turn + &more).unwrap();
    repo.extract(&path);
    let decision = |commit: &str| {
        notes::read(&store(&repo), commit)
            .unwrap()
            .into_iter()
            .find(|e| e.kind == Kind::Decision)
            .unwrap()
    };
    assert_eq!(decision(&amended).files_affected, ["cache.py"]);
    // The commit rewritten away keeps its note, as it was, while it is in the repository
    // (another clone may reach it); the hook's repair found the commit that holds its lines.
    assert!(decision(&first).files_affected.is_empty());
    assert!(
        repo.log()
            .contains("repair: 1 unreachable commits' notes carried"),
        "{}",
        repo.log()
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn a_commit_in_a_linked_worktree_is_linked_in_the_shared_store() {
    let repo = hooked_repo();
    let wt = repo.home.parent().unwrap().join("wt");
    repo.git(&["worktree", "add", "-q", "-b", "wt", wt.to_str().unwrap()]);
    transcript_in(
        &repo,
        &wt,
        SESSION,
        &cache_turn(&repo).replace(repo.root.to_str().unwrap(), wt.to_str().unwrap()),
    );
    let head = commit_as(&repo, &wt, Some(SESSION), "cache.py", "feat: cache");
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
    assert!(!wt.join(".git/agent-context").exists());
}

/// The session commits `cache.py` with git, whatever the outcome.
fn agent_commits_cache(repo: &TestRepo) -> std::process::Output {
    fs::write(repo.root.join("cache.py"), "x\n").unwrap();
    repo.git(&["add", "cache.py"]);
    repo.git_output(
        &repo.root,
        &["commit", "-q", "-m", "feat: cache"],
        &[("CLAUDE_CODE_SESSION_ID", SESSION)],
    )
}

#[test]
fn the_process_an_agents_commit_leaves_its_work_to_makes_the_next_sessions_brief() {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    assert!(agent_commits_cache(&repo).status.success());
    let log = repo.log();
    let finished = log.lines().find(|l| {
        l.contains("hook post-commit: ") && l.contains("; the next session's brief made")
    });
    assert!(finished.is_some(), "{log}");
    let start = serde_json::json!({"hook_event_name": "SessionStart", "source": "startup",
        "session_id": "s-next", "cwd": repo.root,
        "transcript_path": repo.home.join("s-next.jsonl")});
    let out = repo.run_with_input(
        &repo.root,
        &["hook", "SessionStart"],
        start.to_string().as_bytes(),
        &[],
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("session s-link"),
        "{out:?}"
    );
    let started = repo.last_logged(" hook SessionStart: ");
    assert!(
        started.contains(": gave the brief as kept, about "),
        "{started}"
    );
}

#[test]
fn a_failing_hook_never_fails_the_commit_and_says_why_once() {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    // Something in the store's way: a folder where the hook records the agent's commit.
    fs::create_dir_all(repo.root.join(".git/agent-context/deferred/in-the-way")).unwrap();
    let out = agent_commits_cache(&repo);
    assert!(out.status.success());
    let stderr = crate::repo::stderr(&out);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("git-agent-context: hook post-commit: "),
        "{stderr}"
    );
    assert!(repo.log().contains("failed: "), "{}", repo.log());
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]), "feat: cache");
}

#[test]
fn what_an_agents_commit_leaves_to_a_process_of_its_own_is_done_by_the_next_run_if_it_fails() {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    // Something in the way of reading the transcript, not of recording the commit.
    let pending = repo.root.join(".git/agent-context/pending");
    fs::remove_dir_all(&pending).unwrap();
    fs::write(&pending, "in the way").unwrap();
    let out = agent_commits_cache(&repo);
    // The commit's own part worked and said nothing; the rest failed where it ran, and says so
    // in the log.
    assert!(out.status.success());
    assert_eq!(crate::repo::stderr(&out), "");
    assert!(
        repo.log().contains("the rest left to process"),
        "{}",
        repo.log()
    );
    assert!(repo.log().contains("failed: "), "{}", repo.log());
    let head = repo.git(&["rev-parse", "HEAD"]);
    assert!(kinds_in_note(&repo, &head).is_empty());
    // Nothing is lost: the commit was recorded, and the next run links it.
    fs::remove_file(&pending).unwrap();
    repo.ok(&["extract"]);
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
}

#[test]
fn a_hook_stuck_opening_the_repository_lets_the_commit_go_on_at_its_budget() {
    let repo = hooked_repo();
    // The shared configuration is a named pipe no one writes to: reading it never ends.
    let shared = repo.root.join(".agent-context.toml");
    let made = std::process::Command::new("mkfifo").arg(&shared).status();
    assert!(made.unwrap().success(), "mkfifo {}", shared.display());
    fs::write(repo.root.join("cache.py"), "x\n").unwrap();
    repo.git(&["add", "cache.py"]);
    let commit = repo.git_command(&repo.root, &["commit", "-q", "-m", "feat: cache"], &[]);
    let limit = std::time::Duration::from_secs(15);
    let (out, _) = crate::repo::run_within(commit, b"", false, limit);
    let stderr = crate::repo::stderr(&out);
    assert!(out.status.success(), "{stderr}");
    let why = "over its budget of 5000 ms (hook.extract_budget_ms): did nothing";
    assert_eq!(
        stderr.trim_end(),
        format!("git-agent-context: hook post-commit: {why}")
    );
    assert!(
        repo.log()
            .contains(&format!("hook post-commit: failed: {why}")),
        "{}",
        repo.log()
    );
    assert_eq!(repo.git(&["log", "-1", "--format=%s"]), "feat: cache");
}

#[test]
fn hooks_outside_a_repository_or_unknown_do_nothing_and_exit_0() {
    let repo = TestRepo::new();
    let out = repo
        .cmd_in(&repo.outside())
        .args(["hook", "post-commit"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let out = repo.run(&["hook", "pre-frobnicate"]);
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
    assert!(crate::repo::stderr(&out).contains("unknown hook"));
}

#[test]
fn a_provisional_event_already_on_a_commit_goes_when_its_turn_decides_otherwise() {
    let repo = hooked_repo();
    let thinking = |uuid: &str, text: &str| {
        crate::link::line(
            serde_json::json!({"type": "assistant", "uuid": uuid, "sessionId": SESSION,
            "timestamp": "2026-01-01T10:00:05Z", "message": {"id": "m1", "model": "claude-test",
            "role": "assistant", "content": [{"type": "thinking", "thinking": text}]}}),
        )
    };
    let open = crate::link::prompt("p1", "Add a cache", "2026-01-01T10:00:00Z")
        + &thinking(
            "u1",
            "The cache module has three public functions and one test file.",
        );
    let path = transcript_in(&repo, &repo.root, SESSION, &open);
    // The session commits mid-turn: what the turn looks like so far goes on the commit.
    let head = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "wip");
    assert_eq!(kinds_in_note(&repo, &head), ["raw", "session"]);

    let rest = thinking(
        "u2",
        "I'll go with a TTL map because entries expire by time.",
    ) + &crate::link::prompt("p2", "ok", "2026-01-01T10:01:00Z");
    fs::write(&path, open + &rest).unwrap();
    let report = repo.extract(&path);
    assert_eq!(report["transcripts"][0]["events_removed"], 1, "{report:#}");
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["session"],
        "the raw reading is gone"
    );
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

#[test]
fn events_a_dead_hook_left_in_the_queue_stay_on_their_commit() {
    let repo = hooked_repo();
    let path = transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    repo.extract(&path);
    let queue = repo.root.join(".git/agent-context/pending/s-link.jsonl");
    let before = fs::read(&queue).unwrap();
    let first = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    assert_eq!(
        kinds_in_note(&repo, &first),
        ["decision", "session", "write"]
    );
    // As if the hook had died after writing the notes, before trimming the queue.
    fs::write(&queue, before).unwrap();
    let second = commit_as(&repo, &repo.root, Some(SESSION), "other.py", "chore: other");
    assert_eq!(
        kinds_in_note(&repo, &second),
        ["session"],
        "log: {}",
        repo.log()
    );
    assert_eq!(
        kinds_in_note(&repo, &first),
        ["decision", "session", "write"]
    );
    assert_eq!(pending_kinds(&repo), ["session"]);
}

#[test]
fn sessions_of_a_worktree_nested_inside_this_one_are_its_own_and_read_from_any() {
    let repo = hooked_repo();
    fs::write(repo.root.join(".gitignore"), ".claude/\n").unwrap();
    let nested = repo.root.join(".claude/worktrees/x");
    repo.git(&["worktree", "add", "-q", "-b", "x", nested.to_str().unwrap()]);
    // The session ran there: its lines say so.
    let turn = cache_turn(&repo)
        .replace(repo.root.to_str().unwrap(), nested.to_str().unwrap())
        .replace(
            "\"sessionId\":",
            &format!("\"cwd\":{:?},\"sessionId\":", nested.to_str().unwrap()),
        );
    assert!(turn.contains("\"cwd\""));
    transcript_in(&repo, &nested, "s-nested", &turn);
    // A commit by hand in the main worktree does not take the nested session's reasoning...
    let head = commit_as(&repo, &repo.root, None, "cache.py", "cache");
    assert!(
        notes::read(&store(&repo), &head).unwrap().is_empty(),
        "log: {}",
        repo.log()
    );
    // Extracting from the main worktree reads it (the notes are shared), and leaves its
    // events pending: no commit of the session is there yet.
    let report = repo.json(&["extract"]);
    assert_eq!(
        report["transcripts"].as_array().unwrap().len(),
        1,
        "{report:#}"
    );
    assert_eq!(report["events_linked"], 0, "{report:#}");
    assert!(notes::read(&store(&repo), &head).unwrap().is_empty());
    // In the nested worktree, it is that worktree's.
    let there = commit_as(&repo, &nested, Some("s-nested"), "cache.py", "cache there");
    assert_eq!(
        kinds_in_note(&repo, &there),
        ["decision", "session", "write"]
    );
}

#[test]
fn a_session_that_left_nothing_makes_no_graph_node() {
    let repo = hooked_repo();
    commit_as(
        &repo,
        &repo.root,
        Some("ghost"),
        "a.txt",
        "by a session with no transcript",
    );
    // The hook ran, and found nothing to write.
    assert!(repo.log().contains("hook post-commit"), "{}", repo.log());
    let tree = repo.git_output(
        &repo.root,
        &["ls-tree", "-r", "--name-only", "refs/agent-context"],
        &[],
    );
    let listed = String::from_utf8_lossy(&tree.stdout);
    // Either no graph at all, or one without the session.
    assert!(
        !tree.status.success() || !listed.contains("ghost"),
        "{listed}"
    );
}

#[test]
fn amending_a_cherry_picked_commit_is_the_sessions_own_work() {
    let repo = hooked_repo();
    repo.git(&["checkout", "-q", "-b", "side"]);
    repo.commit("side.txt", "x\n", "side work");
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["cherry-pick", "-x", "side"]);
    // The session then changes the picked commit: its `-x` line stays, the work is new.
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    fs::write(repo.root.join("cache.py"), "ttl\n").unwrap();
    repo.git(&["add", "cache.py"]);
    repo.git_in(
        &repo.root,
        &["commit", "-q", "--amend", "--no-edit"],
        &[("CLAUDE_CODE_SESSION_ID", SESSION)],
    );
    let head = repo.git(&["rev-parse", "HEAD"]);
    assert!(
        repo.git(&["log", "-1", "--format=%B"])
            .contains("cherry picked from commit")
    );
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
}

#[test]
fn a_hook_waits_for_a_busy_store_only_briefly() {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, SESSION, &cache_turn(&repo));
    // Another writer holds the store's lock for the whole commit.
    let lock = fs::File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(repo.root.join(".git/agent-context/lock"))
        .unwrap();
    lock.lock().unwrap();
    let start = std::time::Instant::now();
    let head = commit_as(&repo, &repo.root, Some(SESSION), "cache.py", "feat: cache");
    let waited = start.elapsed();
    assert!(waited < std::time::Duration::from_secs(3), "{waited:?}");
    assert!(repo.log().contains("busy"), "{}", repo.log());
    drop(lock);
    // A run that took the deferred commits aside and died: the next one puts them back.
    let store = repo.root.join(".git/agent-context");
    fs::rename(store.join("deferred"), store.join("deferred.claimed")).unwrap();
    // The next run does the work, on the commit the session made.
    repo.ok(&["extract"]);
    assert!(!store.join("deferred.claimed").exists());
    assert_eq!(
        kinds_in_note(&repo, &head),
        ["decision", "session", "write"]
    );
    assert!(
        !repo.root.join(".git/agent-context/deferred").exists()
            || fs::read_to_string(repo.root.join(".git/agent-context/deferred"))
                .unwrap()
                .is_empty()
    );
}

/// The session's work on branch `feature` of `repo`: [`TTL`] written to `src/ttl.rs` and
/// committed by the session, whose hook gives the commit its note. Returns the commit.
fn ttl_on_feature(repo: &TestRepo) -> String {
    transcript_in(repo, &repo.root, SESSION, &ttl_session(&repo.root));
    repo.git(&["checkout", "-q", "-b", "feature"]);
    fs::create_dir_all(repo.root.join("src")).unwrap();
    fs::write(repo.root.join("src/ttl.rs"), TTL).unwrap();
    repo.git(&["add", "src/ttl.rs"]);
    let session = [("CLAUDE_CODE_SESSION_ID", SESSION)];
    repo.git_in(
        &repo.root,
        &["commit", "-q", "-m", "feat: ttl map"],
        &session,
    );
    let commit = repo.git(&["rev-parse", "HEAD"]);
    assert_eq!(
        kinds_in_note(repo, &commit),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
    commit
}

/// Forget the branch `feature` and whatever only it reached, as a user cleaning up after a
/// merge does: the branch deleted, the reflogs expired, the objects pruned.
fn prune_feature(repo: &TestRepo, gone: &str) {
    repo.git(&["branch", "-q", "-D", "feature"]);
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    repo.git(&["gc", "-q", "--prune=now"]);
    let exists = repo.git_output(&repo.root, &["cat-file", "-e", gone], &[]);
    assert!(!exists.status.success(), "{gone} was not pruned");
}

/// After the squash commit `squash` took the place of `gone`: `why` names it with the
/// session's reasoning, `repair` takes `gone`'s note off, and nothing served names `gone`.
fn reasoning_follows_the_squash(repo: &TestRepo, gone: &str, squash: &str) {
    // By the blame and by the index alone, where the pruned commit owns nothing.
    for by in [&[][..], &["--fast"]] {
        let mut args = vec!["why", "src/ttl.rs"];
        args.extend(by);
        let why = repo.json(&args);
        let owners = why["commits"].as_array().unwrap();
        assert_eq!(owners.len(), 1, "{by:?}: {why:#}");
        assert_eq!(owners[0]["commit"], squash, "{by:?}: {why:#}");
        assert!(why.to_string().contains("TTL map"), "{by:?}: {why:#}");
    }
    let repaired = repo.json(&["repair"]);
    assert_eq!(repaired["carried"][0]["from"], gone, "{repaired:#}");
    assert_eq!(repaired["carried"][0]["to"], squash, "{repaired:#}");
    assert_eq!(repaired["left"].as_array().unwrap().len(), 0);
    let listed = repo.git(&["notes", "--ref=agent-context", "list"]);
    assert!(!listed.contains(gone), "{listed}");
    assert_eq!(
        kinds_in_note(repo, squash),
        ["decision", "session", "write"]
    );
    let short = &gone[..7];
    for answer in [
        repo.ok(&["query", "a cache that forgets with a TTL map"]),
        repo.ok(&["claude-md", "--print"]),
        repo.ok(&["log", "--reasoned"]),
    ] {
        assert!(!answer.contains(short), "{answer}");
    }
    // Run again, it has nothing to do.
    let again = repo.json(&["repair"]);
    assert_eq!(again["carried"].as_array().unwrap().len(), 0, "{again:#}");
}

#[test]
fn a_local_squash_merge_carries_the_reasoning_and_repair_cleans_up_after_gc() {
    let repo = hooked_repo();
    let on_feature = ttl_on_feature(&repo);
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["merge", "-q", "--squash", "feature"]);
    repo.git(&["commit", "-q", "-m", "feat: ttl map (#12)"]);
    let squash = repo.git(&["rev-parse", "HEAD"]);
    // The hook found the lines of the branch's commit in the squash commit.
    assert_eq!(
        kinds_in_note(&repo, &squash),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
    prune_feature(&repo, &on_feature);
    reasoning_follows_the_squash(&repo, &on_feature, &squash);
}

#[test]
fn a_squash_merge_done_on_the_server_and_pulled_carries_the_reasoning() {
    let repo = hooked_repo();
    let remote = repo.outside().join("remote.git");
    repo.git(&["init", "-q", "--bare", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git(&["push", "-q", "origin", "main"]);
    let on_feature = ttl_on_feature(&repo);
    repo.git(&["push", "-q", "origin", "feature"]);
    // On the server (another clone): squash the branch into main, delete it.
    let server = repo.outside().join("server");
    repo.git_in(
        &repo.outside(),
        &[
            "clone",
            "-q",
            "-b",
            "main",
            remote.to_str().unwrap(),
            "server",
        ],
        &[],
    );
    repo.git_in(&server, &["merge", "-q", "--squash", "origin/feature"], &[]);
    repo.git_in(&server, &["commit", "-q", "-m", "feat: ttl map (#12)"], &[]);
    repo.git_in(&server, &["push", "-q", "origin", "main", ":feature"], &[]);
    let squash = repo.git_in(&server, &["rev-parse", "HEAD"], &[]);
    // Here: pull; the post-merge hook finds the branch's lines in what arrived.
    repo.git(&["checkout", "-q", "main"]);
    repo.git(&["pull", "-q", "--ff-only", "origin", "main"]);
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), squash);
    assert_eq!(
        kinds_in_note(&repo, &squash),
        ["decision", "session", "write"],
        "log: {}",
        repo.log()
    );
    repo.git(&["fetch", "-q", "--prune", "origin"]);
    prune_feature(&repo, &on_feature);
    reasoning_follows_the_squash(&repo, &on_feature, &squash);
}
