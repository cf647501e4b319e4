//! `show`, `review` and `log` on a real-looking branch: `feature/rate-limit`, two sessions of
//! work with decisions, rejections, trade-offs, a superseded decision and reasoning about the
//! change as a whole; a merge of `main` into it; a rename, a deletion, a binary file and a
//! commit nobody explained. The notes are written by git itself, in the documented format,
//! and the graph by `rebuild`.
//!
//! The terminal text (without colour), the Markdown and the JSON are kept as snapshots (insta,
//! `tests/cli/snapshots/cli__review__*.snap`) — `review_md` is the example pull-request comment
//! docs/commands.md points to. After an intended change, `cargo insta review` (or
//! `INSTA_UPDATE=always`) rewrites them: read the diff.
//! The diffs themselves are checked against git's: `git show` and `git diff` print the same
//! lines (but for the function name git adds after `@@`).

use std::fs;
use std::path::Path;

use serde_json::{Value, json};

use crate::repo::{TestRepo, stderr};
use crate::scenario::add_note;

/// The branch scenario: the repository and its commits by label.
pub struct Branch {
    pub repo: TestRepo,
    pub commits: std::collections::HashMap<&'static str, String>,
}

const SERVER: &str = "use std::net::TcpListener;

use crate::config::Config;
use crate::legacy_auth::check_api_key;

pub struct Server {
    config: Config,
}

impl Server {
    pub fn new(config: Config) -> Server {
        Server { config }
    }

    pub fn run(&self) -> std::io::Result<()> {
        let listener = TcpListener::bind(&self.config.listen)?;
        for stream in listener.incoming() {
            let request = Request::read(stream?)?;
            if !check_api_key(&request) {
                request.respond(401, \"unauthorized\")?;
                continue;
            }
            route(request)?;
        }
        Ok(())
    }
}
";

const SERVER_LIMITED: &str = "use std::net::TcpListener;

use crate::config::Config;
use crate::legacy_auth::check_api_key;
use crate::limit::Limiter;

pub struct Server {
    config: Config,
}

impl Server {
    pub fn new(config: Config) -> Server {
        Server { config }
    }

    pub fn run(&self) -> std::io::Result<()> {
        let listener = TcpListener::bind(&self.config.listen)?;
        let mut limiter = Limiter::new(self.config.rate_limit);
        for stream in listener.incoming() {
            let request = Request::read(stream?)?;
            if !check_api_key(&request) {
                request.respond(401, \"unauthorized\")?;
                continue;
            }
            // Middleware: over-limit requests are turned away before routing.
            if !limiter.allow(request.api_key()) {
                request.respond(429, \"too many requests\")?;
                continue;
            }
            route(request)?;
        }
        Ok(())
    }
}
";

const CONFIG: &str = "use serde::Deserialize;

#[derive(Deserialize)]
pub struct Config {
    pub listen: String,
    pub database_url: String,
}
";

const CONFIG_LIMITED: &str = "use serde::Deserialize;

#[derive(Deserialize)]
pub struct Config {
    pub listen: String,
    pub database_url: String,
    #[serde(default)]
    pub rate_limit: RateLimit,
}

/// `[rate_limit]` in config.toml.
#[derive(Deserialize, Clone, Copy)]
pub struct RateLimit {
    pub per_minute: u32,
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> RateLimit {
        RateLimit { per_minute: 100, burst: 20 }
    }
}
";

const LEGACY_AUTH: &str = "pub fn check_api_key(request: &Request) -> bool {
    let Some(key) = request.header(\"x-api-key\") else {
        return false;
    };
    KEYS.contains(&key)
}
";

const API_KEY: &str = "pub fn check_api_key(request: &Request) -> bool {
    let Some(key) = request.api_key() else {
        return false;
    };
    KEYS.contains(&key)
}
";

const THROTTLE: &str = "/// Sleep between requests: the first attempt at limiting load.
pub fn throttle() {
    std::thread::sleep(std::time::Duration::from_millis(10));
}
";

const LIMIT: &str = "use std::collections::HashMap;
use std::time::Instant;

use crate::config::RateLimit;

/// A token bucket per API key, in this process's memory.
pub struct Limiter {
    limit: RateLimit,
    buckets: HashMap<String, Bucket>,
}

struct Bucket {
    tokens: f64,
    refilled: Instant,
}

impl Limiter {
    pub fn new(limit: RateLimit) -> Limiter {
        Limiter { limit, buckets: HashMap::new() }
    }

    pub fn allow(&mut self, key: &str) -> bool {
        let rate = f64::from(self.limit.per_minute) / 60.0;
        let burst = f64::from(self.limit.burst);
        let bucket = self.buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: burst,
            refilled: Instant::now(),
        });
        let elapsed = bucket.refilled.elapsed().as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * rate).min(burst);
        bucket.refilled = Instant::now();
        if bucket.tokens < 1.0 {
            return false;
        }
        bucket.tokens -= 1.0;
        true
    }
}
";

const LIMIT_REDIS: &str = "use crate::config::RateLimit;

/// A token bucket per API key, in Redis: every replica draws on the same bucket.
pub struct Limiter {
    limit: RateLimit,
    redis: redis::Client,
}

