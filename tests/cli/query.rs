//! `query` and the index behind it, on the scenario of `scenario.rs`: retrieval quality for
//! every backend, staleness and supersession, the index against a rebuild, and `why` by the
//! index against `why --exact` (git's blame).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use serde_json::Value;

use crate::claude_hooks::ask_in;
use crate::repo::{self, TestRepo};
use crate::scenario::{self, Scenario};

/// A prompt, the files given with it, and the events it must return.
struct Case {
    prompt: &'static str,
    files: &'static [&'static str],
    must: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        prompt: "Why does src/cache.rs use a TTL instead of an LRU?",
        files: &[],
        must: &["cache.ttl", "cache.lru"],
    },
    Case {
        prompt: "Can we switch the response cache to an LRU eviction policy?",
        files: &[],
        must: &["cache.lru"],
    },
    Case {
        prompt: "Add retries for POST requests in the http client",
        files: &[],
        must: &["retry.post"],
    },
    Case {
        prompt: "Change the backoff in retry.rs to a fixed delay",
        files: &[],
        must: &["retry.backoff"],
    },
    Case {
        prompt: "Should the configuration be YAML instead?",
        files: &[],
        must: &["config.yaml"],
    },
    Case {
        prompt: "Add an environment variable override for the listen address in config.rs",
        files: &[],
        must: &["config.toml"],
    },
    Case {
        prompt: "Increase the database connection pool size",
        files: &[],
        must: &["pool.cpu"],
    },
    Case {
        prompt: "Why is the pool sized per core in src/db/pool.rs?",
        files: &[],
        must: &["pool.cpu", "pool.unbounded"],
    },
    Case {
        prompt: "Tokens expire too early, what does the refresher do?",
        files: &[],
        must: &["auth.refresh"],
    },
    Case {
        prompt: "Requests fail with 401 after a deploy",
        files: &[],
        must: &["auth.401"],
    },
    Case {
        prompt: "How big can the response cache grow?",
        files: &[],
        must: &["cache.cap"],
    },
    Case {
        prompt: "Is there a background thread sweeping expired cache entries?",
        files: &[],
        must: &["cache.sweep"],
    },
    Case {
        prompt: "Remove the jitter from the retry backoff",
        files: &[],
        must: &["retry.backoff"],
    },
    Case {
        prompt: "What should I know before editing this file?",
        files: &["src/auth/token.rs"],
        must: &["auth.refresh"],
    },
    Case {
        prompt: "What format do the logs use?",
        files: &[],
        must: &["log.logfmt"],
    },
    Case {
        prompt: "parse_duration rejects 1h, fix it",
        files: &[],
        must: &["config.duration"],
    },
    Case {
        prompt: "Raise MAX_ATTEMPTS to five",
        files: &["src/http/retry.rs"],
        must: &["retry.attempts"],
    },
];

/// Reasoning that must never be injected on its own: its lines are gone from HEAD, or a later
/// decision superseded it.
const NEVER_ALONE: &[&str] = &["log.json", "pool.fixed"];

fn run_case(s: &Scenario, backend: &str, case: &Case) -> Value {
    let mut args = vec!["query", case.prompt, "--backend", backend];
    if !case.files.is_empty() {
        args.push("--files");
        args.extend(case.files);
    }
    s.repo.json(&args)
}

