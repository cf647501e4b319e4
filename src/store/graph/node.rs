//! The nodes of the decision graph, made from the events in notes: one per session, one per
//! decision (docs/format.md, "The decision graph"). Pure functions of the events they are given, so
//! that a rebuild from the notes gives the same files as the updates that wrote them one session at
//! a time.
//!
//! A decision node is a `decision` event — its choice, rationale and the alternatives it names
//! — with the rejections and trade-offs of the same turn gathered under it. A rejection with no
//! decision in its turn is a node of its own (kind `rejection`): "X won't work because Y" is
//! worth keeping even when nothing was chosen.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::event::summary::Summary;
use crate::event::{Event, Kind, Origin, SCHEMA_VERSION, Task, summarize, truncate_words};

/// Prompts kept per session.
const PROMPTS_MAX: usize = 20;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SessionNode {
    pub schema_version: u32,
    pub session: String,
    /// The first prompt: what the session was asked to do.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub request: String,
    pub start: String,
    pub end: String,
    /// The prompts, in order (at most 20).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decisions: Vec<String>,
    /// Tasks not completed when the session's last commit was made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unfinished: Vec<String>,
    /// Earlier sessions whose commits this one's descend from and whose files it touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub built_on: Vec<String>,
    /// What the session investigated, learned, completed and left pending, from its events.
    #[serde(default, skip_serializing_if = "Summary::is_empty")]
    pub summary: Summary,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DecisionNode {
    pub schema_version: u32,
    /// The event id of the decision (or rejection) it was made from.
    pub id: String,
    /// `decision`, or `rejection` for a rejection that stands alone.
    pub kind: String,
    /// What was being decided: the prompt of the turn.
    pub subject: String,
    /// What was chosen; for a rejection that stands alone, its summary (also first in
    /// `rejected`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub choice: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rationale: String,
    /// Alternatives named as not taken, and the rejections of the same turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tradeoffs: Vec<String>,
    pub session: String,
    pub timestamp: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commits: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends_on: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub supersedes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicts_with: Vec<String>,
    /// The earlier decisions its maker said it replaces (a recorded decision's `supersedes`):
    /// it supersedes them whatever their subject or branch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replaces: Vec<String>,
    /// Where the event came from (`agent`, `human`, `text`, …); absent in nodes written before
    /// it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
}

impl DecisionNode {
    /// The decision's edges to earlier ones: `(supersedes|conflicts_with|depends_on, id)`.
    pub fn edges(&self) -> impl Iterator<Item = (&'static str, &str)> {
        [
            ("supersedes", &self.supersedes),
            ("conflicts_with", &self.conflicts_with),
            ("depends_on", &self.depends_on),
        ]
        .into_iter()
        .flat_map(|(kind, ids)| ids.iter().map(move |id| (kind, id.as_str())))
    }
}

/// One session's events, each with the commit its note is on.
pub struct SessionEvents<'a> {
    pub session: &'a str,
    pub events: Vec<(&'a Event, &'a str)>,
}