/// Refill and take a token in one step, atomically, on the Redis server.
const TAKE: &str = include_str!(\"take_token.lua\");

impl Limiter {
    pub fn new(limit: RateLimit, redis: redis::Client) -> Limiter {
        Limiter { limit, redis }
    }

    pub fn allow(&mut self, key: &str) -> bool {
        let script = redis::Script::new(TAKE);
        script
            .key(format!(\"bucket:{key}\"))
            .arg(self.limit.per_minute)
            .arg(self.limit.burst)
            .invoke(&mut self.redis)
            .unwrap_or(true)
    }
}
";

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// One event of a note: (session, source, kind), summary, files, prompt, and extra fields.
fn event(
    (session, source, kind): (&str, &str, &str),
    summary: &str,
    files: &[&str],
    prompt: &str,
    at: &str,
    extra: Value,
) -> Value {
    let k = serde_json::from_value(json!(kind)).unwrap();
    let mut e = json!({
        "kind": kind,
        "summary": summary,
        "id": git_agent_context::event::event_id(session, source, k),
        "schema_version": 1,
        "session_id": session,
        "timestamp": at,
        "origin": if kind == "session" { "prompt" } else { "text" },
        "source": source,
        "prompt_context": prompt,
        "files_affected": files,
    });
    for (k, v) in extra.as_object().unwrap() {
        e[k] = v.clone();
    }
    e
}

fn note(repo: &TestRepo, commit: &str, events: &[Value]) {
    let lines: Vec<String> = events.iter().map(Value::to_string).collect();
    add_note(repo, commit, &lines.join("\n"));
}

/// Write (or, with `None`, remove) files and commit them at `date`.
fn commit(repo: &TestRepo, files: &[(&str, Option<&[u8]>)], message: &str, date: &str) -> String {
    for (path, content) in files {
        let file = repo.root.join(path);
        match content {
            Some(bytes) => {
                fs::create_dir_all(file.parent().unwrap()).unwrap();
                fs::write(&file, bytes).unwrap();
                repo.git(&["add", path]);
            }
            None => {
                repo.git(&["rm", "-q", path]);
            }
        }
    }
    repo.git_at(&["commit", "-q", "-m", message], date);
    repo.git(&["rev-parse", "HEAD"])
}

pub fn build() -> Branch {
    let repo = TestRepo::new();
    let mut commits = std::collections::HashMap::new();
    let m1 = commit(
        &repo,
        &[
            ("README.md", Some(b"# api\n\nA small HTTP API.\n")),
            ("src/server.rs", Some(SERVER.as_bytes())),
            ("src/config.rs", Some(CONFIG.as_bytes())),
            ("src/legacy_auth.rs", Some(LEGACY_AUTH.as_bytes())),
            ("src/throttle.rs", Some(THROTTLE.as_bytes())),
        ],
        "Initial API server",
        "2026-03-02T09:00:00Z",
    );
    commits.insert("m1", m1);
    repo.git(&["checkout", "-q", "-b", "feature/rate-limit"]);

    let s1 = "9d1f6c2e-rate-limit";
    let request1 = "Add per-client rate limiting to the API";
    // The session's own event, on each of its commits.
    let session1 = |at: &str| {
        event(
            (s1, "session", "session"),
            request1,
            &["src/limit.rs", "src/server.rs", "src/config.rs"],
            request1,
            at,
            json!({}),
        )
    };
    let f1 = commit(
        &repo,
        &[
            ("src/limit.rs", Some(LIMIT.as_bytes())),
            ("src/server.rs", Some(SERVER_LIMITED.as_bytes())),
        ],
        "Rate-limit requests per API key",
        "2026-03-03T10:00:00Z",
    );
    let at = "2026-03-03T09:40:00Z";
    note(
        &repo,
        &f1,
        &[
            session1(at),
            event(
                (s1, "msg_bucket", "decision"),
                "Use a token bucket per API key in process memory",
                &["src/limit.rs"],
                request1,
                at,
                json!({
                    "rationale": "Token buckets allow short bursts while holding the average rate, which is how clients of this API call it.",
                    "alternatives": ["a fixed window counter"],
                }),
            ),
            event(
                (s1, "msg_window", "rejection"),
                "A fixed window counter won't work: a client can send twice the limit across a window boundary",
                &["src/limit.rs"],
                "Why not a simple counter per minute?",
                "2026-03-03T09:45:00Z",
                json!({}),
            ),
            event(
                (s1, "msg_memory", "tradeoff"),
                "Buckets live in process memory: each replica enforces its own limit, so the real limit grows with replicas",
                &["src/limit.rs"],
                request1,
                at,
                json!({}),
            ),
            event(
                (s1, "msg_middleware", "decision"),
                "Check the limit as middleware before routing, so rejected requests cost no handler work",
                &["src/server.rs"],
                request1,
                at,
                json!({}),
            ),
        ],
    );
    commits.insert("f1", f1);

    let f2 = commit(
        &repo,
        &[("src/config.rs", Some(CONFIG_LIMITED.as_bytes()))],
        "Make the rate limit configurable",
        "2026-03-03T11:00:00Z",
    );
    let at = "2026-03-03T10:50:00Z";
    let prompt = "Make the limits configurable";
    note(
        &repo,
        &f2,
        &[
            session1(at),
            event(
                (s1, "msg_config", "decision"),
                "Read the limits from a [rate_limit] table in config.toml: 100 requests a minute, bursts of 20, by default",
                &["src/config.rs"],
                prompt,
                at,
                json!({"alternatives": ["environment variables only"]}),
            ),
        ],
    );
    commits.insert("f2", f2);

    repo.git(&["checkout", "-q", "main"]);
    let m2 = commit(
        &repo,
        &[(
            "README.md",
            Some(b"# api\n\nA small HTTP API.\n\nRun it with `cargo run -- config.toml`.\n"),
        )],
        "README: how to run the server",
        "2026-03-05T09:00:00Z",
    );
    commits.insert("m2", m2);
    repo.git(&["checkout", "-q", "feature/rate-limit"]);
    repo.git_at(
        &[
            "merge",
            "-q",
            "--no-ff",
            "-m",
            "Merge branch 'main' into feature/rate-limit",
            "main",
        ],
        "2026-03-06T09:00:00Z",
    );
    commits.insert("merge", repo.git(&["rev-parse", "HEAD"]));

    let s2 = "4be07a91-shared-limits";
    let request2 = "Rate limits must hold across all replicas, not per process";
    let f4 = commit(
        &repo,
        &[
            ("src/limit.rs", Some(LIMIT_REDIS.as_bytes())),
            ("src/legacy_auth.rs", None),
            ("src/auth/api_key.rs", Some(API_KEY.as_bytes())),
            ("src/throttle.rs", None),
            ("assets/429.png", Some(PNG)),
        ],
        "Share rate limits across replicas through Redis",
        "2026-03-10T10:00:00Z",
    );
    let at = "2026-03-10T09:30:00Z";
    note(
        &repo,
        &f4,
        &[
            event(
                (s2, "session", "session"),
                request2,
                &["src/limit.rs", "src/auth/api_key.rs", "src/throttle.rs"],
                request2,
                at,
                json!({}),
            ),
            event(
                (s2, "msg_redis", "decision"),
                "Keep the token bucket per API key in Redis instead of process memory",
                &["src/limit.rs"],
                request2,
                at,
                json!({
                    "rationale": "A Lua script refills and takes a token in one round trip, so two replicas cannot both spend the last token.",
                    "alternatives": ["sticky sessions at the load balancer"],
                }),
            ),
            event(
                (s2, "msg_service", "rejection"),
                "A separate rate-limit service was rejected: one more deployment to run and be paged for",
                &["src/limit.rs"],
                "Why not a dedicated rate-limit service?",
                at,
                json!({}),
            ),
            event(
                (s2, "msg_latency", "tradeoff"),
                "Every request now makes a Redis round trip, about a millisecond; if Redis is down, requests are allowed",
                &["src/limit.rs"],
                request2,
                at,
                json!({}),
            ),
            event(
                (s2, "msg_auth", "refactor"),
                "Move the API key check from legacy_auth.rs to auth/api_key.rs and read the key with Request::api_key",
                &["src/legacy_auth.rs"],
                request2,
                at,
                json!({}),
            ),
            event(
                (s2, "msg_throttle", "decision"),
                "Remove the old sleep-based throttle: the limiter replaces it",
                &["src/throttle.rs"],
                request2,
                at,
                json!({}),
            ),
            event(
                (s2, "msg_balancer", "discovery"),
                "The load balancer already retries a 429 once, so a client sees at most two rejections per call",
                &[],
                request2,
                at,
                json!({}),
            ),
        ],
    );
    commits.insert("f4", f4);

    let f5 = commit(
        &repo,
        &[(
            "CHANGELOG.md",
            Some(b"# Changes\n\n- Requests are rate-limited per API key (429 when over).\n"),
        )],
        "Changelog for the rate limiter",
        "2026-03-11T09:00:00Z",
    );
    commits.insert("f5", f5);
    repo.ok(&["rebuild"]);
    Branch { repo, commits }
}

/// The diff part of a text output (from the first `diff --git`), gutter lines left out: what
/// git prints for the same change.
fn diff_part(text: &str) -> String {
    let start = text.find("\ndiff --git").map_or(text.len(), |i| i + 1);
    text[start..]
        .lines()
        .filter(|l| !l.starts_with("│ "))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// The commit lines of `log`'s text, without the reasoning indented under them.
fn heads(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.starts_with(' ')).collect()
}

/// git's diff with the function names after `@@` dropped.
fn git_diff(repo: &TestRepo, args: &[&str]) -> String {
    let mut all = vec!["-c", "core.quotePath=false"];
    all.extend(args);
    repo.git(&all)
        .lines()
        .map(
            |l| match l.strip_prefix("@@ ").and_then(|r| r.find(" @@")) {
                Some(end) => format!("{}\n", &l[..end + 6]),
                None => format!("{l}\n"),
            },
        )
        .collect()
}

#[test]
fn review_of_a_branch_golden_in_three_formats() {
    let b = build();
    let text = b
        .repo
        .ok(&["review", "main...feature/rate-limit", "--color=never"]);
    insta::assert_snapshot!("review_txt", text);
    let md = b.repo.ok(&[
        "review",
        "main...feature/rate-limit",
        "--format",
        "markdown",
    ]);
    insta::assert_snapshot!("review_md", md);
    let json = b
        .repo
        .ok(&["review", "main...feature/rate-limit", "--json"]);
    insta::assert_snapshot!("review_json", json);

    // What the goldens hold, said outright.
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["base"], b.commits["m2"].as_str(), "the merge base");
    let subjects: Vec<&str> = v["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["subject"].as_str().unwrap())
        .collect();
    assert_eq!(
        subjects,
        [
            "Rate-limit requests per API key",
            "Make the rate limit configurable",
            "Merge branch 'main' into feature/rate-limit",
            "Share rate limits across replicas through Redis",
            "Changelog for the rate limiter"
        ],
        "oldest first; main's own commit is not in the range"
    );
    let t = &v["totals"];
    assert_eq!(
        (t["sessions"].as_u64(), t["decisions"].as_u64()),
        (Some(2), Some(5))
    );
    assert_eq!(
        (t["rejections"].as_u64(), t["tradeoffs"].as_u64()),
        (Some(2), Some(2))
    );
    assert_eq!(
        t["files_without_reasoning"],
        json!(["CHANGELOG.md", "assets/429.png"])
    );
    let file = |path: &str| {
        v["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{path} in {v:#}"))
            .clone()
    };
    // The first decision on the limiter, superseded by the second session's.
    let limit = file("src/limit.rs");
    assert_eq!(limit["status"], "added");
    let reasons = limit["reasons"].as_array().unwrap();
    let bucket = &reasons[0];
    assert_eq!(
        bucket["summary"],
        "Use a token bucket per API key in process memory"
    );
    assert_eq!(
        bucket["superseded_by"]["summary"],
        "Keep the token bucket per API key in Redis instead of process memory"
    );
    assert_eq!(bucket["superseded_by"]["commit"], &b.commits["f4"][..7]);
    // The rejection of the fixed window is the reason its alternative was not taken.
    assert_eq!(bucket["considered"][0]["option"], "a fixed window counter");
    assert!(
        bucket["considered"][0]["rejected"]
            .as_str()
            .unwrap()
            .starts_with("A fixed window counter won't work")
    );
    assert!(
        !reasons.iter().any(|r| r["kind"] == "rejection"
            && r["summary"].as_str().unwrap().starts_with("A fixed window")),
        "folded, not listed twice"
    );
    // Reasoning about the old name follows the rename; a deleted file keeps its reasoning.
    let auth = file("src/auth/api_key.rs");
    assert_eq!(auth["status"], "renamed");
    assert_eq!(auth["old_path"], "src/legacy_auth.rs");
    assert_eq!(auth["reasons"][0]["kind"], "refactor");
    let throttle = file("src/throttle.rs");
    assert_eq!(throttle["status"], "deleted");
    assert_eq!(
        throttle["reasons"][0]["summary"],
        "Remove the old sleep-based throttle: the limiter replaces it"
    );
    assert_eq!(file("assets/429.png")["binary"], true);
    // The middleware decision goes before the hunk that adds the middleware, not the import.
    let server = file("src/server.rs");
    assert_eq!(server["hunks"].as_array().unwrap().len(), 2);
    assert_eq!(server["reasons"][0]["hunk"], 1);
    // Reasoning that names no file of the change concerns it as a whole.
    assert_eq!(v["general"][0]["kind"], "discovery");

    // The text's diff is git's.
    assert_eq!(
        diff_part(&text),
        git_diff(&b.repo, &["diff", "main...feature/rate-limit"])
    );
}

#[test]
fn show_a_commit_golden_and_its_diff_is_gits() {
    let b = build();
    let text = b.repo.ok(&["show", &b.commits["f1"], "--color=never"]);
    insta::assert_snapshot!("show_txt", text);
    assert_eq!(
        diff_part(&text),
        git_diff(&b.repo, &["show", "--format=", &b.commits["f1"]])
    );
    // The header is git's too.
    let header = b
        .repo
        .git(&["show", "--no-patch", "--format=medium", &b.commits["f1"]]);
    assert!(text.starts_with(&header), "{text}");
    // HEAD by default.
    let head = b.repo.ok(&["show", "--color=never"]);
    assert!(head.starts_with(&format!("commit {}\n", b.commits["f5"])));
    assert!(head.contains("no reasoning was recorded"), "{head}");
}

#[test]
fn show_renames_deletions_binaries_merges_and_root_commits() {
    let b = build();
    let text = b.repo.ok(&["show", &b.commits["f4"], "--color=never"]);
    assert_eq!(
        diff_part(&text),
        git_diff(&b.repo, &["show", "--format=", &b.commits["f4"]])
    );
    for expected in [
        "rename from src/legacy_auth.rs\nrename to src/auth/api_key.rs\n",
        "deleted file mode 100644\n",
        "Binary files /dev/null and b/assets/429.png differ\n",
        "│ refactor: Move the API key check",
    ] {
        assert!(text.contains(expected), "{expected:?} in\n{text}");
    }

    // A merge: against its first parent, as `git show --first-parent` does, and said so.
    let merge = b.repo.ok(&["show", &b.commits["merge"], "--color=never"]);
    assert!(merge.contains(&format!(
        "Merge: {} {}\n",
        &b.commits["f2"][..7],
        &b.commits["m2"][..7]
    )));
    assert!(merge.contains("the diff is against its first parent"));
    assert_eq!(
        diff_part(&merge),
        git_diff(
            &b.repo,
            &["show", "--first-parent", "--format=", &b.commits["merge"]]
        )
    );

    // A root commit: every file added, from the empty tree.
    let root = b.repo.ok(&["show", &b.commits["m1"], "--color=never"]);
    assert_eq!(
        diff_part(&root),
        git_diff(&b.repo, &["show", "--format=", &b.commits["m1"]])
    );
    assert_eq!(root.matches("new file mode 100644").count(), 5);
    let json: Value = b.repo.json(&["show", &b.commits["m1"]]);
    assert!(json.get("base").is_none(), "no parent: {json}");
}

#[test]
fn empty_ranges_and_ranges_without_reasoning() {
    let b = build();
    let empty = b.repo.ok(&["review", "HEAD..HEAD", "--color=never"]);
    assert!(empty.contains("no commits in this range"), "{empty}");
    assert!(!empty.contains("diff --git"));
    let md = b.repo.ok(&["review", "HEAD..HEAD", "--format=markdown"]);
    assert!(md.contains("No commits in this range."), "{md}");
    let json: Value = b.repo.json(&["review", "HEAD..HEAD"]);
    assert_eq!(json["commits"], json!([]));
    assert_eq!(json["files"], json!([]));

    // main's own commit: a diff, and no reasoning recorded.
    let plain = b.repo.ok(&["review", "main~1..main", "--color=never"]);
    assert!(plain.contains("no reasoning was recorded"), "{plain}");
    assert!(plain.contains("+Run it with `cargo run -- config.toml`."));
    let md = b.repo.ok(&["review", "main~1..main", "--format=markdown"]);
    assert!(md.contains("No reasoning was recorded for these commits."));
    assert!(md.contains("```diff\n@@ -1,3 +1,5 @@\n"), "{md}");

    // A lone base means base..HEAD.
    let lone = b.repo.json(&["review", "main"]);
    let two = b.repo.json(&["review", "main..HEAD"]);
    assert_eq!(lone["files"], two["files"]);
    assert_eq!(lone["base"], b.commits["m2"].as_str());
}

#[test]
fn log_lists_commits_with_their_reasoning() {
    let b = build();
    let text = b
        .repo
        .ok(&["log", "main..feature/rate-limit", "--color=never"]);
    insta::assert_snapshot!("log_txt", text);
    let oneline = b.repo.git(&[
        "log",
        "--format=%h %s",
        "--abbrev=7",
        "main..feature/rate-limit",
    ]);
    let ours: Vec<&str> = heads(&text);
    assert_eq!(
        ours,
        oneline.lines().collect::<Vec<_>>(),
        "the commits and order of git log"
    );
    assert!(text.contains("    rejected: A separate rate-limit service was rejected"));

    // A...B: the commits of either side but not both, as git log lists them.
    b.repo.git(&["branch", "side", &b.commits["m1"]]);
    b.repo.git(&["checkout", "-q", "side"]);
    b.repo.commit_at(
        "side.txt",
        "side\n",
        "On a side branch",
        "2026-03-07T09:00:00Z",
    );
    b.repo.git(&["checkout", "-q", "feature/rate-limit"]);
    for range in ["side...feature/rate-limit", "main...side"] {
        let ours = b.repo.ok(&["log", range, "--color=never"]);
        let ours: Vec<&str> = heads(&ours);
        let git = b.repo.git(&["log", "--format=%h %s", "--abbrev=7", range]);
        assert_eq!(ours, git.lines().collect::<Vec<_>>(), "{range}");
    }

    // -- <path>: the commits that changed it, as git log -- <path> lists them.
    let limited = b.repo.ok(&["log", "--color=never", "--", "src/limit.rs"]);
    let git = b
        .repo
        .git(&["log", "--format=%h %s", "--abbrev=7", "--", "src/limit.rs"]);
    let ours: Vec<&str> = heads(&limited);
    assert_eq!(ours, git.lines().collect::<Vec<_>>());

    // -n and --reasoned.
    let reasoned = b
        .repo
        .ok(&["log", "--reasoned", "-n", "2", "--color=never"]);
    let heads: Vec<&str> = heads(&reasoned);
    assert_eq!(
        heads,
        [
            format!(
                "{} Share rate limits across replicas through Redis",
                &b.commits["f4"][..7]
            ),
            format!("{} Make the rate limit configurable", &b.commits["f2"][..7]),
        ]
    );
    let json = b.repo.json(&["log", "-n", "1"]);
    assert_eq!(json["commits"].as_array().unwrap().len(), 1);
    assert_eq!(json["commits"][0]["commit"]["id"], b.commits["f5"].as_str());
}

#[test]
fn bad_revisions_and_ranges_are_usage_errors() {
    let b = build();
    for args in [
        vec!["show", "no-such-branch"],
        vec!["review", "main..no-such-branch"],
        vec!["log", "nope"],
    ] {
        let out = b.repo.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr(&out);
        assert!(
            err.starts_with("error: ") && err.contains("unknown revision"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    // Suffixes that name a range, which gix would read as the commit alone.
    for args in [
        vec!["review", "HEAD^!"],
        vec!["log", "HEAD^@"],
        vec!["show", "HEAD^-1"],
    ] {
        let out = b.repo.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("are not supported"),
            "{}",
            stderr(&out)
        );
    }
    let empty = TestRepo::new();
    let out = empty.run(&["show"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no commit yet"));
}

#[test]
fn markdown_fits_a_comment_by_leaving_out_the_largest_diffs() {
    let b = build();
    let full = b
        .repo
        .ok(&["review", "main...feature/rate-limit", "--format=markdown"]);
    let max = 6000;
    assert!(full.chars().count() > max, "the scenario must need cutting");
    let cut = b.repo.ok(&[
        "review",
        "main...feature/rate-limit",
        "--format=markdown",
        &format!("--max-chars={max}"),
    ]);
    assert!(cut.chars().count() <= max, "{}", cut.chars().count());
    // The largest diff (server.rs's two hunks) goes first, and was enough; the rest stay.
    assert!(cut.contains("Diff not shown (25 lines)"), "{cut}");
    assert!(!cut.contains("+            // Middleware: over-limit requests"));
    assert!(cut.contains("+/// A token bucket per API key, in Redis"));
    assert!(cut.contains("+- Requests are rate-limited per API key (429 when over)."));
    // Every piece of reasoning stays.
    let json = b.repo.json(&["review", "main...feature/rate-limit"]);
    for f in json["files"].as_array().unwrap() {
        for r in f["reasons"].as_array().unwrap() {
            let summary = r["summary"]
                .as_str()
                .unwrap()
                .replace('[', "\\[")
                .replace(']', "\\]")
                .replace('_', "\\_");
            assert!(cut.contains(&summary), "{summary} in\n{cut}");
        }
    }
}

/// When the reasoning alone is over the limit, the comment is cut after the last file that
/// fits, and says so: never longer than asked, never a `<details>` left open.
#[test]
fn markdown_over_the_limit_without_diffs_is_cut_after_a_file() {
    let b = build();
    for max in [2600, 3200, 300] {
        let cut = b.repo.ok(&[
            "review",
            "main...feature/rate-limit",
            "--format=markdown",
            &format!("--max-chars={max}"),
        ]);
        assert!(cut.chars().count() <= max, "{max}: {}", cut.chars().count());
        assert!(
            cut.contains("*Cut here: the comment would run past"),
            "{cut}"
        );
        assert!(!cut.contains("```diff"), "every diff left out first");
        assert_eq!(
            cut.matches("\n<details").count(),
            cut.matches("\n</details>").count(),
            "{max}: {cut}"
        );
    }
}

#[test]
fn a_repository_template_overrides_the_markdown() {
    let b = build();
    let dir = b.repo.root.join(".agent-context/templates");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("review.md.j2"),
        "{{ totals.decisions }} decisions in {{ range | code }}\n",
    )
    .unwrap();
    let md = b
        .repo
        .ok(&["review", "main...feature/rate-limit", "--format=markdown"]);
    assert_eq!(
        md, "5 decisions in `main...feature/rate-limit`\n",
        "ends its line"
    );
    fs::write(dir.join("review.md.j2"), "{% if %}\n").unwrap();
    let out = b.repo.run(&["review", "main", "--format=markdown"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains(".agent-context/templates/review.md.j2"));
}

/// The output a snapshot of this module holds: its file without insta's header.
fn snapshot(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/cli/snapshots/cli__review__{name}.snap"));
    let text = fs::read_to_string(path).unwrap();
    text.splitn(3, "---\n").nth(2).unwrap().to_owned()
}

/// The checked-in example comment, read by a CommonMark parser as GitHub would: its headings,
/// one `<details>` per file with a `<summary>`, every diff in a `diff` fence, lists of
/// reasoning, and no raw HTML but those tags.
#[test]
fn the_example_comment_renders_as_markdown() {
    use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

    let md = snapshot("review_md");
    let json: Value = serde_json::from_str(&snapshot("review_json")).unwrap();
    let files = json["files"].as_array().unwrap();
    let hunks: usize = files
        .iter()
        .map(|f| f["hunks"].as_array().unwrap().len())
        .sum();

    let mut headings: Vec<(HeadingLevel, String)> = Vec::new();
    let mut heading: Option<(HeadingLevel, String)> = None;
    let (mut html, mut fences, mut items) = (Vec::new(), Vec::new(), 0);
    let mut fence: Option<String> = None;
    for event in Parser::new_ext(&md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH) {
        match event {
            Event::Start(Tag::Heading { level, .. }) => heading = Some((level, String::new())),
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                fences.push(info.to_string());
                fence = Some(String::new());
            }
            Event::End(TagEnd::CodeBlock) => {
                let body = fence.take().unwrap();
                assert!(body.starts_with("@@ -"), "a fence holds a hunk: {body}");
            }
            Event::Start(Tag::Item) => items += 1,
            Event::Html(h) | Event::InlineHtml(h) => html.push(h.trim().to_owned()),
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, text)) = heading.as_mut() {
                    text.push_str(&t);
                }
                if let Some(body) = fence.as_mut() {
                    body.push_str(&t);
                }
            }
            _ => {}
        }
    }
    let titles: Vec<&str> = headings.iter().map(|(_, t)| t.as_str()).collect();
    assert_eq!(
        titles,
        [
            "Reasoning behind main...feature/rate-limit",
            "Sessions",
            "Commits",
            "About the change as a whole",
            "Files"
        ]
    );
    assert_eq!(headings[0].0, HeadingLevel::H3);
    assert!(headings[1..].iter().all(|(l, _)| *l == HeadingLevel::H4));
    assert_eq!(fences.len(), hunks, "one fence per hunk");
    assert!(fences.iter().all(|f| f == "diff"), "{fences:?}");
    // Sessions, commits, and the reasoning groups and items.
    assert!(items > 20, "{items} list items");
    // Each file: <details> (open when it has reasoning) with its <summary>, then </details>;
    // no other HTML.
    let lines: Vec<&str> = html.iter().flat_map(|h| h.lines()).map(str::trim).collect();
    let summaries: Vec<&str> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("<summary>")?.strip_suffix("</summary>"))
        .collect();
    assert_eq!(summaries.len(), files.len(), "{lines:?}");
    for (summary, f) in summaries.iter().zip(files) {
        let path = f["path"].as_str().unwrap();
        assert!(summary.starts_with(&format!("{path} — ")), "{summary}");
    }
    let opened = lines.iter().filter(|l| l.starts_with("<details")).count();
    let closed = lines.iter().filter(|l| **l == "</details>").count();
    assert_eq!((opened, closed), (files.len(), files.len()));
    for l in &lines {
        let allowed = matches!(*l, "<details>" | "<details open>" | "</details>")
            || (l.starts_with("<summary>") && l.ends_with("</summary>"));
        assert!(allowed, "raw HTML beyond <details>: {l:?}");
    }
}

/// The `run:` script of the step named `name` in a GitHub Actions workflow, dedented.
fn workflow_step(workflow: &str, name: &str) -> String {
    let lines: Vec<&str> = workflow.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.trim() == format!("- name: {name}"))
        .unwrap_or_else(|| panic!("no step {name:?}"));
    let run = (at..lines.len())
        .find(|&i| lines[i].trim() == "run: |")
        .unwrap_or_else(|| panic!("step {name:?} has no `run: |`"));
    let indent = lines[run].len() - lines[run].trim_start().len();
    let body: Vec<&str> = lines[run + 1..]
        .iter()
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > indent)
        .copied()
        .collect();
    let strip = body
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    body.iter()
        .map(|l| format!("{}\n", l.get(strip..).unwrap_or("")))
        .collect()
}

