//! Linking: each event lands on the commit it led to, by every signal docs/linking.md names, in
//! repositories the tests build.

use std::path::{Path, PathBuf};

use git_agent_context::event::{Event, Kind, Origin};
use git_agent_context::store::{Store, notes};

use crate::repo::TestRepo;

pub fn store(repo: &TestRepo) -> Store {
    Store::discover(&repo.root).unwrap()
}

/// One JSON line of a transcript.
pub fn line(value: serde_json::Value) -> String {
    format!("{value}\n")
}

pub fn prompt(uuid: &str, text: &str, at: &str) -> String {
    line(
        serde_json::json!({"type": "user", "uuid": uuid, "sessionId": "s-link", "timestamp": at,
        "message": {"role": "user", "content": text}}),
    )
}

pub fn say(msg: &str, at: &str, blocks: serde_json::Value) -> String {
    line(
        serde_json::json!({"type": "assistant", "uuid": format!("u-{msg}"), "sessionId": "s-link", "timestamp": at,
        "message": {"id": msg, "model": "claude-test", "role": "assistant", "content": blocks}}),
    )
}

pub fn bash_result(id: &str, stdout: &str, at: &str) -> String {
    line(
        serde_json::json!({"type": "user", "uuid": format!("r-{id}"), "sessionId": "s-link", "timestamp": at,
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": stdout}]},
        "toolUseResult": {"stdout": stdout, "stderr": ""}}),
    )
}

pub fn kinds_in_note(repo: &TestRepo, commit: &str) -> Vec<String> {
    let mut kinds: Vec<String> = notes::read(&store(repo), commit)
        .unwrap()
        .iter()
        .map(|e| e.kind.to_string())
        .collect();
    kinds.sort();
    kinds
}

#[test]
fn each_event_lands_on_the_commit_it_led_to() {
    let repo = TestRepo::new();
    let first = repo.commit("cache.py", "ttl\n", "feat: add TTL cache");
    let second = repo.commit("cache.py", "ttl capped\n", "fix: cap the cache");
    let transcript = repo.home.join("s-link.jsonl");
    let edit = |id: &str| {
        serde_json::json!({"type": "tool_use", "id": id, "name": "Edit",
        "input": {"file_path": repo.root.join("cache.py"), "old_string": "a", "new_string": "b"}})
    };
    let content = [
        prompt("p1", "Add a cache", "2026-01-01T00:00:00Z"),
        say("m1", "2026-01-01T00:00:01Z", serde_json::json!([{"type": "text", "text": "I'll go with a TTL map because entries expire by time."}, edit("e1")])),
        bash_result("e1", "ok", "2026-01-01T00:00:02Z"),
        say("m2", "2026-01-01T00:00:03Z", serde_json::json!([{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "git commit -am 'feat: add TTL cache'"}}])),
        bash_result("b1", &format!("[main {}] feat: add TTL cache\n 1 file changed", &first[..7]), "2026-01-01T00:00:04Z"),
        prompt("p2", "Now bound it", "2026-01-01T00:01:00Z"),
        say("m3", "2026-01-01T00:01:01Z", serde_json::json!([{"type": "text", "text": "An LRU won't work because the keys are unbounded."}, edit("e2")])),
        bash_result("e2", "ok", "2026-01-01T00:01:02Z"),
        say("m4", "2026-01-01T00:01:03Z", serde_json::json!([{"type": "tool_use", "id": "b2", "name": "Bash", "input": {"command": "git commit -qam 'fix: cap the cache' && git log --oneline -1"}}])),
        bash_result("b2", &format!("{} fix: cap the cache", &second[..7]), "2026-01-01T00:01:04Z"),
        say("m5", "2026-01-01T00:01:05Z", serde_json::json!([{"type": "text", "text": "Let me check whether the docs mention the cap."}])),
        prompt("p3", "thanks", "2026-01-01T00:02:00Z"),
    ]
    .concat();
    std::fs::write(&transcript, content).unwrap();
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 2, "{report:#}");

    assert_eq!(
        kinds_in_note(&repo, &first),
        ["decision", "feature", "session", "write"]
    );
    assert_eq!(
        kinds_in_note(&repo, &second),
        ["bugfix", "rejection", "session", "write"]
    );
    // The session event is on both, naming both.
    let mut both = vec![first.clone(), second.clone()];
    both.sort();
    for commit in [&first, &second] {
        let events = notes::read(&store(&repo), commit).unwrap();
        let session = events.iter().find(|e| e.kind == Kind::Session).unwrap();
        assert_eq!(session.summary, "Add a cache");
        assert_eq!(session.commits, both);
        assert_eq!(session.files_affected, ["cache.py"]);
    }
    let shown = repo.git(&["notes", "--ref=agent-context", "show", &second]);
    assert!(
        shown.contains("An LRU won't work because the keys are unbounded."),
        "{shown}"
    );
    // After the last commit: still pending.
    let pending: Vec<String> = repo
        .pending()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pending, ["session", "exploration"]);

    // Extracting again changes nothing.
    let tip = repo.git(&["rev-parse", notes::REF]);
    assert_eq!(repo.extract(&transcript)["events_added"], 0);
    assert_eq!(repo.git(&["rev-parse", notes::REF]), tip);
    repo.git(&["fsck", "--strict", "--no-progress"]);
}

/// The real session entireio-cli e1 (Claude Code 2.1.14), which made six commits, in `repo`:
/// six commits made here, the transcript's `[branch sha]` lines pointed at them. Returns the
/// transcript and the commits.
pub fn six_commit_session(repo: &TestRepo) -> (std::path::PathBuf, Vec<String>) {
    let original = [
        "5afb02e", "614cb41", "09ea3c1", "7909310", "54afbbe", "aaa7d7a",
    ];
    let mut text = std::fs::read_to_string(crate::repo::fixture(
        "entireio-cli/e1/2c3e2b3f2a/0/full.jsonl",
    ))
    .unwrap();
    let mut ours = Vec::new();
    for (i, sha) in original.iter().enumerate() {
        let commit = repo.commit("f.txt", &format!("{i}\n"), &format!("c{i}"));
        text = text.replace(sha, &commit[..7]);
        ours.push(commit);
    }
    let transcript = repo.home.join("e1.jsonl");
    std::fs::write(&transcript, text).unwrap();
    (transcript, ours)
}