/// The session node and decision nodes of one session (edges between decisions left empty:
/// [`link_decisions`] draws them, knowing the other sessions).
pub fn build(input: &SessionEvents<'_>) -> (SessionNode, Vec<DecisionNode>) {
    // One event may be on several commits (a note copied by a rebase or a cherry-pick).
    let mut unique: BTreeMap<&str, (&Event, Vec<&str>)> = BTreeMap::new();
    for (e, commit) in &input.events {
        let entry = unique.entry(e.id.as_str()).or_insert((e, Vec::new()));
        if !entry.1.contains(commit) {
            entry.1.push(commit);
        }
    }
    let mut events: Vec<(&Event, Vec<&str>)> = unique.into_values().collect();
    events.sort_by(|a, b| (&a.0.timestamp, &a.0.id).cmp(&(&b.0.timestamp, &b.0.id)));
    let mut session = SessionNode {
        schema_version: SCHEMA_VERSION,
        session: input.session.to_owned(),
        ..SessionNode::default()
    };
    let mut commits: BTreeSet<&str> = BTreeSet::new();
    // (Events are in time order, so the first event seen on a commit is its earliest.)
    let mut files: BTreeSet<&str> = BTreeSet::new();
    // The newest session event: the fullest view of the session.
    let mut summary: Option<&Event> = None;
    for (e, on) in &events {
        commits.extend(on.iter().copied());
        if !e.timestamp.is_empty() {
            if session.start.is_empty() {
                session.start = e.timestamp.clone();
            }
            session.end = e.timestamp.clone();
        }
        if e.kind == Kind::Write {
            files.extend(e.files_affected.iter().map(String::as_str));
        }
        if e.kind == Kind::Session {
            if summary.is_none_or(|s| s.commits.len() <= e.commits.len()) {
                summary = Some(e);
            }
            continue;
        }
        let prompt = summarize(&e.prompt_context);
        if !prompt.is_empty()
            && session.prompts.len() < PROMPTS_MAX
            && !session.prompts.contains(&prompt)
        {
            session.prompts.push(prompt);
        }
    }
    if let Some(s) = summary {
        session.request = s.summary.clone();
        files.extend(s.files_affected.iter().map(String::as_str));
        session.unfinished = s
            .tasks
            .iter()
            .filter(|t: &&Task| t.status != "completed")
            .map(|t| t.subject.clone())
            .collect();
        if !s.timestamp.is_empty() && (session.start.is_empty() || s.timestamp < session.start) {
            session.start = s.timestamp.clone();
        }
    } else if let Some(first) = session.prompts.first() {
        session.request = first.clone();
    }
    // In the order the session made them: by the time of the first event on each.
    let mut first_seen: BTreeMap<&str, &str> = BTreeMap::new();
    for (e, on) in &events {
        for c in on {
            first_seen.entry(c).or_insert(e.timestamp.as_str());
        }
    }
    let mut ordered: Vec<&str> = commits.into_iter().collect();
    ordered.sort_by_key(|c| (first_seen.get(c).copied().unwrap_or(""), *c));
    session.commits = ordered.iter().map(|c| c.to_string()).collect();
    session.files = files.iter().map(|f| f.to_string()).collect();

    session.summary = Summary::of(&events.iter().map(|(e, _)| *e).collect::<Vec<_>>());
    let decisions = decisions(&events);
    session.decisions = decisions.iter().map(|d| d.id.clone()).collect();
    (session, decisions)
}

/// Decision nodes: each decision with the rejections and trade-offs of its turn; lone
/// rejections as their own nodes.
fn decisions(events: &[(&Event, Vec<&str>)]) -> Vec<DecisionNode> {
    // A turn is known by its prompt (events carry the prompt that led to them).
    let mut turns: BTreeMap<&str, Vec<&(&Event, Vec<&str>)>> = BTreeMap::new();
    for item in events {
        if item.0.kind.stands() {
            turns
                .entry(item.0.prompt_context.as_str())
                .or_default()
                .push(item);
        }
    }
    let mut out = Vec::new();
    for items in turns.values() {
        let chosen: Vec<_> = items
            .iter()
            .filter(|i| i.0.kind == Kind::Decision)
            .collect();
        let rejections: Vec<&Event> = items
            .iter()
            .filter(|i| i.0.kind == Kind::Rejection)
            .map(|i| i.0)
            .collect();
        let tradeoffs: Vec<String> = items
            .iter()
            .filter(|i| i.0.kind == Kind::Tradeoff)
            .map(|i| i.0.summary.clone())
            .collect();
        if chosen.is_empty() {
            for (e, commit) in items
                .iter()
                .filter(|i| i.0.kind == Kind::Rejection)
                .copied()
            {
                let mut node = node(e, commit, "rejection");
                node.rejected =
                    said_once(std::iter::once(e.summary.clone()).chain(e.alternatives.clone()));
                node.tradeoffs = tradeoffs.clone();
                out.push(node);
            }
            continue;
        }
        for (e, on) in chosen.into_iter().copied() {
            let mut node = node(e, on, "decision");
            node.rejected = said_once(
                e.alternatives
                    .iter()
                    .cloned()
                    .chain(rejections.iter().map(|r| r.summary.clone())),
            );
            node.tradeoffs = tradeoffs.clone();
            out.push(node);
        }
    }
    out.sort_by(|a, b| (&a.timestamp, &a.id).cmp(&(&b.timestamp, &b.id)));
    out
}

fn node(e: &Event, commits: &[&str], kind: &str) -> DecisionNode {
    let subject = if e.prompt_context.is_empty() {
        e.files_affected.join(", ")
    } else {
        summarize(&e.prompt_context)
    };
    DecisionNode {
        schema_version: SCHEMA_VERSION,
        id: e.id.clone(),
        kind: kind.to_owned(),
        subject,
        choice: e.summary.clone(),
        rationale: truncate_words(&e.rationale, 1500),
        session: e.session_id.clone(),
        timestamp: e.timestamp.clone(),
        files: e.files_affected.clone(),
        replaces: e.supersedes.clone(),
        origin: Some(e.origin),
        commits: {
            let mut commits: Vec<String> = commits.iter().map(|c| c.to_string()).collect();
            commits.sort();
            commits
        },
        ..DecisionNode::default()
    }
}