/// The GitHub Actions example, run as GitHub would run its steps (bash -e) in a fresh clone of
/// the branch: its fetch brings the notes, its review makes the graph from them and prints the
/// comment the original repository prints for the pull request's range.
#[test]
fn the_github_workflow_example_reviews_a_fresh_clone() {
    let b = build();
    let workflow = fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/github/agent-context-review.yml"),
    )
    .unwrap();
    let clone = b.repo.home.parent().unwrap().join("runner");
    b.repo.git_in(
        b.repo.home.parent().unwrap(),
        &[
            "clone",
            "-q",
            b.repo.root.to_str().unwrap(),
            clone.to_str().unwrap(),
        ],
        &[],
    );
    let (base, head) = (&b.commits["m2"], &b.commits["f5"]);
    b.repo
        .git_in(&clone, &["checkout", "-q", "--detach", head], &[]);
    let step = |name: &str| {
        let out = std::process::Command::new("bash")
            .arg("-e")
            .arg("-c")
            .arg(workflow_step(&workflow, name))
            .current_dir(&clone)
            .env_clear()
            .env("PATH", crate::repo::path_with_binary())
            .env("HOME", &b.repo.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("BASE", base)
            .env("HEAD", head)
            .output()
            .unwrap();
        assert!(out.status.success(), "step {name:?}: {}", stderr(&out));
    };
    // Before the fetch, the clone knows no reasoning.
    assert!(
        b.repo
            .git_output(
                &clone,
                &["rev-parse", "--verify", "refs/notes/agent-context"],
                &[]
            )
            .status
            .code()
            != Some(0)
    );
    step("Fetch the reasoning");
    // A remote seldom has the graph (git's receive-pack refuses a ref one level below refs/):
    // the review step makes it from the notes.
    b.repo
        .git_in(&clone, &["update-ref", "-d", "refs/agent-context"], &[]);
    step("Review");
    let posted = fs::read_to_string(clone.join("review.md")).unwrap();
    let range = format!("{base}...{head}");
    let expected = b.repo.ok(&["review", &range, "--format=markdown"]);
    assert_eq!(posted, expected);
    // The notes came (the reasoning), and the graph was made from them (what superseded what).
    assert!(posted.contains("**Decision:** Use a token bucket per API key"));
    assert!(posted.contains("*superseded by `"), "{posted}");
    // A second run on a remote without the refs is not a failure.
    let bare = b.repo.home.parent().unwrap().join("bare.git");
    b.repo.git_in(
        b.repo.home.parent().unwrap(),
        &["init", "-q", "--bare", bare.to_str().unwrap()],
        &[],
    );
    b.repo.git_in(
        &clone,
        &["remote", "set-url", "origin", bare.to_str().unwrap()],
        &[],
    );
    step("Fetch the reasoning");
}