#[test]
fn a_real_session_with_six_commits_lands_on_six_commits() {
    let repo = TestRepo::new();
    let (transcript, ours) = six_commit_session(&repo);
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 6, "{report:#}");
    let subjects = [
        "feat(explain): implement default checkpoint output format",
        "feat(explain): implement verbose checkpoint output format",
        "feat(explain): implement full checkpoint output format",
        "test(explain): add integration tests for --checkpoint flag",
        "style: apply gofmt optimization for transcript output",
        "docs(explain): update help text for new flags and verbosity levels",
    ];
    for (commit, subject) in ours.iter().zip(subjects) {
        let events = notes::read(&store(&repo), commit).unwrap();
        let commit_events: Vec<&Event> = events
            .iter()
            .filter(|e| e.origin == Origin::Commit && e.commits.len() == 1)
            .collect();
        assert_eq!(commit_events.len(), 1, "{commit}: {events:#?}");
        assert_eq!(commit_events[0].summary, subject);
        assert!(commit_events[0].commits[0].starts_with(&commit[..7]));
    }
    // The first commit carries the reasoning that led to it.
    assert!(
        notes::read(&store(&repo), &ours[0])
            .unwrap()
            .iter()
            .any(|e| e.kind == Kind::Write)
    );
}

/// An Edit of `file` in `repo`, as a tool_use block.
pub fn edit(repo: &TestRepo, id: &str, file: &str) -> serde_json::Value {
    serde_json::json!({"type": "tool_use", "id": id, "name": "Edit",
    "input": {"file_path": repo.root.join(file), "old_string": "a", "new_string": "b"}})
}

pub fn text(t: &str) -> serde_json::Value {
    serde_json::json!({"type": "text", "text": t})
}

/// Prompt `n` at 10:`minute`, answered at :05 with `answer` and an edit of `file` (its
/// result at :06).
pub fn edit_turn(
    repo: &TestRepo,
    n: u32,
    ask: &str,
    minute: u32,
    answer: &str,
    file: &str,
) -> String {
    let at = |second: u32| format!("2026-01-01T10:{minute:02}:{second:02}Z");
    let call = format!("e{n}");
    [
        prompt(&format!("p{n}"), ask, &at(0)),
        say(
            &format!("m{n}"),
            &at(5),
            serde_json::json!([text(answer), edit(repo, &call, file)]),
        ),
        bash_result(&call, "ok", &at(6)),
    ]
    .concat()
}

/// A prompt at 10:00 and its answer: a decision and an edit of cache.py.
pub fn cache_turn(repo: &TestRepo) -> String {
    let answer = "I'll go with a TTL map because entries expire by time.";
    edit_turn(repo, 1, "Add a cache", 0, answer, "cache.py")
}

/// [`cache_turn`], then at 10:10 a look at the README (an exploration) and an edit of it.
pub fn cache_then_readme(repo: &TestRepo) -> String {
    let look = "Let me check what the README says about caching.";
    cache_turn(repo) + &edit_turn(repo, 2, "Document it", 10, look, "README.md")
}

#[test]
fn without_a_named_commit_events_go_to_the_commit_that_fits_their_time_and_files() {
    let repo = TestRepo::new();
    let before = repo.commit_at("other.txt", "x\n", "older work", "2026-01-01T09:00:00Z");
    let transcript = repo.home.join("s-link.jsonl");
    let content = cache_then_readme(&repo) + &prompt("p3", "thanks", "2026-01-01T10:12:00Z");
    std::fs::write(&transcript, content).unwrap();
    // The user commits by hand: the cache between the two prompts, something unrelated, and
    // (later) the README.
    let cache = repo.commit_at("cache.py", "ttl\n", "cache", "2026-01-01T10:05:00Z");
    let unrelated = repo.commit_at("other.txt", "y\n", "unrelated", "2026-01-01T10:11:00Z");
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert_eq!(
        kinds_in_note(&repo, &cache),
        ["decision", "session", "write"]
    );
    for commit in [&before, &unrelated] {
        assert!(notes::read(&store(&repo), commit).unwrap().is_empty());
    }
    let mut waiting: Vec<String> = repo
        .pending()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    waiting.sort();
    assert_eq!(waiting, ["exploration", "session", "write"]);

    // Committed within the grace period after the session's last event: the rest goes there,
    // found by an extract with nothing new to read.
    let readme = repo.commit_at("README.md", "cache\n", "docs", "2026-01-01T10:30:00Z");
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert_eq!(
        kinds_in_note(&repo, &readme),
        ["exploration", "session", "write"]
    );
    // Each commit carries the session as it stood when the commit was linked.
    let session = |commit: &str| {
        notes::read(&store(&repo), commit)
            .unwrap()
            .into_iter()
            .find(|e| e.kind == Kind::Session)
            .unwrap()
    };
    let mut both = vec![cache.clone(), readme.clone()];
    both.sort();
    assert_eq!(session(&readme).commits, both);
    assert_eq!(session(&readme).files_affected, ["README.md", "cache.py"]);
    assert_eq!(session(&cache).commits, std::slice::from_ref(&cache));
}