/// What was ruled out, each said once and none empty: an alternative the sentence before it
/// quotes already ("…rather than over-engineering this with helpers." and "over-engineering
/// this with helpers", a rejection's sentence and the alternative read out of it) is not said
/// again.
pub(crate) fn said_once(items: impl IntoIterator<Item = String>) -> Vec<String> {
    let bare = |s: &str| {
        s.trim_matches(|c: char| c == '…' || c.is_whitespace() || c.is_ascii_punctuation())
            .to_owned()
    };
    let mut out: Vec<String> = Vec::new();
    for item in items {
        let said = bare(&item);
        if !said.is_empty() && !out.iter().any(|o| o.contains(&said)) {
            out.push(item);
        }
    }
    out
}

/// The significant words of a decision, for telling whether two decisions are about the same
/// thing.
fn words(d: &DecisionNode) -> BTreeSet<String> {
    const STOP: [&str; 24] = [
        "about", "after", "because", "before", "could", "from", "have", "into", "just", "more",
        "need", "should", "since", "than", "that", "their", "then", "there", "these", "this",
        "when", "will", "with", "would",
    ];
    std::iter::once(&d.choice)
        .chain(&d.rejected)
        .flat_map(|text| text.split(|c: char| !c.is_alphanumeric()))
        .map(str::to_lowercase)
        .filter(|w| w.len() >= 4 && !STOP.contains(&w.as_str()))
        .collect()
}

/// Whether two decisions are about the same thing: they concern a common file and share a good
/// part of their significant words.
fn same_subject(a: &DecisionNode, b: &DecisionNode) -> bool {
    if !a.files.iter().any(|f| b.files.contains(f)) {
        return false;
    }
    let (wa, wb) = (words(a), words(b));
    let common = wa.intersection(&wb).count();
    let union = wa.union(&wb).count();
    common >= 2 && common * 4 >= union
}

/// Draw the edges of `new` decisions against `known` ones (and among themselves):
/// - a decision *supersedes* the ones its maker said it replaces, even recorded in the same
///   second;
/// - a later decision on the same subject *supersedes* an earlier one when the earlier one's
///   commit is an ancestor of the later one's (the later one was made knowing it), and
///   *conflicts with* it when neither commit descends from the other (parallel branches);
/// - a later decision of the same session about a file an earlier one concerned, on another
///   subject, *depends on* it.
///
/// `descends(a, b)`: whether commit `b` descends from (or is) commit `a`.
pub fn link_decisions(
    new: &mut [DecisionNode],
    known: &[DecisionNode],
    descends: &mut dyn FnMut(&str, &str) -> bool,
) {
    const EDGES_MAX: usize = 5;
    let snapshot: Vec<DecisionNode> = new.to_vec();
    for d in new.iter_mut() {
        d.depends_on.clear();
        d.supersedes.clear();
        d.conflicts_with.clear();
        for other in known.iter().chain(&snapshot) {
            if other.id == d.id {
                continue;
            }
            // Said by its maker, whatever the times (two records in one second tie).
            if d.replaces.contains(&other.id) {
                push_capped(&mut d.supersedes, &other.id, EDGES_MAX);
                continue;
            }
            if (other.timestamp.as_str(), &other.id) >= (d.timestamp.as_str(), &d.id) {
                continue;
            }
            let (Some(theirs), Some(ours)) = (other.commits.first(), d.commits.first()) else {
                continue;
            };
            if same_subject(other, d) {
                if descends(theirs, ours) {
                    push_capped(&mut d.supersedes, &other.id, EDGES_MAX);
                } else if !descends(ours, theirs) {
                    push_capped(&mut d.conflicts_with, &other.id, EDGES_MAX);
                }
            } else if other.session == d.session && other.files.iter().any(|f| d.files.contains(f))
            {
                push_capped(&mut d.depends_on, &other.id, EDGES_MAX);
            }
        }
    }
}