/// File names with spaces, tabs, quotes and non-ASCII letters are written as git writes them
/// (`core.quotePath=false`): quoted and escaped where a name could break the line.
#[test]
fn odd_file_names_as_git_writes_them() {
    let repo = TestRepo::new();
    for name in [
        "with space.txt",
        "tab\there.txt",
        "say \"hi\".txt",
        "café.txt",
    ] {
        fs::write(repo.root.join(name), format!("{name}\n")).unwrap();
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-q", "-m", "odd names"]);
    fs::write(repo.root.join("with space.txt"), "changed\n").unwrap();
    repo.git(&["mv", "café.txt", "thé.txt"]);
    repo.git(&["commit", "-q", "-a", "-m", "change and rename"]);
    for rev in ["HEAD~1", "HEAD"] {
        let text = repo.ok(&["show", rev, "--color=never"]);
        assert_eq!(
            diff_part(&text),
            git_diff(&repo, &["show", "--format=", rev]),
            "{rev}"
        );
    }
}

/// A file that changes its line ends from LF to CRLF shows the CRs, as git does.
#[test]
fn a_change_of_line_ends_shows() {
    let repo = TestRepo::new();
    repo.commit("crlf.txt", "a\nb\n", "LF");
    repo.commit("crlf.txt", "a\r\nb\r\n", "CRLF");
    let text = repo.ok(&["show", "--color=never"]);
    assert_eq!(diff_part(&text), git_diff(&repo, &["show", "--format="]));
    assert!(text.contains("-a\n-b\n+a\r\n+b\r\n"), "{text:?}");
    let json = repo.json(&["show"]);
    assert_eq!(json["files"][0]["hunks"][0]["lines"][2], "+a\r");
}

/// A file that becomes a symlink is a deletion and an addition, as git shows it, not a mode
/// change.
#[test]
fn a_file_that_becomes_a_symlink_as_git_shows_it() {
    let repo = TestRepo::new();
    repo.commit("target.txt", "target\n", "a target");
    repo.commit("link", "a plain file\n", "a file");
    fs::remove_file(repo.root.join("link")).unwrap();
    std::os::unix::fs::symlink("target.txt", repo.root.join("link")).unwrap();
    repo.git(&["commit", "-q", "-a", "-m", "the file becomes a link"]);
    let text = repo.ok(&["show", "--color=never"]);
    assert_eq!(diff_part(&text), git_diff(&repo, &["show", "--format="]));
    assert!(text.contains("deleted file mode 100644\n"), "{text}");
    assert!(text.contains("new file mode 120000\n"), "{text}");
}

/// What an agent wrote never reaches the terminal as a line of the diff or as an escape
/// sequence: recorded text is put on its line and stripped of control characters.
#[test]
fn recorded_text_cannot_forge_diff_lines_or_escapes() {
    let repo = TestRepo::new();
    let commit = repo.commit("a.txt", "real\n", "one file");
    let forged = "Fine\n+    rm -rf /  # a forged line\u{1b}[31m";
    let events = [
        event(
            ("s", "session", "session"),
            "request\n-forged request\u{1b}]0;title\u{7}",
            &["a.txt"],
            "request",
            "2026-01-01T00:00:00Z",
            json!({}),
        ),
        event(
            ("s", "m1", "decision"),
            forged,
            &["a.txt"],
            "prompt\n+forged prompt",
            "2026-01-01T00:00:00Z",
            json!({"alternatives": [forged], "rationale": forged}),
        ),
    ];
    note(&repo, &commit, &events);
    for args in [
        vec!["show", "--color=never"],
        vec!["log", "--color=never"],
        vec!["review", &commit, "--color=never"],
        vec!["show", "--color=always"],
    ] {
        let out = repo.ok(&args);
        // A forged line would start as a diff line does, after our own colour if any.
        let forged_lines: Vec<&str> = out
            .lines()
            .map(|l| {
                l.strip_prefix("\u{1b}[31m")
                    .or(l.strip_prefix("\u{1b}[32m"))
                    .unwrap_or(l)
            })
            .filter(|l| l.contains("forged") && l.starts_with(['+', '-']))
            .collect();
        assert!(forged_lines.is_empty(), "{args:?}: {forged_lines:?}");
        assert!(
            !out.contains("forged line\u{1b}"),
            "{args:?}: an escape after recorded text"
        );
        assert!(!out.contains("\u{1b}]0;"), "{args:?}");
    }
}

/// After criss-cross merges two branches have two merge bases; `log A...B` hides both, as
/// git does.
#[test]
fn log_of_a_symmetric_range_with_two_merge_bases() {
    let repo = TestRepo::new();
    repo.commit("base.txt", "base\n", "base");
    repo.git(&["checkout", "-q", "-b", "a"]);
    repo.commit("a.txt", "a1\n", "a1");
    repo.git(&["checkout", "-q", "-b", "b", "main"]);
    repo.commit("b.txt", "b1\n", "b1");
    let b1 = repo.git(&["rev-parse", "HEAD"]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "b takes a1", "a"]);
    repo.git(&["checkout", "-q", "a"]);
    repo.git(&["merge", "-q", "--no-ff", "-m", "a takes b1", &b1]);
    repo.commit("a.txt", "a2\n", "a2");
    repo.git(&["checkout", "-q", "b"]);
    repo.commit("b.txt", "b2\n", "b2");
    let bases = repo.git(&["merge-base", "--all", "a", "b"]);
    assert_eq!(bases.lines().count(), 2, "a criss-cross");
    let ours = repo.ok(&["log", "a...b", "--color=never"]);
    let git = repo.git(&["log", "--format=%h %s", "--abbrev=7", "a...b"]);
    assert_eq!(heads(&ours), git.lines().collect::<Vec<_>>());
}