#[test]
fn a_commit_after_a_stretch_that_wrote_nothing_is_told_by_the_files_written_before_it() {
    let repo = repo_of_a_month_before();
    let transcript = repo.home.join("s-link.jsonl");
    let talk = [
        say(
            "m2",
            "2026-01-01T10:08:00Z",
            serde_json::json!([text(
                "I'll keep the map private because nothing else should touch its entries."
            )]),
        ),
        edit_turn(
            &repo,
            4,
            "Document it",
            10,
            "The README should say so.",
            "README.md",
        ),
    ]
    .concat();
    std::fs::write(
        &transcript,
        ttl_session(&repo.root) + &run_in(&repo.root, &talk),
    )
    .unwrap();
    // The session's lines committed; then, while it talks on and before it writes again, a
    // change to a file it never wrote, one to the file it will write next, and one to the file
    // it wrote.
    let ttl = repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-01T10:05:00Z");
    let other = repo.commit_at("other.txt", "y\n", "other", "2026-01-01T10:09:00Z");
    let readme = repo.commit_at("README.md", "by hand\n", "readme", "2026-01-01T10:09:10Z");
    let tidied = format!("{TTL}// tidied\n");
    let tidy = repo.commit_at("src/ttl.rs", &tidied, "tidy", "2026-01-01T10:09:30Z");
    repo.extract(&transcript);
    assert_eq!(link_of(&repo, &ttl)["signal"], "content");
    for commit in [&other, &readme] {
        let events = notes::read(&store(&repo), commit).unwrap();
        assert!(events.is_empty(), "{events:#?}");
    }
    assert_eq!(link_of(&repo, &tidy)["signal"], "time");
}

#[test]
fn a_teammates_commit_of_the_sessions_hours_and_files_is_not_the_sessions() {
    let at = |m: u32, s: u32| format!("2026-01-01T10:{m:02}:{s:02}Z");
    let (me, agent) = (
        ("Test Author", "author@example.com"),
        ("Claude", "noreply@anthropic.com"),
    );
    // (who wrote the commit the session names, who wrote the README's, whether that one is
    // the session's); the test repository's committer is always "Test Committer".
    for (named_by, readme_by, its_own) in [
        (me, me, true),
        // The same developer on another machine.
        (me, ("test author ", "author@laptop.example"), true),
        (me, ("A Teammate", "teammate@example.com"), false),
        // An agent that commits as an author of its own, for the developer who commits.
        (agent, ("Test Committer", "committer@example.com"), true),
        (agent, ("A Teammate", "teammate@example.com"), false),
    ] {
        let repo = TestRepo::new();
        repo.commit_at("other.txt", "x\n", "older work", "2026-01-01T09:00:00Z");
        let commit_as = |(name, email): (&str, &str), file: &str, text: &str, date: &str| {
            std::fs::write(repo.root.join(file), text).unwrap();
            repo.git(&["add", file]);
            let vars = [
                ("GIT_AUTHOR_NAME", name),
                ("GIT_AUTHOR_EMAIL", email),
                ("GIT_AUTHOR_DATE", date),
                ("GIT_COMMITTER_DATE", date),
            ];
            repo.git_in(&repo.root, &["commit", "-q", "-m", file], &vars);
            repo.git(&["rev-parse", "HEAD"])
        };
        // The session names its first commit: whoever made that one ran the session.
        let cache = commit_as(named_by, "cache.py", "ttl\n", &at(6, 0));
        let commit = serde_json::json!({"type": "tool_use", "id": "c1", "name": "Bash",
            "input": {"command": "git commit -qam cache"}});
        let named = format!("[main {}] cache\n 1 file changed", &cache[..7]);
        let look = "The README says nothing of caching yet.";
        let content = [
            cache_turn(&repo),
            say("m9", &at(6, 0), serde_json::json!([commit])),
            bash_result("c1", &named, &at(6, 10)),
            edit_turn(&repo, 2, "Document it", 10, look, "README.md"),
            prompt("p3", "thanks", &at(12, 0)),
        ]
        .concat();
        let transcript = repo.home.join("s-link.jsonl");
        std::fs::write(&transcript, content).unwrap();
        // The README committed by hand while the session runs on.
        let readme = commit_as(readme_by, "README.md", "cache\n", &at(11, 0));
        repo.extract(&transcript);
        let case = format!("{named_by:?} then {readme_by:?}");
        assert_eq!(link_of(&repo, &cache)["signal"], "named", "{case}");
        let events = notes::read(&store(&repo), &readme).unwrap();
        assert_eq!(!events.is_empty(), its_own, "{case}: {events:#?}");
        if its_own {
            assert_eq!(link_of(&repo, &readme)["signal"], "time", "{case}");
        }
    }
}

#[test]
fn a_commit_a_teammates_session_holds_by_its_lines_is_not_taken_by_time() {
    // Two sessions side by side, 10:00 to 10:08: `s-link` writes the TTL map (its lines),
    // `s-other` edits the same file at 10:03 (no line of it committed). The commit of 10:05
    // holds `s-link`'s lines, and falls in `s-other`'s hours and files too.
    let edits = |repo: &TestRepo, session: &str, minute: u32| {
        let turn = edit_turn(
            repo,
            1,
            "Tidy the cache",
            minute,
            "Renaming a field.",
            "src/ttl.rs",
        );
        let text = turn + &prompt("p2", "thanks", "2026-01-01T10:08:00Z");
        text.replace("s-link", session)
    };
    let sessions_on = |repo: &TestRepo, commit: &str| -> Vec<(String, String)> {
        let mut found: Vec<(String, String)> = notes::read(&store(repo), commit)
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == Kind::Session)
            .map(|e| {
                let link = serde_json::to_value(e.link).unwrap();
                (e.session_id, link["signal"].as_str().unwrap().to_owned())
            })
            .collect();
        found.sort();
        found
    };
    let (by_lines, by_time) = (("s-link", "content"), ("s-other", "time"));
    // (where each session ran; whether `s-link` writes lines the commit holds, or only edits
    // the file at 10:02 as `s-other` does; which transcripts each run reads, in turn; the
    // sessions the commit holds after)
    type Case<'a> = (
        (&'a str, &'a str),
        bool,
        &'a [&'a [&'a str]],
        Vec<(&'a str, &'a str)>,
    );
    let (ana, ben, both) = (
        "/Users/ana/app",
        "/home/ben/app",
        &[&["a-other", "s-link"][..]],
    );
    let cases: [Case<'_>; 8] = [
        // A teammate's session, read first in the same run (by path).
        ((ana, ben), true, both, vec![by_lines]),
        // Read after the commit was linked to `s-link`.
        (
            (ana, ben),
            true,
            &[&["s-link"], &["a-other"]],
            vec![by_lines],
        ),
        // As Windows writes the folder.
        (("C:\\Users\\Ana\\app", ben), true, both, vec![by_lines]),
        // Alone, it takes the commit by its hours and files.
        ((ana, ben), true, &[&["a-other"]], vec![by_time]),
        // A teammate's session that took the commit by time alone leaves it to others too.
        ((ana, ben), false, both, vec![("s-link", "time"), by_time]),
        // The same developer's two sessions may share a commit: one committed what both wrote.
        ((ana, "/home/Ana/app"), true, both, vec![by_lines, by_time]),
        // Whose session either was is not known.
        ((ana, "/srv/app"), true, both, vec![by_lines, by_time]),
        (("/srv/app", ben), true, both, vec![by_lines, by_time]),
    ];
    for ((linked_in, other_in), lines, runs, expected) in cases {
        let repo = repo_of_a_month_before();
        let path = |name: &str| repo.home.join(format!("{name}.jsonl"));
        let recorded = |text: &str, cwd: &str| {
            let sep = if cwd.contains('\\') { '\\' } else { '/' };
            recorded_in(&repo, text, cwd, cwd, sep)
        };
        let text = match lines {
            true => ttl_session(&repo.root),
            false => edits(&repo, "s-link", 2),
        };
        std::fs::write(path("s-link"), recorded(&text, linked_in)).unwrap();
        std::fs::write(
            path("a-other"),
            recorded(&edits(&repo, "s-other", 3), other_in),
        )
        .unwrap();
        let commit = repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-01T10:05:00Z");
        for run in runs {
            let mut args = vec!["extract".to_owned()];
            for name in *run {
                args.extend(["--transcript".to_owned(), path(name).display().to_string()]);
            }
            repo.ok(&args.iter().map(String::as_str).collect::<Vec<_>>());
        }
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(s, signal)| (s.to_owned(), signal.to_owned()))
            .collect();
        let case = format!("{linked_in} and {other_in}, lines {lines}: {runs:?}");
        assert_eq!(sessions_on(&repo, &commit), expected, "{case}");
    }
}

