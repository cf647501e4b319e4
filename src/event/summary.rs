//! The heuristic session summary (seeds 001 and 004): what a session was asked, what it
//! investigated and learned, what it completed and left pending, what it decided, and the files
//! it read and edited — made from its events alone, with no model, so that the graph's session
//! node and the continuation after a compaction say the same thing whoever makes them.
//!
//! Sources: the session event (request, task list, files changed), the prompts the events carry,
//! the task lists (`TodoWrite` and the task tools), explorations and discoveries in the
//! assistant's text, decisions and rejections, the commits' subjects (features, fixes,
//! refactorings), and the operations (files read, searches made, files written).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Event, Kind, Origin, Task, truncate_words};

/// Items kept per list: the most recent.
const ITEMS_MAX: usize = 8;
/// Files kept per list: the most recent.
const FILES_MAX: usize = 30;
/// The longest request or current task, in characters.
const TEXT_MAX: usize = 300;
/// The longest item of a list, in characters: eight items in each of six lists stay within the
/// continuation's budget however long the events' summaries.
const ITEM_CHARS: usize = 120;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// What the session was asked to do: its first prompt.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request: String,
    /// What it is working on now: the task in progress, else its latest prompt when that is
    /// not the request.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub current: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub investigated: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub learned: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub completed: Vec<String>,
    /// Tasks not completed, the one in progress first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_read: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files_edited: Vec<String>,
}

impl Summary {
    pub fn is_empty(&self) -> bool {
        *self == Summary::default()
    }

    /// The summary of one session's events (in any order; one per id).
    pub fn of(events: &[&Event]) -> Summary {
        let mut events: Vec<&Event> = events.to_vec();
        events.sort_by(|a, b| (&a.timestamp, &a.id).cmp(&(&b.timestamp, &b.id)));
        let mut s = Summary::default();
        let mut read = Recent::new(FILES_MAX);
        let mut edited = Recent::new(FILES_MAX);
        let (mut investigated, mut learned, mut completed) =
            (Recent::text(), Recent::text(), Recent::text());
        let (mut decisions, mut rejected) = (Recent::text(), Recent::text());
        // The newest task list; the session event's is the list as the extractor last saw it.
        let mut tasks: Option<&[Task]> = None;
        let mut session: Option<&Event> = None;
        let mut prompt = "";
        for e in &events {
            if !e.prompt_context.is_empty() && e.kind != Kind::Session {
                prompt = &e.prompt_context;
            }
            match e.kind {
                // A commit's subject, whatever kind it was given; what a model read as done.
                _ if e.origin == Origin::Commit => completed.push(&e.summary),
                Kind::Feature if e.origin == Origin::Distilled => completed.push(&e.summary),
                // The version linked to the most commits is the fullest.
                Kind::Session if session.is_none_or(|s| s.commits.len() <= e.commits.len()) => {
                    session = Some(e)
                }
                Kind::Decision => decisions.push(&e.summary),
                Kind::Rejection => rejected.push(&e.summary),
                Kind::Exploration | Kind::Search => investigated.push(&e.summary),
                Kind::Discovery => learned.push(&e.summary),
                Kind::Read => e.files_affected.iter().for_each(|f| read.push(f)),
                Kind::Write => e.files_affected.iter().for_each(|f| edited.push(f)),
                _ => {}
            }
            if !e.tasks.is_empty() && e.kind != Kind::Session {
                tasks = Some(&e.tasks);
            }
        }
        if let Some(session) = session {
            s.request = truncate_words(&session.prompt_context, TEXT_MAX);
            for f in &session.files_affected {
                edited.push(f);
            }
            if !session.tasks.is_empty() {
                tasks = Some(&session.tasks);
            }
        }
        if s.request.is_empty() {
            s.request = events
                .iter()
                .map(|e| e.prompt_context.as_str())
                .find(|p| !p.is_empty())
                .map(|p| truncate_words(p, TEXT_MAX))
                .unwrap_or_default();
        }
        let tasks = tasks.unwrap_or_default();
        for t in tasks.iter().filter(|t| t.status == "completed") {
            completed.push(&t.subject);
        }
        let mut open: Vec<&Task> = tasks.iter().filter(|t| t.status != "completed").collect();
        open.sort_by_key(|t| t.status != "in_progress");
        s.pending = open.iter().map(|t| t.subject.clone()).collect();
        s.current = match open.first().filter(|t| t.status == "in_progress") {
            Some(t) => t.subject.clone(),
            None => {
                let latest = truncate_words(prompt, TEXT_MAX);
                if latest == s.request {
                    String::new()
                } else {
                    latest
                }
            }
        };
        s.investigated = investigated.items;
        s.learned = learned.items;
        s.completed = completed.items;
        s.decisions = decisions.items;
        s.rejected = rejected.items;
        s.files_read = read.items;
        s.files_edited = edited.items;
        s
    }
}

/// The most recent distinct items, in the order they were last seen, at most `max`.
struct Recent {
    items: Vec<String>,
    max: usize,
    /// Characters an item is cut to.
    chars: usize,
}

impl Recent {
    fn new(max: usize) -> Recent {
        Recent {
            items: Vec::new(),
            max,
            chars: usize::MAX,
        }
    }

    /// A list of sentences: [`ITEMS_MAX`] of them, each cut to [`ITEM_CHARS`].
    fn text() -> Recent {
        Recent {
            chars: ITEM_CHARS,
            ..Recent::new(ITEMS_MAX)
        }
    }