/// Add `id` to an edge list, keeping it sorted and at most `max` long (the first `max` ids in
/// order, whatever order the candidates came in: a rebuild and an update agree).
fn push_capped(list: &mut Vec<String>, id: &str, max: usize) {
    if list.iter().any(|x| x == id) {
        return;
    }
    list.push(id.to_owned());
    list.sort();
    list.truncate(max);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Origin;

    fn event(session: &str, source: &str, kind: Kind, text: &str, at: &str, prompt: &str) -> Event {
        Event {
            prompt_context: prompt.to_owned(),
            files_affected: vec!["src/cache.rs".to_owned()],
            alternatives: if kind == Kind::Decision {
                vec!["an LRU".to_owned()]
            } else {
                Vec::new()
            },
            ..Event::new(session, source, kind, Origin::Text, text, at)
        }
    }

    #[test]
    fn a_session_and_its_decisions_with_the_rejections_of_their_turn() {
        let a = event(
            "s",
            "m1",
            Kind::Decision,
            "Use a TTL map for the cache",
            "t1",
            "Add a cache",
        );
        let b = event(
            "s",
            "m2",
            Kind::Rejection,
            "A global lock won't scale",
            "t2",
            "Add a cache",
        );
        let c = event(
            "s",
            "m3",
            Kind::Rejection,
            "Redis is overkill here",
            "t3",
            "Why not Redis?",
        );
        let input = SessionEvents {
            session: "s",
            events: vec![(&a, "c1"), (&b, "c1"), (&c, "c2")],
        };
        let (session, decisions) = build(&input);
        assert_eq!(session.commits, ["c1", "c2"]);
        assert_eq!(session.prompts, ["Add a cache", "Why not Redis?"]);
        assert_eq!(session.request, "Add a cache");
        assert_eq!(decisions.len(), 2);
        assert_eq!(decisions[0].kind, "decision");
        assert_eq!(
            decisions[0].rejected,
            ["an LRU", "A global lock won't scale"]
        );
        assert_eq!(decisions[1].kind, "rejection");
        assert_eq!(decisions[1].subject, "Why not Redis?");
    }

    #[test]
    fn later_decisions_supersede_conflict_or_depend() {
        let mk = |id: &str, session: &str, at: &str, choice: &str, commit: &str| DecisionNode {
            id: id.to_owned(),
            session: session.to_owned(),
            timestamp: at.to_owned(),
            choice: choice.to_owned(),
            files: vec!["src/cache.rs".to_owned()],
            commits: vec![commit.to_owned()],
            ..DecisionNode::default()
        };
        let old = mk(
            "d1",
            "s1",
            "t1",
            "Use a TTL cache with a fixed expiry",
            "c1",
        );
        let mut new = vec![
            mk(
                "d2",
                "s2",
                "t2",
                "Use an LRU cache with a size bound instead of fixed expiry",
                "c2",
            ),
            mk(
                "d3",
                "s3",
                "t3",
                "Use a TTL cache with sliding expiry",
                "c3",
            ),
            mk("d4", "s2", "t4", "Log every eviction at debug level", "c2"),
        ];
        // c2 descends from c1; c3 is on a parallel branch.
        let mut descends = |a: &str, b: &str| a == b || (a == "c1" && b == "c2");
        link_decisions(&mut new, std::slice::from_ref(&old), &mut descends);
        assert_eq!(new[0].supersedes, ["d1"]);
        // On a parallel branch to both d1 and d2, on their subject.
        assert_eq!(new[1].conflicts_with, ["d1", "d2"]);
        assert!(new[1].supersedes.is_empty());
        assert_eq!(new[2].depends_on, ["d2"]);
        // Said to replace d1, on another subject and a parallel branch: it supersedes it.
        let mut said = mk("d5", "s3", "t5", "Keep responses in Redis", "c3");
        said.replaces = vec!["d1".to_owned()];
        let mut new = [said];
        link_decisions(&mut new, std::slice::from_ref(&old), &mut descends);
        assert_eq!(
            (new[0].supersedes.as_slice(), new[0].conflicts_with.len()),
            (&["d1".to_owned()][..], 0)
        );
        // Recorded in the same second as the one it replaces, its id sorting first.
        let mut said = mk("d0", "s1", "t1", "Keep responses in Redis", "c1");
        said.replaces = vec!["d1".to_owned()];
        let mut new = [said];
        link_decisions(&mut new, std::slice::from_ref(&old), &mut descends);
        assert_eq!(new[0].supersedes, ["d1"]);
    }

    #[test]
    fn an_alternative_its_rejection_quotes_is_not_said_twice() {
        let rejected = [
            "…rather than over-engineering this with additional helper functions.",
            "over-engineering this with additional helper functions",
            "a second cache, since the first is enough",
            "",
        ];
        assert_eq!(
            said_once(rejected.map(str::to_owned)),
            [rejected[0], rejected[2]]
        );
        // One that only looks alike is kept.
        let apart = ["So our current approach won't work.", "our other approach"];
        assert_eq!(said_once(apart.map(str::to_owned)), apart);
    }
}