#[test]
fn a_commit_long_after_the_session_or_of_other_files_takes_nothing() {
    let repo = TestRepo::new();
    let transcript = repo.home.join("s-link.jsonl");
    let content = [
        cache_turn(&repo),
        prompt("p2", "thanks", "2026-01-01T10:01:00Z"),
    ]
    .concat();
    std::fs::write(&transcript, content).unwrap();
    repo.commit_at("cache.py", "ttl\n", "next day", "2026-01-02T10:00:00Z");
    repo.commit_at("other.py", "x\n", "same time", "2026-01-01T10:00:30Z");
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 0, "{report:#}");
    assert!(
        repo.git(&["notes", "--ref=agent-context", "list"])
            .is_empty()
    );
    assert_eq!(repo.pending().len(), 3, "decision, write and session wait");
}

#[test]
fn a_commit_named_only_by_git_operation_takes_the_events_before_it() {
    // Claude Code 2.1.330 reports the commit in `toolUseResult.gitOperation`; take away the
    // `[master sha]` output and the full sha, so that only that field names it.
    let repo = TestRepo::new();
    let commit = repo.commit("cache.py", "ttl\n", "Add TTL cache");
    let path = repo.install_transcript(
        "claude-code-2.1.330/ttl-cache-session-then-compact.jsonl",
        "3d06a160-5483-464a-94bc-4a29f10eaa67",
    );
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("[master 1cd1fc1] Add TTL cache\\n", "")
        .replace("1cd1fc187e09849a9f2af1d9371ad5d077e41a7b", "")
        .replace(
            "\"sha\": \"1cd1fc1\"",
            &format!("\"sha\": \"{}\"", &commit[..7]),
        );
    assert!(!text.contains("1cd1fc1") && text.contains("gitOperation"));
    std::fs::write(&path, text).unwrap();
    let report = repo.extract(&path);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    let kinds = kinds_in_note(&repo, &commit);
    assert!(kinds.contains(&"decision".to_owned()), "{kinds:?}");
    assert!(kinds.contains(&"write".to_owned()), "{kinds:?}");
    let events = notes::read(&store(&repo), &commit).unwrap();
    assert!(
        events
            .iter()
            .any(|e| e.origin == Origin::Commit && e.summary == "Add TTL cache")
    );
}

/// `text`, a transcript, as if recorded in `cwd`: each line names it, and the paths of the
/// files edited under this repository's folder are under `root` instead (written with `sep`).
fn recorded_in(repo: &TestRepo, text: &str, cwd: &str, root: &str, sep: char) -> String {
    fn moved(value: &mut serde_json::Value, here: &str, root: &str, sep: char) {
        match value {
            serde_json::Value::String(s) => {
                if let Some(rest) = s.strip_prefix(here) {
                    *s = format!("{root}{sep}{}", rest.replace('/', &sep.to_string()));
                }
            }
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|v| moved(v, here, root, sep));
            }
            serde_json::Value::Object(fields) => {
                fields.values_mut().for_each(|v| moved(v, here, root, sep));
            }
            _ => {}
        }
    }
    let here = format!("{}/", repo.root.display());
    text.lines()
        .map(|l| {
            let mut value: serde_json::Value = serde_json::from_str(l).unwrap();
            moved(&mut value, &here, root, sep);
            value["cwd"] = cwd.into();
            format!("{value}\n")
        })
        .collect()
}