    fn push(&mut self, item: &str) {
        if item.is_empty() {
            return;
        }
        let item = truncate_words(item, self.chars);
        self.items.retain(|i| *i != item);
        self.items.push(item);
        if self.items.len() > self.max {
            self.items.remove(0);
        }
    }
}

/// The events of `session` from several stores (the pending queue, notes), one per id: of two
/// versions of an event, the one linked to more commits (the session event grows its list), else
/// the one seen first.
pub fn unique<'e>(events: impl IntoIterator<Item = &'e Event>) -> Vec<&'e Event> {
    let mut by_id: BTreeMap<&str, &Event> = BTreeMap::new();
    for e in events {
        match by_id.get(e.id.as_str()) {
            Some(old) if old.commits.len() >= e.commits.len() => {}
            _ => {
                by_id.insert(&e.id, e);
            }
        }
    }
    by_id.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: Kind, origin: Origin, summary: &str, at: &str) -> Event {
        let mut e = Event::new("s", &format!("{summary}{at}"), kind, origin, summary, at);
        e.prompt_context = "Add a cache to the API client".to_owned();
        e
    }

    #[test]
    fn a_session_is_summarized_from_its_events() {
        let mut session = event(Kind::Session, Origin::Prompt, "Add a cache", "t0");
        session.files_affected = vec!["src/cache.rs".into()];
        session.tasks = vec![
            Task {
                subject: "Write the cache".into(),
                status: "completed".into(),
            },
            Task {
                subject: "Add tests".into(),
                status: "pending".into(),
            },
            Task {
                subject: "Wire it into the client".into(),
                status: "in_progress".into(),
            },
        ];
        let mut read = event(Kind::Read, Origin::ToolSequence, "Read src/api.rs", "t1");
        read.files_affected = vec!["src/api.rs".into()];
        let explore = event(
            Kind::Exploration,
            Origin::Thinking,
            "Looked at the client",
            "t2",
        );
        let found = event(Kind::Discovery, Origin::Text, "The API sends ETags", "t3");
        let decided = event(Kind::Decision, Origin::Text, "Use a TTL map", "t4");
        let rejected = event(Kind::Rejection, Origin::Text, "An LRU is too complex", "t5");
        let commit = event(Kind::Feature, Origin::Commit, "Add a TTL cache", "t6");
        let mut wrote = event(Kind::Write, Origin::ToolSequence, "Wrote src/ttl.rs", "t7");
        wrote.files_affected = vec!["src/ttl.rs".into()];
        let mut later = event(Kind::Raw, Origin::Text, "hmm", "t8");
        later.prompt_context = "Now wire it in".into();
        let all = [
            &later, &wrote, &commit, &rejected, &decided, &found, &explore, &read, &session,
        ];
        let s = Summary::of(&all);
        assert_eq!(s.request, "Add a cache to the API client");
        assert_eq!(s.current, "Wire it into the client");
        assert_eq!(s.investigated, ["Looked at the client"]);
        assert_eq!(s.learned, ["The API sends ETags"]);
        assert_eq!(s.completed, ["Add a TTL cache", "Write the cache"]);
        assert_eq!(s.pending, ["Wire it into the client", "Add tests"]);
        assert_eq!(s.decisions, ["Use a TTL map"]);
        assert_eq!(s.rejected, ["An LRU is too complex"]);
        assert_eq!(s.files_read, ["src/api.rs"]);
        assert_eq!(s.files_edited, ["src/ttl.rs", "src/cache.rs"]);
    }

    #[test]
    fn without_tasks_the_current_task_is_the_latest_prompt() {
        let first = event(Kind::Decision, Origin::Text, "Use a TTL map", "t1");
        let mut second = event(Kind::Raw, Origin::Text, "hmm", "t2");
        second.prompt_context = "Make the TTL configurable".into();
        assert_eq!(
            Summary::of(&[&second, &first]).current,
            "Make the TTL configurable"
        );
        assert_eq!(
            Summary::of(&[&first]).current,
            "",
            "the request is not repeated"
        );
        assert!(Summary::of(&[]).is_empty());
    }

    #[test]
    fn lists_keep_the_most_recent_distinct_items() {
        let events: Vec<Event> = (0..12)
            .map(|i| {
                event(
                    Kind::Decision,
                    Origin::Text,
                    &format!("d{}", i % 10),
                    &format!("t{i:02}"),
                )
            })
            .collect();
        let refs: Vec<&Event> = events.iter().collect();
        let s = Summary::of(&refs);
        assert_eq!(
            s.decisions,
            ["d4", "d5", "d6", "d7", "d8", "d9", "d0", "d1"]
        );
    }

    #[test]
    fn a_list_item_is_cut_to_fit_the_continuation() {
        let long = "word ".repeat(32);
        let e = event(Kind::Decision, Origin::Text, long.trim(), "t0");
        let path = format!("src/{}.rs", "deep/".repeat(30));
        let mut written = event(Kind::Write, Origin::Text, "w", "t1");
        written.files_affected = vec![path.clone()];
        let s = Summary::of(&[&e, &written]);
        assert!(s.decisions[0].ends_with('…'));
        assert!(s.decisions[0].chars().count() <= ITEM_CHARS);
        // A file's path is never cut.
        assert_eq!(s.files_edited, [path]);
    }

    #[test]
    fn of_two_versions_the_one_on_more_commits_is_kept() {
        let a = event(Kind::Session, Origin::Prompt, "s", "t0");
        let mut b = a.clone();
        b.commits = vec!["c1".into(), "c2".into()];
        let kept = unique([&a, &b]);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].commits.len(), 2);
        assert_eq!(unique([&b, &a])[0].commits.len(), 2);
    }
}
