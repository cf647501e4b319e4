//! `export`: Agent Trace records of the commits sessions made, validated against the published
//! schema (`tests/data/agent-trace/`), and a session's log as Markdown and JSON.

use regex::Regex;
use serde_json::Value;

use crate::git_hooks::{commit_as, hooked_repo, transcript_in};
use crate::link::cache_then_readme;
use crate::repo::{TestRepo, stderr};

const SCHEMA: &str = include_str!("../data/agent-trace/trace-record.json");

/// Where `value` breaks `schema`: the part of JSON Schema (2020-12) the Agent Trace schema uses
/// — `type`, `properties`, `required`, `additionalProperties`, `items`, `enum`, `pattern`,
/// `minimum`, `maximum`, `maxLength`, `propertyNames` — checked; `format` and the annotations
/// are not (its patterns check the uuid and the date-time).
fn violations(schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let known = [
        "$schema",
        "$id",
        "title",
        "description",
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "pattern",
        "minimum",
        "maximum",
        "maxLength",
        "format",
        "propertyNames",
    ];
    for key in schema.as_object().unwrap().keys() {
        assert!(
            known.contains(&key.as_str()),
            "the validator does not know {key:?}"
        );
    }
    if let Some(kind) = schema["type"].as_str() {
        let fits = match kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            other => panic!("type {other}"),
        };
        if !fits {
            out.push(format!("{at}: not a {kind}: {value}"));
            return;
        }
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        out.push(format!("{at}: {value} is none of {allowed:?}"));
    }
    if let (Some(pattern), Some(text)) = (schema["pattern"].as_str(), value.as_str())
        && !Regex::new(pattern).unwrap().is_match(text)
    {
        out.push(format!("{at}: {text:?} does not match {pattern}"));
    }
    if let (Some(max), Some(text)) = (schema["maxLength"].as_u64(), value.as_str())
        && text.chars().count() as u64 > max
    {
        out.push(format!("{at}: longer than {max}"));
    }
    if let Some(n) = value.as_f64() {
        if schema["minimum"].as_f64().is_some_and(|min| n < min) {
            out.push(format!("{at}: {n} under the minimum"));
        }
        if schema["maximum"].as_f64().is_some_and(|max| n > max) {
            out.push(format!("{at}: {n} over the maximum"));
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            violations(items, item, &format!("{at}[{i}]"), out);
        }
    }
    if let Some(object) = value.as_object() {
        let properties = schema["properties"].as_object();
        for required in schema["required"].as_array().into_iter().flatten() {
            if !object.contains_key(required.as_str().unwrap()) {
                out.push(format!("{at}: {required} is missing"));
            }
        }
        for (key, field) in object {
            match properties.and_then(|p| p.get(key)) {
                Some(sub) => violations(sub, field, &format!("{at}.{key}"), out),
                None => match schema.get("additionalProperties") {
                    Some(Value::Bool(false)) => out.push(format!("{at}: {key} is not allowed")),
                    Some(Value::Object(sub)) if !sub.is_empty() => violations(
                        &Value::Object(sub.clone()),
                        field,
                        &format!("{at}.{key}"),
                        out,
                    ),
                    _ => {}
                },
            }
            if let Some(names) = schema.get("propertyNames") {
                violations(
                    names,
                    &Value::String(key.clone()),
                    &format!("{at} key {key}"),
                    out,
                );
            }
        }
    }
}

fn valid(record: &Value) -> Vec<String> {
    let schema: Value = serde_json::from_str(SCHEMA).unwrap();
    let mut out = Vec::new();
    violations(&schema, record, "record", &mut out);
    out
}

/// A session that edits `cache.py` (a decision with it) and `README.md`, committed with the
/// session id set, as in the hooks' tests.
fn session_repo() -> (TestRepo, String) {
    let repo = hooked_repo();
    transcript_in(&repo, &repo.root, "s-export", &cache_then_readme(&repo));
    std::fs::write(
        repo.root.join("cache.py"),
        "import time\n\nTTL = 300\ncache = {}\n",
    )
    .unwrap();
    repo.git(&["add", "cache.py"]);
    let commit = commit_as(
        &repo,
        &repo.root,
        Some("s-export"),
        "README.md",
        "cache and docs",
    );
    (repo, commit)
}