#[test]
fn a_transcript_recorded_on_another_machine_links_by_paths_relative_to_its_root() {
    let at = "2026-01-01T10:05:00Z";
    // (where the session ran, its repository's folder, separator, the path edited, as events
    // name it)
    let cases = [
        (
            "/Users/dev/src/app",
            "/Users/dev/src/app",
            '/',
            "cache.py",
            "cache.py",
        ),
        ("C:\\src\\app", "C:\\src\\app", '\\', "cache.py", "cache.py"),
        // Started in a subfolder: the file there is known at HEAD, so the root is above it.
        (
            "/Users/dev/app/lib",
            "/Users/dev/app",
            '/',
            "lib/util.py",
            "lib/util.py",
        ),
        // A path that climbs back in is cleaned up first.
        (
            "/Users/dev/app",
            "/Users/dev/app",
            '/',
            "lib/../cache.py",
            "cache.py",
        ),
    ];
    for (cwd, root, sep, edited, named) in cases {
        let repo = TestRepo::new();
        repo.commit_at("lib/util.py", "x = 1\n", "start", "2026-01-01T09:00:00Z");
        let text = edit_turn(
            &repo,
            1,
            "Add a cache",
            0,
            "I'll go with a TTL map because entries expire by time.",
            edited,
        ) + &prompt("p2", "thanks", "2026-01-01T10:06:00Z");
        let transcript = repo.home.join("s-link.jsonl");
        std::fs::write(&transcript, recorded_in(&repo, &text, cwd, root, sep)).unwrap();
        let commit = repo.commit_at(named, "ttl\n", "cache", at);
        let report = repo.extract(&transcript);
        assert_eq!(
            report["transcripts"][0]["commits_linked"], 1,
            "{cwd}: {report:#}"
        );
        let events = notes::read(&store(&repo), &commit).unwrap();
        let write = events.iter().find(|e| e.kind == Kind::Write).unwrap();
        assert_eq!(write.files_affected, [named], "{cwd}");
        assert!(events.iter().any(|e| e.kind == Kind::Decision), "{cwd}");
    }
}

/// Lines a session writes to `src/ttl.rs`, distinctive enough to be found again.
pub const TTL: &str = "use std::time::{Duration, Instant};\n\npub struct TtlMap {\n    entries: std::collections::HashMap<String, (Instant, Vec<u8>)>,\n    ttl: Duration,\n}\n\nimpl TtlMap {\n    pub fn expired(&self, at: Instant) -> bool {\n        at.elapsed() >= self.ttl\n    }\n}\n";

/// A repository whose one commit was made a month before the sessions of these tests.
fn repo_of_a_month_before() -> TestRepo {
    let repo = TestRepo::new();
    repo.commit_at("README.md", "hello\n", "first", "2025-12-01T09:00:00Z");
    repo
}

/// A session run in `root` on 2026-01-01 from 10:00 to 10:06 that writes [`TTL`] to
/// `src/ttl.rs` with a decision, and commits nothing itself.
pub fn ttl_session(root: &Path) -> String {
    let at = |m: u32| format!("2026-01-01T10:{m:02}:00Z");
    let write = serde_json::json!({"type": "tool_use", "id": "w1", "name": "Write",
        "input": {"file_path": root.join("src/ttl.rs"), "content": TTL}});
    let lines = [
        prompt("p1", "Add a cache that forgets", &at(0)),
        say(
            "m1",
            &at(1),
            serde_json::json!([
                text("I'll go with a TTL map because entries expire by time."),
                write
            ]),
        ),
        bash_result("w1", "ok", &at(2)),
        prompt("p2", "thanks", &at(6)),
    ];
    run_in(root, &lines.concat())
}

/// The transcript lines of `text`, each recording `root` as the session's folder.
fn run_in(root: &Path, text: &str) -> String {
    text.lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["cwd"] = root.to_str().unwrap().into();
            format!("{v}\n")
        })
        .collect()
}

/// A way to commit a session's work.
type Make<'a> = &'a dyn Fn(&TestRepo) -> String;

/// The session event in `commit`'s note: how the commit was linked.
fn link_of(repo: &TestRepo, commit: &str) -> serde_json::Value {
    let events = notes::read(&store(repo), commit).unwrap();
    let session = events
        .iter()
        .find(|e| e.kind == Kind::Session)
        .unwrap_or_else(|| panic!("{commit}: no session in {events:#?}"));
    serde_json::to_value(session.link).unwrap()
}