#[test]
fn every_backend_returns_what_each_prompt_needs_within_the_budget() {
    let s = scenario::build();
    let label_of: BTreeMap<&str, &str> = s.ids.iter().map(|(l, id)| (id.as_str(), *l)).collect();
    for backend in ["file", "session", "decision"] {
        let (mut wanted, mut found, mut returned, mut relevant) = (0, 0, 0, 0);
        let mut by_graph = 0;
        for case in CASES {
            let answer = run_case(&s, backend, case);
            assert!(answer["tokens"].as_u64().unwrap() <= 2000, "{answer}");
            let items = answer["items"].as_array().unwrap();
            let got: BTreeSet<&str> = items
                .iter()
                .map(|i| {
                    label_of
                        .get(i["id"].as_str().unwrap())
                        .copied()
                        .unwrap_or("?")
                })
                .collect();
            for label in NEVER_ALONE {
                assert!(
                    !got.contains(label),
                    "{backend}: {label:?} injected for {:?}: {got:?}",
                    case.prompt
                );
            }
            for item in items {
                by_graph += item["found_by"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|f| f == "graph") as usize;
                // Provenance and liveness on every item.
                assert_eq!(item["commit"].as_str().unwrap().len(), 40);
                assert!(!item["session"].as_str().unwrap().is_empty());
                assert_eq!(item["liveness"]["state"], "live", "{item}");
                assert!(
                    answer["text"]
                        .as_str()
                        .unwrap()
                        .contains(&item["id"].as_str().unwrap()[..8])
                );
            }
            let hit = case.must.iter().filter(|m| got.contains(*m)).count();
            if hit < case.must.len() {
                eprintln!(
                    "{backend}: {:?} missed {:?}; got {got:?}",
                    case.prompt, case.must
                );
            }
            wanted += case.must.len();
            found += hit;
            returned += items.len();
            relevant += hit;
        }
        let recall = found as f64 / wanted as f64;
        let precision = relevant as f64 / returned.max(1) as f64;
        println!(
            "{backend}: recall {recall:.2} ({found}/{wanted}), precision {precision:.2} ({relevant}/{returned}) over {} prompts",
            CASES.len()
        );
        assert!(recall >= 0.9, "{backend}: recall {recall:.2}");
        // Related reasoning comes along, but not everything.
        assert!(precision >= 0.3, "{backend}: precision {precision:.2}");
        assert!(by_graph > 0, "{backend}: the graph found nothing");
    }
}