#[test]
fn agent_trace_records_of_the_commits_sessions_made_follow_the_published_schema() {
    // The validator itself tells a good record from bad ones.
    let minimal: Value = serde_json::from_str(
        r#"{"version": "0.1", "id": "550e8400-e29b-41d4-a716-446655440000",
            "timestamp": "2026-01-25T10:00:00Z",
            "files": [{"path": "a", "conversations": [{"ranges": [{"start_line": 1, "end_line": 2}]}]}]}"#,
    )
    .unwrap();
    assert_eq!(valid(&minimal), Vec::<String>::new());
    for broken in [
        r#"{"version": "0.1.0"}"#,
        r#"{"id": "not-a-uuid"}"#,
        r#"{"files": [{"path": "a", "conversations": [{"ranges": [{"start_line": 0, "end_line": 1}]}]}]}"#,
        r#"{"vcs": {"type": "cvs", "revision": "1"}}"#,
        r#"{"extra": true}"#,
    ] {
        let mut record = minimal.clone();
        for (k, v) in serde_json::from_str::<Value>(broken)
            .unwrap()
            .as_object()
            .unwrap()
        {
            record[k] = v.clone();
        }
        assert!(!valid(&record).is_empty(), "{broken} passed");
    }

    let (repo, commit) = session_repo();
    repo.commit("other.txt", "by hand\n", "a commit no session made");
    let out = repo.ok(&["export", "--format", "agent-trace", "HEAD"]);
    let records: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "only the session's commit: {out}");
    let record = &records[0];
    assert_eq!(valid(record), Vec::<String>::new(), "{record:#}");
    assert_eq!(record["vcs"]["revision"], commit.as_str());
    assert_eq!(record["version"], "0.1");
    // The lines the commit added to the files the session wrote, as git numbers them.
    let files: Vec<&str> = record["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["README.md", "cache.py"]);
    let cache = &record["files"][1]["conversations"][0];
    assert_eq!(cache["contributor"]["type"], "ai");
    assert_eq!(cache["contributor"]["model_id"], "anthropic/claude-test");
    assert_eq!(
        cache["ranges"],
        serde_json::json!([{"start_line": 1, "end_line": 4}])
    );
    let ours = &record["metadata"]["dev.git-agent-context"];
    assert_eq!(ours["sessions"], serde_json::json!(["s-export"]));
    assert!(ours["reasoning"].to_string().contains("TTL map"), "{ours}");
    // The same record each time.
    assert_eq!(repo.ok(&["export", "--format", "agent-trace", "HEAD"]), out);
    // A range, and bad input.
    let range = repo.ok(&["export", "--format", "agent-trace", "HEAD~1..HEAD"]);
    assert_eq!(range, "");
    let bad = repo.run(&["export", "--format", "agent-trace", "no-such-rev"]);
    assert_eq!(bad.status.code(), Some(2));
    assert_eq!(stderr(&bad).lines().count(), 1, "{}", stderr(&bad));
}

#[test]
fn a_session_exports_as_markdown_and_json() {
    let (repo, commit) = session_repo();
    let json: Value =
        serde_json::from_str(&repo.ok(&["export", "--format", "json", "s-exp"])).unwrap();
    assert_eq!(json["session"], "s-export");
    let events = json["events"].as_array().unwrap();
    let kinds: Vec<&str> = events.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert!(
        kinds.contains(&"decision") && kinds.contains(&"session"),
        "{kinds:?}"
    );
    let times: Vec<&str> = events
        .iter()
        .map(|e| e["timestamp"].as_str().unwrap())
        .collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "in time order");
    let decision = events.iter().find(|e| e["kind"] == "decision").unwrap();
    assert_eq!(decision["on"], serde_json::json!([commit]));

    let md = repo.ok(&["export", "--format", "md", "s-export"]);
    assert!(md.starts_with("# Session s-export\n"), "{md}");
    assert!(md.contains("**decision**: I'll go with a TTL map"), "{md}");
    assert!(md.contains(&format!("on {}", &commit[..7])), "{md}");

    let unknown = repo.run(&["export", "--format", "md", "nobody"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).starts_with("error: no session \"nobody\" is recorded"),
        "{}",
        stderr(&unknown)
    );
}