#[test]
fn a_commit_holding_the_sessions_lines_is_its_own_whatever_its_dates() {
    let day = |d: u32| format!("2026-01-{d:02}T09:00:00Z");
    // Committed two days later, by hand.
    let late = |repo: &TestRepo| repo.commit_at("src/ttl.rs", TTL, "ttl, at last", &day(3));
    // Committed during the session on a branch, then rebased onto a main that moved, the next
    // day: the commit the session saw is gone.
    let rebased = |repo: &TestRepo| {
        repo.git(&["checkout", "-q", "-b", "topic"]);
        repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-01T10:05:00Z");
        repo.git(&["checkout", "-q", "main"]);
        repo.commit_at("other.txt", "x\n", "meanwhile", &day(2));
        repo.git(&["checkout", "-q", "topic"]);
        repo.git_at(&["rebase", "-q", "main"], &day(2));
        repo.git(&["rev-parse", "HEAD"])
    };
    // Amended by hand the next day, with more lines: its author date stays in the session.
    let amended = |repo: &TestRepo| {
        repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-01T10:05:00Z");
        std::fs::write(repo.root.join("src/ttl.rs"), format!("{TTL}// reviewed\n")).unwrap();
        repo.git(&["add", "src/ttl.rs"]);
        repo.git_in(
            &repo.root,
            &["commit", "-q", "--amend", "--no-edit"],
            &[("GIT_COMMITTER_DATE", &day(2))],
        );
        repo.git(&["rev-parse", "HEAD"])
    };
    let cases: [(&str, Make<'_>); 3] = [
        ("late", &late),
        ("rebased", &rebased),
        ("amended", &amended),
    ];
    for (what, make) in cases {
        let repo = repo_of_a_month_before();
        let transcript = repo.home.join("s-link.jsonl");
        std::fs::write(&transcript, ttl_session(&repo.root)).unwrap();
        let commit = make(&repo);
        let report = repo.extract(&transcript);
        assert_eq!(
            report["transcripts"][0]["commits_linked"], 1,
            "{what}: {report:#}"
        );
        assert_eq!(
            kinds_in_note(&repo, &commit),
            ["decision", "session", "write"],
            "{what}"
        );
        assert_eq!(link_of(&repo, &commit)["signal"], "content", "{what}");
        let status = repo.json(&["status"]);
        assert_eq!(status["links"], serde_json::json!({"content": 1}), "{what}");
        // The note keeps a sample of the write's lines, and no more.
        let write = notes::read(&store(&repo), &commit)
            .unwrap()
            .into_iter()
            .find(|e| e.kind == Kind::Write)
            .unwrap();
        assert!(!write.lines.is_empty() && write.lines.len() <= 24, "{what}");
    }
}

/// A session run in `root` as [`ttl_session`], whose subagent `a1` writes [`TTL`]: the
/// subagent's messages as Claude Code up to 2.1.4x mirrors them in the main transcript
/// (`progress` entries of `agent_progress`), and as its own transcript holds them.
fn subagent_session(root: &Path) -> (String, String) {
    let at = |m: u32, s: u32| format!("2026-01-01T10:{m:02}:{s:02}Z");
    let task = serde_json::json!({"type": "tool_use", "id": "t1", "name": "Task",
        "input": {"description": "Write the cache", "prompt": "Write a TTL map in src/ttl.rs"}});
    let write = serde_json::json!({"type": "tool_use", "id": "w1", "name": "Write",
        "input": {"file_path": root.join("src/ttl.rs"), "content": TTL}});
    let messages = [
        serde_json::json!({"type": "user", "uuid": "a1-p", "timestamp": at(1, 10),
            "message": {"role": "user", "content": [text("Write src/ttl.rs. I chose a TTL map over an LRU because entries expire by time.")]}}),
        serde_json::json!({"type": "assistant", "uuid": "a1-m", "timestamp": at(1, 20),
            "message": {"id": "msg-a1", "model": "claude-test", "role": "assistant",
                "content": [write]}}),
        serde_json::json!({"type": "user", "uuid": "a1-r", "timestamp": at(1, 30),
            "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "w1",
                "content": "File created successfully"}]}}),
    ];
    let mirrored: String = messages
        .iter()
        .enumerate()
        .map(|(n, m)| {
            line(serde_json::json!({"type": "progress", "uuid": format!("g{n}"),
                "sessionId": "s-link", "timestamp": m["timestamp"], "toolUseID": format!("agent_{n}"),
                "parentToolUseID": "t1", "data": {"type": "agent_progress", "agentId": "a1",
                "prompt": "Write a TTL map in src/ttl.rs", "normalizedMessages": [], "message": m}}))
        })
        .collect();
    let own: String = messages
        .iter()
        .map(|m| {
            let mut m = m.clone();
            m["isSidechain"] = true.into();
            m["agentId"] = "a1".into();
            m["sessionId"] = "s-link".into();
            line(m)
        })
        .collect();
    let main = [
        prompt("p1", "Add a cache that forgets", &at(0, 0)),
        say("m1", &at(1, 0), serde_json::json!([task])),
        mirrored,
        bash_result("t1", "Done: src/ttl.rs holds the map.", &at(2, 0)),
        prompt("p2", "thanks", &at(6, 0)),
    ]
    .concat();
    (run_in(root, &main), run_in(root, &own))
}

/// A repository where [`subagent_session`]'s work was committed by hand two days later (only
/// the subagent's lines tell whose it is), with the session's main transcript written alone
/// (as a teammate shares it or a tool keeps it): the repository, the commit, the main
/// transcript's path, and the text of the subagent's own transcript.
fn subagent_work_committed() -> (TestRepo, String, PathBuf, String) {
    let repo = repo_of_a_month_before();
    let commit = repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-03T09:00:00Z");
    let (main, own) = subagent_session(&repo.root);
    let transcript = repo.home.join("s-link.jsonl");
    std::fs::write(&transcript, main).unwrap();
    (repo, commit, transcript, own)
}

#[test]
fn a_subagents_write_mirrored_in_the_main_transcript_links_the_commit_holding_it() {
    let (repo, commit, transcript, _) = subagent_work_committed();
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert_eq!(link_of(&repo, &commit)["signal"], "content");
    let events = notes::read(&store(&repo), &commit).unwrap();
    let write = events.iter().find(|e| e.kind == Kind::Write).unwrap();
    assert_eq!(write.files_affected, ["src/ttl.rs"]);
    assert_eq!(write.agent_id.as_deref(), Some("a1"));
    // The main thread's instructions to it are no decision of the user's.
    assert!(
        events.iter().all(|e| e.kind != Kind::Decision),
        "{events:#?}"
    );
}