#[test]
fn superseded_and_stale_reasoning_is_marked_and_kept_out() {
    let s = scenario::build();
    // The pool: the later decision, with the one it superseded under it.
    let answer = s.repo.json(&[
        "query",
        "Why ten connections in the pool?",
        "--files",
        "src/db/pool.rs",
    ]);
    let items = answer["items"].as_array().unwrap();
    let cpu = items
        .iter()
        .find(|i| i["id"] == s.ids["pool.cpu"].as_str())
        .unwrap_or_else(|| panic!("{answer}"));
    assert_eq!(cpu["supersedes"][0]["id"], s.ids["pool.fixed"].as_str());
    assert!(answer["left_out"]["superseded"].as_u64().unwrap() >= 1);
    assert!(
        answer["text"].as_str().unwrap().contains(
            "replaced an earlier note: \"Fix the connection pool size at ten connections for now\""
        ),
        "{}",
        answer["text"]
    );

    // The logs: JSON lines are gone from HEAD; asked about JSON logs, logfmt is what is live.
    let answer = s.repo.json(&[
        "query",
        "Write the logs as JSON objects",
        "--files",
        "src/log.rs",
    ]);
    let ids: Vec<&str> = answer["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&s.ids["log.logfmt"].as_str()), "{answer}");
    assert!(!ids.contains(&s.ids["log.json"].as_str()), "{answer}");
    assert!(
        answer["left_out"]["stale"].as_u64().unwrap() >= 1,
        "{answer}"
    );

    // With nothing live to say, stale reasoning is given, marked stale.
    s.repo.git(&["rm", "-q", "src/log.rs"]);
    s.repo.git(&["commit", "-q", "-m", "drop logging"]);
    let answer = s
        .repo
        .json(&["query", "one JSON object per line for the log shipper"]);
    let first = &answer["items"][0];
    assert_eq!(first["liveness"]["state"], "stale", "{answer}");
    assert!(answer["text"].as_str().unwrap().contains("stale"));
}

#[test]
fn the_budget_is_kept_and_the_human_output_is_the_rendered_context() {
    let s = scenario::build();
    let small = s.repo.json(&[
        "query",
        "cache retry pool config token logs",
        "--budget",
        "120",
    ]);
    assert!(small["tokens"].as_u64().unwrap() <= 120, "{small}");
    assert!(
        small["left_out"]["over_budget"].as_u64().unwrap() > 0,
        "{small}"
    );
    let text = s.repo.ok(&[
        "query",
        "Why does src/cache.rs use a TTL instead of an LRU?",
    ]);
    assert!(
        text.starts_with("Notes from earlier sessions in this repository (git agent-context)."),
        "{text}"
    );
    assert!(text.contains("- decided: \"Use a TTL map for the response cache"));
    assert!(text.contains("not taken: \"an LRU cache\""));
    assert_eq!(
        s.repo.ok(&["query", "quantum chromodynamics"]),
        "no recorded reasoning bears on this prompt\n"
    );
    // A budget too small for any item says so.
    let tiny = s.repo.ok(&[
        "query",
        "Why does src/cache.rs use a TTL instead of an LRU?",
        "--budget",
        "10",
    ]);
    assert!(
        tiny.ends_with(" bear on this prompt, none within 10 tokens: raise --budget\n"),
        "{tiny}"
    );
    let out = s.repo.run(&["query", "  "]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_same_words_recorded_on_two_commits_are_given_once() {
    let s = scenario::build();
    // A plan pasted into two sessions: on two files, neither replacing the other.
    let said = "Connections and cache entries are taken per request, never held across awaits";
    for (session, file) in [("s7-a", "src/db/pool.rs"), ("s8-b", "src/cache.rs")] {
        let commit = s.repo.git(&["log", "-1", "--format=%H", "--", file]);
        let commit = commit.trim();
        let note = s
            .repo
            .git(&["notes", "--ref=agent-context", "show", commit]);
        let at = "2026-07-01T09:00:00Z";
        let event = scenario::event((session, "m1", "decision"), said, at, "", &[file], &[]);
        scenario::add_note(&s.repo, commit, &format!("{}\n{event}", note.trim_end()));
    }
    s.repo.ok(&["rebuild"]);
    let answer = s.repo.json(&[
        "query",
        "How do src/db/pool.rs and src/cache.rs hold connections?",
    ]);
    let items = answer["items"].as_array().unwrap();
    let given = items.iter().filter(|i| i["summary"] == said).count();
    assert_eq!(given, 1, "{answer:#}");
    assert_eq!(answer["left_out"]["repeated"], 1, "{answer:#}");
    // A session given one is not given its twin later.
    let ask = |prompt: &str| ask_in(&s.repo, "s9-twice", prompt).unwrap_or_default();
    assert!(ask("How does src/db/pool.rs hold connections?").contains(said));
    assert!(!ask("And src/cache.rs?").contains(said));
}

/// The session backend follows a strong keyword match to its session, whatever the kind of the
/// event matched: an exploration's words lead to what its session decided.
#[test]
fn the_session_backend_follows_a_match_on_any_reasoning_to_its_session() {
    let s = scenario::build();
    let file = "src/zeta.rs";
    let commit = s.repo.commit(file, "pub fn retry_zeta() {}\n", "Add zeta");
    let at = "2026-07-03T10:00:00Z";
    let looked = "Looked at how quaternionic_zanzibar handles its retries";
    let decided = "Retry twice with a jittered delay, then give up";
    let note = [
        scenario::event(
            ("s-zeta", "m1", "exploration"),
            looked,
            at,
            "",
            &[file],
            &[],
        ),
        scenario::event(("s-zeta", "m2", "decision"), decided, at, "", &[file], &[]),
        scenario::event(
            ("s-zeta", "m0", "session"),
            "Add zeta",
            at,
            "",
            &[file],
            &[],
        ),
    ];
    let note: Vec<String> = note.iter().map(Value::to_string).collect();
    scenario::add_note(&s.repo, &commit, &note.join("\n"));
    s.repo.ok(&["rebuild"]);
    let answer = s.repo.json(&[
        "query",
        "What did we settle about quaternionic_zanzibar?",
        "--backend",
        "session",
    ]);
    let items = answer["items"].as_array().unwrap();
    assert!(items.iter().any(|i| i["summary"] == decided), "{answer:#}");
}

#[test]
fn a_path_on_another_machine_names_the_file_it_ends_with() {
    let s = scenario::build();
    for (said, path) in [
        ("/home/ann/work/service/CHANGELOG.md", "CHANGELOG.md"),
        ("C:/Users/ann/service/src/db/pool.rs:3", "src/db/pool.rs"),
        (
            "https://github.com/ann/service/blob/main/src/cache.rs#L2-L4",
            "src/cache.rs",
        ),
    ] {
        let answer = s.repo.json(&["query", &format!("What about {said}?")]);
        assert_eq!(
            answer["hinted_files"][0]["path"], path,
            "{said}: {answer:#}"
        );
    }
}

#[test]
fn files_changed_in_the_working_tree_are_hints() {
    let s = scenario::build();
    fs::write(s.repo.root.join("src/auth/token.rs"), "changed\n").unwrap();
    let answer = s.repo.json(&["query", "what next?"]);
    assert_eq!(answer["hinted_files"][0]["path"], "src/auth/token.rs");
    assert_eq!(answer["hinted_files"][0]["hint"], "changed");
}

#[test]
fn the_index_kept_up_incrementally_equals_a_rebuild() {
    let s = scenario::build();
    let dir = s.repo.root.join(".git/agent-context/index");
    // Notes change after the index was built: one added by git, one removed, one edited.
    let extra = s.repo.commit_at(
        "src/cache.rs",
        "pub const DEFAULT_TTL_SECONDS: u64 = 300;\n",
        "cache: default TTL",
        "2026-07-01T09:00:00Z",
    );
    let note = r#"{"kind":"decision","summary":"Default TTL of five minutes","id":"0123456789abcdef0123456789abcdef","schema_version":1,"session_id":"s7","timestamp":"2026-07-01T08:59:00Z","origin":"text","source":"m1","files_affected":["src/cache.rs"]}"#;
    scenario::add_note(&s.repo, &extra, note);
    s.repo
        .git(&["notes", "--ref=agent-context", "remove", &s.commits["c16"]]);
    let edited = s
        .repo
        .git(&["notes", "--ref=agent-context", "show", &s.commits["c3"]])
        .replace("exponential backoff", "doubling backoff");
    scenario::add_note(&s.repo, &s.commits["c3"], &edited);
    let answer = s.repo.json(&["query", "doubling backoff"]);
    assert_eq!(answer["items"][0]["id"], s.ids["retry.backoff"].as_str());
    let answer = s.repo.json(&["query", "default TTL five minutes"]);
    assert_eq!(answer["items"][0]["id"], "0123456789abcdef0123456789abcdef");
    let incremental = repo::index_as_a_rebuild_makes_it(&s.repo, &dir);
    assert!(incremental.contains_key("state"));

    // An update cut short (marked in `state`) is made again from nothing by the next reader.
    let state = dir.join("state");
    let text = fs::read_to_string(&state).unwrap();
    fs::write(&state, format!("{text}dirty\n")).unwrap();
    fs::write(dir.join("terms/00.tsv"), "half a li").unwrap();
    let answer = s.repo.json(&["query", "doubling backoff"]);
    assert_eq!(answer["items"][0]["id"], s.ids["retry.backoff"].as_str());
    assert_eq!(incremental, repo::index_files(&dir));
}

#[test]
fn a_note_that_grows_is_appended_to_its_buckets_not_written_again() {
    use std::os::unix::fs::MetadataExt;
    let s = scenario::build();
    let dir = s.repo.root.join(".git/agent-context/index");
    let inodes = || -> BTreeMap<String, u64> {
        repo::files_under(&dir.join("terms"))
            .into_iter()
            .map(|p| (p.display().to_string(), fs::metadata(&p).unwrap().ino()))
            .collect()
    };
    let before = inodes();
    // A later turn adds a decision to a commit that has its note already.
    let grown = s
        .repo
        .git(&["notes", "--ref=agent-context", "show", &s.commits["c3"]]);
    let added = r#"{"kind":"decision","summary":"Jitter the backoff by a tenth","id":"fedcba9876543210fedcba9876543210","schema_version":1,"session_id":"s7","timestamp":"2026-07-01T08:59:00Z","origin":"text","source":"m2","files_affected":["src/http/retry.rs"]}"#;
    scenario::add_note(
        &s.repo,
        &s.commits["c3"],
        &format!("{}\n{added}", grown.trim_end()),
    );
    let answer = s.repo.json(&["query", "jitter the backoff"]);
    assert_eq!(answer["items"][0]["id"], "fedcba9876543210fedcba9876543210");
    let after = inodes();
    let rewritten: Vec<&String> = (before.iter())
        .filter(|(path, ino)| after.get(*path).is_some_and(|now| now != *ino))
        .map(|(path, _)| path)
        .collect();
    assert!(rewritten.is_empty(), "buckets written again: {rewritten:?}");
    repo::index_as_a_rebuild_makes_it(&s.repo, &dir);
}

#[test]
fn an_index_that_does_not_hold_a_changed_notes_old_postings_is_made_again() {
    let s = scenario::build();
    let dir = s.repo.root.join(".git/agent-context/index");
    let c3 = &s.commits["c3"];
    // A posting of c3's note as another version of this program would have written it.
    let posting = format!("exponential\t{c3}\t");
    let (bucket, text) = repo::files_under(&dir.join("terms"))
        .into_iter()
        .map(|p| (p.clone(), fs::read_to_string(&p).unwrap()))
        .find(|(_, text)| text.lines().any(|l| l.starts_with(&posting)))
        .expect("the term has a posting");
    let altered: Vec<String> = text
        .lines()
        .map(|l| match l.starts_with(&posting) {
            true => format!("{l}0"),
            false => l.to_owned(),
        })
        .collect();
    fs::write(&bucket, altered.join("\n") + "\n").unwrap();
    let edited = s
        .repo
        .git(&["notes", "--ref=agent-context", "show", c3])
        .replace("exponential backoff", "doubling backoff");
    scenario::add_note(&s.repo, c3, &edited);
    s.repo.ok(&["query", "doubling backoff"]);
    repo::index_as_a_rebuild_makes_it(&s.repo, &dir);
}

#[test]
fn why_by_the_index_agrees_with_blame() {
    let s = scenario::build();
    // The commits that carry reasoning: those of the sessions.
    let reasoned: BTreeSet<&str> = s
        .commits
        .iter()
        .filter(|(label, _)| label.starts_with('c'))
        .map(|(_, c)| c.as_str())
        .collect();
    let (mut same, mut all) = (0, 0);
    for path in [
        "src/cache.rs",
        "src/http/retry.rs",
        "src/http/client.rs",
        "src/config.rs",
        "src/db/pool.rs",
        "src/auth/token.rs",
        "src/log.rs",
    ] {
        // The commit with reasoning that owns each line, by line number.
        let owners = |extra: &[&str]| -> BTreeMap<u64, String> {
            let mut args = vec!["why", path];
            args.extend(extra);
            let answer = s.repo.json(&args);
            let mut out = BTreeMap::new();
            for c in answer["commits"].as_array().unwrap() {
                for range in c["lines"].as_array().unwrap() {
                    for line in range["start"].as_u64().unwrap()..=range["end"].as_u64().unwrap() {
                        out.insert(line, c["commit"].as_str().unwrap().to_owned());
                    }
                }
            }
            out
        };
        // git's own blame, kept to the commits with reasoning.
        let mut blame: BTreeMap<u64, String> = BTreeMap::new();
        for line in s.repo.git(&["blame", "--porcelain", path]).lines() {
            let mut f = line.split(' ');
            if let (Some(sha), Some(_), Some(at)) = (f.next(), f.next(), f.next())
                && sha.len() == 40
                && reasoned.contains(sha)
            {
                blame.insert(at.parse().unwrap(), sha.to_owned());
            }
        }
        assert!(!blame.is_empty(), "{path}");
        let index = owners(&["--fast"]);
        // Left to choose, a history this short gets git's blame.
        assert_eq!(
            owners(&[]),
            blame,
            "{path}: the default against git's blame"
        );
        assert_eq!(
            owners(&["--exact"]),
            blame,
            "{path}: gix's blame against git's"
        );
        let text = fs::read_to_string(s.repo.root.join(path)).unwrap();
        for (n, line) in text.lines().enumerate() {
            let n = n as u64 + 1;
            all += 1;
            if index.get(&n) == blame.get(&n) {
                same += 1;
                continue;
            }
            // The one deliberate difference: a closing brace left of code that is gone says
            // nothing about it.
            let trimmed = line.trim();
            assert!(
                trimmed.len() < 5 && !index.contains_key(&n),
                "{path}:{n} {line:?}: index {:?}, blame {:?}",
                index.get(&n),
                blame.get(&n)
            );
        }
    }
    println!("why by the index: {same} of {all} lines as git blame gives them");
    assert!(same * 100 >= all * 98, "{same}/{all}");
}

#[test]
fn why_shows_uncommitted_lines_with_the_pending_reasoning_behind_them() {
    let s = scenario::build();
    fs::write(
        s.repo.root.join("src/log.rs"),
        "pub fn event() {}\npub fn flush() {}\n",
    )
    .unwrap();
    let answer = s.repo.json(&["why", "src/log.rs"]);
    assert_eq!(answer["uncommitted"]["lines"], 2, "{answer}");
    let text = s.repo.ok(&["why", "src/log.rs"]);
    assert!(
        text.contains("uncommitted: 2 lines changed in the working tree, by no session this repository knows of"),
        "{text}"
    );
}

#[test]
fn reftable_repositories_are_refused_in_one_line() {
    let repo = crate::repo::TestRepo::new();
    let dir = repo.outside().join("reftable");
    let made = repo.git_output(
        &repo.outside(),
        &["init", "-q", "--ref-format=reftable", "reftable"],
        &[],
    );
    if !made.status.success() {
        // A git older than 2.45 cannot make one: what such a repository says of itself.
        repo.git_in(&repo.outside(), &["init", "-q", "reftable"], &[]);
        for (key, value) in [
            ("core.repositoryformatversion", "1"),
            ("extensions.refStorage", "reftable"),
        ] {
            repo.git_in(&dir, &["config", key, value], &[]);
        }
    }
    for args in [&["query", "why the cache?"][..], &["why", "a.rs"]] {
        let out = repo.cmd_in(&dir).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = crate::repo::stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("reftable"), "{err}");
    }
}

#[test]
fn a_hook_makes_the_first_index_of_a_few_notes_and_leaves_many_to_a_command() {
    let note = |i: usize| {
        format!(
            r#"{{"kind":"decision","summary":"Decision {i}","id":"{i:032x}","schema_version":1,"session_id":"s","timestamp":"2026-07-01T08:59:00Z","origin":"text","source":"m{i}"}}"#
        )
    };
    let state = |repo: &TestRepo| repo.root.join(".git/agent-context/index/state").exists();
    for (notes, built) in [(3, true), (30, false)] {
        let repo = TestRepo::new();
        for i in 0..notes {
            let commit = repo.commit(&format!("f{i}.txt"), "x\n", &format!("c{i}"));
            scenario::add_note(&repo, &commit, &note(i));
        }
        assert!(!state(&repo));
        repo.ok(&["hook", "post-commit"]);
        assert_eq!(state(&repo), built, "{notes} notes");
        // A command that reads makes it whatever the number.
        repo.ok(&["query", "Decision"]);
        assert!(state(&repo), "{notes} notes");
    }
}