#[test]
fn subagents_run_side_by_side_each_keep_their_own_work() {
    let repo = repo_of_a_month_before();
    let commit = repo.commit_at("src/one.rs", TTL, "one", "2026-01-01T10:01:30Z");
    let at = |s: u32| format!("2026-01-01T10:01:{s:02}Z");
    let mirrored = |n: u32, agent: &str, message: serde_json::Value| {
        line(
            serde_json::json!({"type": "progress", "uuid": format!("g{n}"), "sessionId": "s-link",
            "timestamp": at(n), "parentToolUseID": "t1", "data": {"type": "agent_progress",
            "agentId": agent, "normalizedMessages": [], "message": message}}),
        )
    };
    let asked = |n: u32, task: &str| {
        serde_json::json!({"type": "user", "uuid": format!("q{n}"), "timestamp": at(n),
            "message": {"role": "user", "content": [{"type": "text", "text": task}]}})
    };
    let call = |n: u32, name: &str, input: serde_json::Value| {
        serde_json::json!({"type": "assistant", "uuid": format!("m{n}"), "timestamp": at(n),
            "message": {"id": format!("msg-{n}"), "model": "claude-test", "role": "assistant",
            "content": [{"type": "tool_use", "id": format!("c{n}"), "name": name, "input": input}]}})
    };
    let write = |n: u32, file: &str| {
        call(
            n,
            "Write",
            serde_json::json!({"file_path": repo.root.join(file), "content": TTL}),
        )
    };
    let result = |n: u32, of: u32, out: &str, error: bool| {
        serde_json::json!({"type": "user", "uuid": format!("r{n}"), "timestamp": at(n),
            "message": {"role": "user", "content": [{"type": "tool_result",
                "tool_use_id": format!("c{of}"), "content": out, "is_error": error}]}})
    };
    let named = format!("[main {}] one\n 1 file changed", &commit[..7]);
    // Each result comes after the other subagent's next message.
    let transcript = [
        prompt("p1", "Add two caches", "2026-01-01T10:00:00Z"),
        mirrored(1, "a1", asked(1, "Write src/one.rs")),
        mirrored(2, "a1", write(2, "src/one.rs")),
        mirrored(3, "a2", asked(3, "Write src/two.rs")),
        mirrored(4, "a2", write(4, "src/two.rs")),
        mirrored(5, "a1", result(5, 2, "ok", false)),
        mirrored(
            6,
            "a1",
            call(
                6,
                "Bash",
                serde_json::json!({"command": "git commit -qam one"}),
            ),
        ),
        mirrored(7, "a2", result(7, 4, "ok", false)),
        mirrored(8, "a2", write(8, "src/three.rs")),
        mirrored(9, "a1", result(9, 6, &named, false)),
        mirrored(10, "a2", result(10, 8, "EACCES", true)),
        prompt("p2", "thanks", "2026-01-01T10:06:00Z"),
    ]
    .concat();
    let path = repo.home.join("s-link.jsonl");
    std::fs::write(&path, transcript).unwrap();
    let report = repo.extract(&path);
    // a1's commit, named by a result that came after a2's message.
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert_eq!(link_of(&repo, &commit)["signal"], "named");
    let stored: Vec<Event> = (notes::read(&store(&repo), &commit).unwrap().into_iter())
        .chain(
            repo.pending()
                .into_iter()
                .map(|e| serde_json::from_value(e).unwrap()),
        )
        .collect();
    let mut writes: Vec<(String, String, String)> = (stored.iter())
        .filter(|e| e.kind == Kind::Write)
        .map(|e| {
            let agent = e.agent_id.clone().unwrap_or_default();
            (e.files_affected[0].clone(), agent, e.prompt_context.clone())
        })
        .collect();
    writes.sort();
    // One write each, told as its own subagent's with its task; the write that failed, none.
    assert_eq!(
        writes,
        [
            ("src/one.rs".into(), "a1".into(), "Write src/one.rs".into()),
            ("src/two.rs".into(), "a2".into(), "Write src/two.rs".into())
        ]
    );
}

#[test]
fn a_subagent_with_a_transcript_of_its_own_is_read_once() {
    let (repo, commit, transcript, own) = subagent_work_committed();
    let subagents = repo.home.join("s-link/subagents");
    std::fs::create_dir_all(&subagents).unwrap();
    std::fs::write(subagents.join("agent-a1.jsonl"), own).unwrap();
    // The main transcript read first: its mirror is left to the subagent's own transcript.
    let main_only = repo.extract(&transcript);
    assert_eq!(
        main_only["transcripts"][0]["commits_linked"], 0,
        "{main_only:#}"
    );
    let report = repo.json(&[
        "extract",
        "--transcript",
        subagents.join("agent-a1.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    let writes: Vec<Event> = notes::read(&store(&repo), &commit)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == Kind::Write)
        .collect();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    repo.assert_each_event_once();
}

#[test]
fn a_file_written_from_a_heredoc_links_the_commit_holding_it() {
    let repo = repo_of_a_month_before();
    let commit = repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-03T09:00:00Z");
    let at = |m: u32| format!("2026-01-01T10:{m:02}:00Z");
    let bash = |id: &str, command: String| {
        serde_json::json!({"type": "tool_use", "id": id, "name": "Bash",
            "input": {"command": command, "description": "Write the file"}})
    };
    let transcript = [
        prompt("p1", "Add a cache that forgets", &at(0)),
        say(
            "m1",
            &at(1),
            serde_json::json!([
                // A scratch file outside the repository, then the file itself.
                bash(
                    "b0",
                    "cat > /tmp/scratch.rs <<'EOF'\nfn scratch() {}\nEOF".into()
                ),
                bash("b1", format!("cat > src/ttl.rs <<'EOF'\n{TTL}EOF")),
            ]),
        ),
        bash_result("b0", "", &at(2)),
        bash_result("b1", "", &at(2)),
        prompt("p2", "thanks", &at(6)),
    ]
    .concat();
    let path = repo.home.join("s-link.jsonl");
    std::fs::write(&path, run_in(&repo.root, &transcript)).unwrap();
    let report = repo.extract(&path);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert_eq!(link_of(&repo, &commit)["signal"], "content");
    let writes: Vec<Event> = notes::read(&store(&repo), &commit)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == Kind::Write)
        .collect();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0].files_affected, ["src/ttl.rs"]);
    assert!(!format!("{writes:?}").contains("scratch"), "{writes:#?}");
}

#[test]
fn a_commit_made_before_the_session_wrote_its_lines_is_not_its_own() {
    // The session writes src/ttl.rs at 10:01. A commit holding the same lines, committed half
    // an hour before, was made by someone else (or another session that wrote them first);
    // one committed minutes before is this session's, under a clock a little off.
    for (committed, its_own) in [
        ("2026-01-01T09:30:00Z", false),
        ("2026-01-01T09:55:00Z", true),
    ] {
        let repo = repo_of_a_month_before();
        let commit = repo.commit_at("src/ttl.rs", TTL, "ttl", committed);
        let transcript = repo.home.join("s-link.jsonl");
        std::fs::write(&transcript, ttl_session(&repo.root)).unwrap();
        let report = repo.extract(&transcript);
        assert_eq!(
            report["transcripts"][0]["commits_linked"],
            u32::from(its_own),
            "{committed}: {report:#}"
        );
        assert_eq!(
            notes::read(&store(&repo), &commit).unwrap().is_empty(),
            !its_own,
            "{committed}"
        );
    }
}

#[test]
fn a_session_in_a_linked_worktree_is_read_and_linked_from_the_main_one() {
    let repo = repo_of_a_month_before();
    let worktree = repo.outside().join("feature-wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        worktree.to_str().unwrap(),
    ]);
    let folder = repo.project_dir_for(&worktree);
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("s-link.jsonl"), ttl_session(&worktree)).unwrap();
    // Committed there, by hand, the next morning.
    std::fs::create_dir_all(worktree.join("src")).unwrap();
    std::fs::write(worktree.join("src/ttl.rs"), TTL).unwrap();
    repo.git_in(&worktree, &["add", "src/ttl.rs"], &[]);
    let date = "2026-01-02T09:00:00Z";
    repo.git_in(
        &worktree,
        &["commit", "-q", "-m", "ttl"],
        &[("GIT_AUTHOR_DATE", date), ("GIT_COMMITTER_DATE", date)],
    );
    let commit = repo.git_in(&worktree, &["rev-parse", "HEAD"], &[]);
    // `extract` in the main worktree finds the session and the commit on the other branch.
    let report = repo.json(&["extract"]);
    assert_eq!(report["events_linked"], 2, "{report:#}");
    assert_eq!(
        kinds_in_note(&repo, &commit),
        ["decision", "session", "write"]
    );
    let write = notes::read(&store(&repo), &commit)
        .unwrap()
        .into_iter()
        .find(|e| e.kind == Kind::Write)
        .unwrap();
    assert_eq!(write.files_affected, ["src/ttl.rs"]);
}

#[test]
fn a_commit_the_session_named_then_amended_is_found_by_its_subject() {
    let repo = repo_of_a_month_before();
    let named = repo.commit_at(
        "cache.py",
        "ttl\n",
        "feat: cap the cache",
        "2026-01-01T10:01:00Z",
    );
    let transcript = repo.home.join("s-link.jsonl");
    let content = [
        cache_turn(&repo),
        say("m9", "2026-01-01T10:00:30Z", serde_json::json!([{"type": "tool_use", "id": "b9", "name": "Bash", "input": {"command": "git commit -am 'feat: cap the cache'"}}])),
        bash_result("b9", &format!("[main {}] feat: cap the cache\n 1 file changed", &named[..7]), "2026-01-01T10:01:00Z"),
        prompt("p2", "thanks", "2026-01-01T10:02:00Z"),
    ]
    .concat();
    std::fs::write(&transcript, content).unwrap();
    // Amended by hand the next day: the commit the session named is gone from every branch.
    std::fs::write(repo.root.join("cache.py"), "ttl capped\n").unwrap();
    repo.git(&["add", "cache.py"]);
    repo.git_in(
        &repo.root,
        &["commit", "-q", "--amend", "--no-edit"],
        &[("GIT_COMMITTER_DATE", "2026-01-02T09:00:00Z")],
    );
    let amended = repo.git(&["rev-parse", "HEAD"]);
    repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    repo.git(&["gc", "-q", "--prune=now"]);
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 1, "{report:#}");
    assert_eq!(
        kinds_in_note(&repo, &amended),
        ["decision", "feature", "session", "write"]
    );
    assert_eq!(link_of(&repo, &amended)["signal"], "message");
}

/// Lines of a second file, as distinctive as [`TTL`].
const LRU: &str = "pub struct Lru {\n    order: std::collections::VecDeque<String>,\n    capacity: usize,\n}\n\nimpl Lru {\n    pub fn touch(&mut self, key: &str) {\n        self.order.retain(|k| k != key);\n        self.order.push_back(key.to_owned());\n    }\n}\n";

#[test]
fn two_commits_made_later_each_take_the_write_they_hold() {
    let repo = repo_of_a_month_before();
    let at = |m: u32| format!("2026-01-01T10:{m:02}:00Z");
    // Turn `n` (from 1) at 10:0(3n-3): a prompt, an answer that writes `file`, its result.
    let turn = |n: u32, ask: &str, answer: &str, file: &str, content: &str| {
        let m = 3 * n - 3;
        let call = format!("w{n}");
        let write = serde_json::json!({"type": "tool_use", "id": call, "name": "Write",
            "input": {"file_path": repo.root.join(file), "content": content}});
        [
            prompt(&format!("p{n}"), ask, &at(m)),
            say(
                &format!("m{n}"),
                &at(m + 1),
                serde_json::json!([text(answer), write]),
            ),
            bash_result(&call, "ok", &at(m + 2)),
        ]
        .concat()
    };
    let content = [
        turn(
            1,
            "Add a cache that forgets",
            "I'll go with a TTL map because entries expire by time.",
            "src/ttl.rs",
            TTL,
        ),
        turn(
            2,
            "And one that is bounded",
            "I'll go with an LRU because the keys are bounded.",
            "src/lru.rs",
            LRU,
        ),
        prompt("p3", "thanks", &at(6)),
    ]
    .concat();
    let transcript = repo.home.join("s-link.jsonl");
    std::fs::write(&transcript, content).unwrap();
    // Committed by hand, one a day later, the other two days later.
    let ttl = repo.commit_at("src/ttl.rs", TTL, "ttl", "2026-01-02T09:00:00Z");
    let lru = repo.commit_at("src/lru.rs", LRU, "lru", "2026-01-03T09:00:00Z");
    repo.extract(&transcript);
    let written = |commit: &str| -> Vec<Vec<String>> {
        notes::read(&store(&repo), commit)
            .unwrap()
            .into_iter()
            .filter(|e| e.kind == Kind::Write)
            .map(|e| e.files_affected)
            .collect()
    };
    assert_eq!(written(&ttl), [["src/ttl.rs"]]);
    assert_eq!(written(&lru), [["src/lru.rs"]]);
    assert_eq!(kinds_in_note(&repo, &lru), ["decision", "session", "write"]);
}

#[test]
fn a_commit_adding_one_line_of_a_write_is_not_the_sessions() {
    let repo = repo_of_a_month_before();
    let transcript = repo.home.join("s-link.jsonl");
    std::fs::write(&transcript, ttl_session(&repo.root)).unwrap();
    // Days later, on another branch, a commit that shares one line with the write.
    repo.git(&["checkout", "-q", "-b", "other"]);
    let other = repo.commit_at(
        "src/ttl.rs",
        "pub struct TtlMap {\n}\n",
        "unrelated",
        "2026-01-09T09:00:00Z",
    );
    repo.git(&["checkout", "-q", "main"]);
    let report = repo.extract(&transcript);
    assert_eq!(report["transcripts"][0]["commits_linked"], 0, "{report:#}");
    assert!(kinds_in_note(&repo, &other).is_empty());
}
