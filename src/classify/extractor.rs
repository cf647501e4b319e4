//! Records → events: a streaming state machine over one transcript.
//!
//! The extractor reads entries one at a time and keeps only bounded state: the current turn
//! (from one user prompt to the next) of the main thread and of the sidechain (subagent)
//! thread, the task list, and marks of recent edits. That state is serializable, so the
//! ingest layer saves it with the cursor and the next run resumes mid-turn.
//!
//! Events are drafted while a turn runs and emitted when it ends (the next prompt), because
//! what an assistant message led to — the files it touched, whether its tool calls failed or
//! were reverted — is only known later. [`Extractor::provisional`] emits the drafts of the
//! unfinished turns without changing the state; since ids depend only on the source, a later,
//! more complete emission of the same draft replaces it in the store.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use super::heuristic::{Verdict, alternatives, is_step, kind_of, narrates, says_why};
use super::options::{self, Choice, LaidOut};
use super::redact::{Cleaner, Redactor, Taint};
use super::sentences::{self, Form};
use super::tools::{
    CommitInfo, Op, check_of, commit_info, compress_input, discards_changes, file_of,
    heredoc_write, op_of, operation, runs_git_commit,
};
use crate::event::{
    Event, Kind, Origin, Outcome, PLAN_LABEL, SESSION_SOURCE, SUMMARY_MAX, SessionMeta, Task,
    ToolCall, event_id, fingerprint, summarize, truncate_words,
};
use crate::transcript::locate;
use crate::transcript::record::{
    Block, Content, Entry, Lenient, ToolInput, ToolUseResult, is_synthetic, text,
};
use crate::transcript::root::{self, Roots};

/// Reasoning text kept per assistant message (thinking and text each).
const GROUP_TEXT_MAX: usize = 64 * 1024;
const PROMPT_MAX: usize = 500;
pub const RATIONALE_MAX: usize = 1500;
const PLAN_MAX: usize = 4000;
/// The reason an undoing of edits gives (see [`reason_given`]).
const REASON_MAX: usize = 400;
/// What is kept of what a session says after a command failed, thinking and text each.
const SAID_MAX: usize = 8 * 1024;
const CALLS_PER_TURN_MAX: usize = 512;
/// Past this many calls a turn is split at the next message (see [`Extractor::split_turn`]).
const CALLS_PER_TURN_SPLIT: usize = 448;
const DRAFTS_PER_TURN_MAX: usize = 256;
const CALLS_PER_EVENT_MAX: usize = 10;
const FILES_PER_EVENT_MAX: usize = 20;
const ALTERNATIVES_MAX: usize = 5;
/// Paragraphs a lead-in's rationale takes from what follows it.
const INTRODUCED_MAX: usize = 6;
const TASKS_MAX: usize = 100;
/// Reads and searches kept per session (one event each per file or pattern).
const OPERATIONS_MAX: usize = 200;
const FILES_PER_SESSION_MAX: usize = 500;
const EDIT_MARKS_MAX: usize = 64;
/// Calls that change the task list or give a plan, waiting for their result.
const PROPOSED_MAX: usize = 16;
const COMMIT_COMMAND_MAX: usize = 8 * 1024;
/// Subagents whose mirrored messages are remembered as read or not.
const MIRRORED_AGENTS_MAX: usize = 256;
/// Side threads of mirrored subagents kept apart at once (see [`Extractor::switch_side`]).
const PARKED_MAX: usize = 16;

/// The agent id given to subagent work whose transcript names no agent.
pub const SIDECHAIN: &str = "sidechain";

/// Everything the extractor remembers between lines (and between runs).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct State {
    pub session_id: String,
    pub meta: SessionMeta,
    pub first_seen: String,
    pub last_seen: String,
    pub compactions: u32,
    main: Thread,
    side: Thread,
    tasks: Vec<TaskItem>,
    edits: VecDeque<EditMark>,
    /// Tool results seen so far: orders failures after edits.
    results: u64,
    /// The first prompt of the main thread (redacted): what the session was asked to do.
    #[serde(default)]
    request: String,
    /// Files the session's finished turns changed.
    #[serde(default)]
    files_written: BTreeSet<String>,
    /// The ids of the operation events (reads, searches) given so far: one each per session.
    #[serde(default)]
    operations: BTreeSet<String>,
    /// What the session saw of files whose content is never captured (hashes only).
    #[serde(default)]
    taint: Taint,
    /// Task lists, task updates and plans whose tool call has no result yet: they count once
    /// the call succeeds (a call that failed changed nothing).
    #[serde(default)]
    proposed: VecDeque<Proposal>,
    /// The folder the session's file paths are relative to, once known (see [`Roots::of`]).
    #[serde(default)]
    root: Option<String>,
    /// The last options the main thread laid out ("We need to either: 1. … 2. …"), which a
    /// later "Option 2 is simpler" names, and how many prompts came since: they are answered
    /// in the turn they are laid out in or the next one ("go with 2"), and forgotten after.
    #[serde(default)]
    options: Vec<Choice>,
    #[serde(default)]
    options_prompts: u8,
    /// The side threads of subagents mirrored side by side (see [`Extractor::switch_side`])
    /// but the one read last, each waiting for its next message.
    #[serde(default)]
    parked: Vec<Thread>,
}

impl State {
    /// What the session saw of excluded files, to share with its other transcripts' readers.
    pub fn taint(&self) -> &Taint {
        &self.taint
    }
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Thread {
    agent_id: Option<String>,
    /// What names the turn: the prompt's uuid, or the first message id.
    turn: String,
    prompt: String,
    group: Option<Group>,
    calls: Vec<Call>,
    drafts: Vec<Draft>,
    /// How many times this turn was cut short for holding too many tool calls.
    #[serde(default)]
    parts: u32,
    /// The last check of the turn that failed, while it stands (see [`Failure`]).
    #[serde(default)]
    failure: Option<Failure>,
}

/// One assistant message (its lines share `message.id`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Group {
    id: String,
    timestamp: String,
    thinking: String,
    text: String,
    first_call: usize,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Call {
    id: String,
    name: String,
    input: String,
    file: Option<String>,
    op: Op,
    outcome: Outcome,
    group: String,
    timestamp: String,
    /// The whole command of a Bash call that runs `git commit` (its message is in it).
    commit_command: Option<String>,
    /// Whether the call reads or writes a file whose content is never captured (its result
    /// taints the session; see [`Taint`]).
    #[serde(default)]
    excluded: bool,
    /// For a write: the hashes of the lines it added (see [`fingerprint`]).
    #[serde(default)]
    added: Vec<u32>,
    /// For a command: the check it runs ([`check_of`]), told from the whole command.
    #[serde(default)]
    check: Option<String>,
    /// For a command: whether it throws uncommitted changes away ([`discards_changes`]).
    #[serde(default)]
    discards: bool,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Draft {
    event: Event,
    /// Index in the turn's calls where the draft's message began.
    first_call: usize,
    group: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct TaskItem {
    id: String,
    subject: String,
    status: String,
}

/// Which thread of a transcript an entry is on: the main conversation, or a side chain (a
/// subagent's, inline in the transcripts of Claude Code 1.0.x). Saved as a boolean, `true` for
/// the side chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "bool", into = "bool")]
enum Chain {
    Main,
    Side,
}

impl From<bool> for Chain {
    fn from(side: bool) -> Chain {
        match side {
            true => Chain::Side,
            false => Chain::Main,
        }
    }
}

impl From<Chain> for bool {
    fn from(chain: Chain) -> bool {
        chain == Chain::Side
    }
}

/// What a tool call will change once it succeeds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Proposal {
    call: String,
    #[serde(rename = "side")]
    chain: Chain,
    timestamp: String,
    change: Change,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
enum Change {
    Tasks(Vec<TaskItem>),
    Task {
        id: String,
        subject: Option<String>,
        status: Option<String>,
    },
    Plan(String),
}

impl Change {
    /// The text it holds, to scrub.
    fn texts(&mut self) -> Vec<&mut String> {
        match self {
            Change::Tasks(tasks) => tasks.iter_mut().map(|t| &mut t.subject).collect(),
            Change::Task { subject, .. } => subject.iter_mut().collect(),
            Change::Plan(plan) => vec![plan],
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct EditMark {
    call: String,
    file: String,
    before: u64,
    after: u64,
    results: u64,
}

/// A check (a build, a test, a linter) that failed: what is undone after it, until the turn
/// ends or the same check passes, is undone because of it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Failure {
    command: String,
    /// The check it runs ([`check_of`]).
    #[serde(default)]
    check: String,
    results: u64,
    /// The rejection made of what was undone after this failure, which later undoings join.
    #[serde(default)]
    undone: Option<String>,
    /// What the session said since (its latest words, redacted as they come): where the reason
    /// for undoing a change is.
    #[serde(default)]
    text: String,
    #[serde(default)]
    thinking: String,
}

pub struct Extractor<'w> {
    state: State,
    roots: &'w Roots<'w>,
    redactor: &'w Redactor,
    out: Vec<Event>,
    /// Whether a subagent has a transcript of its own, read in its own right.
    own_transcript: &'w dyn Fn(&str) -> bool,
    /// What `own_transcript` said of each subagent so far.
    mirrored: HashMap<String, bool>,
}

impl<'w> Extractor<'w> {
    /// Resume from `state`; file paths are made relative to the session's root (found by
    /// `roots`), and every string passes through `redactor`.
    pub fn new(state: State, roots: &'w Roots<'w>, redactor: &'w Redactor) -> Self {
        Extractor {
            state,
            roots,
            redactor,
            out: Vec::new(),
            own_transcript: &|_| false,
            mirrored: HashMap::new(),
        }
    }

    /// Read the messages of a subagent mirrored in this transcript (Claude Code up to 2.1.4x
    /// writes them in both) only where `own_transcript` says it has no transcript of its own:
    /// one copied or imported without its subagents' still holds what they did.
    pub fn mirrors_unless(mut self, own_transcript: &'w dyn Fn(&str) -> bool) -> Self {
        self.own_transcript = own_transcript;
        self
    }

    /// Redaction and what the session saw of excluded files, as they stand.
    fn cleaner(&self) -> Cleaner<'_> {
        Cleaner {
            redactor: self.redactor,
            taint: &self.state.taint,
        }
    }

    /// `text` redacted, and scrubbed of what the session saw of excluded files.
    fn clean<'t>(&self, text: &'t str) -> Cow<'t, str> {
        self.cleaner().text(text)
    }

    pub fn state(&self) -> &State {
        &self.state
    }

    /// Take in what the session's other readers saw of excluded files (a subagent's read of
    /// `.env`, a hook's): it is scrubbed from what this transcript says after.
    pub fn learn(&mut self, hashes: impl IntoIterator<Item = u64>) {
        self.state.taint.extend(hashes);
    }

    /// The state as it may be written to disk: the text of open messages redacted, and every
    /// string scrubbed of what the session saw of excluded files by now — drafts made before
    /// it saw them included (everything else is redacted as it enters).
    pub fn state_to_save(&self) -> State {
        let mut state = self.state.clone();
        let clean = self.cleaner();
        for thread in [&mut state.main, &mut state.side] {
            if let Some(group) = thread.group.as_mut() {
                group.thinking = clean.text(&group.thinking).into_owned();
                group.text = clean.text(&group.text).into_owned();
            }
            if self.state.taint.is_empty() {
                continue;
            }
            thread.prompt = clean.text(&thread.prompt).into_owned();
            for draft in &mut thread.drafts {
                clean.event(&mut draft.event);
            }
            for call in &mut thread.calls {
                call.input = clean.text(&call.input).into_owned();
            }
            if let Some(failure) = thread.failure.as_mut() {
                for said in [
                    &mut failure.text,
                    &mut failure.thinking,
                    &mut failure.command,
                ] {
                    *said = clean.text(said).into_owned();
                }
            }
        }
        if !self.state.taint.is_empty() {
            state.request = clean.text(&state.request).into_owned();
            for option in &mut state.options {
                option.text = clean.text(&option.text).into_owned();
            }
            for task in &mut state.tasks {
                task.subject = clean.text(&task.subject).into_owned();
            }
            for proposal in &mut state.proposed {
                for text in proposal.change.texts() {
                    *text = clean.text(text).into_owned();
                }
            }
        }
        state
    }

    /// Events of finished turns, in order; each is redacted.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.out)
    }

    /// The events the unfinished turns would produce if they ended now, then the session event
    /// as it stands (see [`Kind::Session`]; none for a transcript without a main-thread
    /// prompt, such as a subagent's). The state is unchanged.
    pub fn provisional(&self) -> Vec<Event> {
        let mut copy = Extractor {
            state: self.state.clone(),
            roots: self.roots,
            redactor: self.redactor,
            out: Vec::new(),
            own_transcript: self.own_transcript,
            mirrored: HashMap::new(),
        };
        copy.end_all_parked();
        copy.end_turn(Chain::Side);
        copy.end_turn(Chain::Main);
        if let Some(session) = copy.session_event() {
            copy.emit(session);
        }
        copy.out
    }

    /// The session as a whole: its request, the files it changed and its task list. Which
    /// commits it made is the linker's to say.
    fn session_event(&self) -> Option<Event> {
        let state = &self.state;
        if state.request.is_empty() {
            return None;
        }
        let mut event = self.event(
            Kind::Session,
            &state.request,
            Origin::Prompt,
            SESSION_SOURCE,
            &state.first_seen,
            Chain::Main,
        );
        event.prompt_context = state.request.clone();
        event.files_affected = state.files_written.iter().cloned().collect();
        event.tasks = state
            .tasks
            .iter()
            .map(|t| Task {
                subject: t.subject.clone(),
                status: t.status.clone(),
            })
            .collect();
        Some(event)
    }

    pub fn feed(&mut self, entry: &Entry<'_>) {
        if let Some(ts) = text(&entry.timestamp) {
            if self.state.first_seen.is_empty() {
                self.state.first_seen = ts.to_owned();
            }
            self.state.last_seen = ts.to_owned();
        }
        update(&mut self.state.session_id, text(&entry.session_id));
        update(&mut self.state.meta.cwd, text(&entry.cwd));
        // A branch is named by whoever made it, a cloned repository's author included
        // (`feature/ghp_…`): redacted as it enters, it is stored nowhere as it was, the saved
        // state included.
        if let Some(branch) = text(&entry.git_branch) {
            let branch = self.clean(branch);
            update(&mut self.state.meta.branch, Some(&branch));
        }
        update(&mut self.state.meta.version, text(&entry.version));
        let chain = Chain::from(entry.is_sidechain.0 == Some(true));
        if chain == Chain::Side {
            // Legacy inline sidechains (Claude Code 1.0.x) carry no agent id.
            let agent = self.agent_name(text(&entry.agent_id));
            if self.state.side.agent_id.as_deref() != Some(agent) {
                self.state.side.agent_id = Some(agent.to_owned());
            }
        }
        match text(&entry.kind) {
            Some("assistant") => self.assistant(entry, chain),
            Some("user") => self.user(entry, chain),
            Some("system") if text(&entry.subtype) == Some("compact_boundary") => {
                self.state.compactions += 1
            }
            Some("progress") => self.mirror(entry),
            _ => {}
        }
    }

    /// The id a transcript gives a subagent, when it is one ([`locate::is_agent_id`]) that
    /// redaction leaves as it is. Any other is told as [`SIDECHAIN`]: it is stored with every
    /// event of the subagent, and looked for as a file's name.
    fn agent_name<'t>(&self, id: Option<&'t str>) -> &'t str {
        match id {
            Some(id) if locate::is_agent_id(id) && self.clean(id) == id => id,
            _ => SIDECHAIN,
        }
    }

    /// Make `agent`'s the side thread that messages go to. Subagents run side by side, their
    /// messages interleaved, a call's result often after another's message: each keeps a
    /// thread of its own (its turn, calls and results), parked while another's messages come.
    fn switch_side(&mut self, agent: &str) {
        let parked = &mut self.state.parked;
        let next = match parked
            .iter()
            .position(|t| t.agent_id.as_deref() == Some(agent))
        {
            Some(at) => parked.remove(at),
            None => Thread {
                agent_id: Some(agent.to_owned()),
                ..Thread::default()
            },
        };
        let current = std::mem::replace(&mut self.state.side, next);
        if current.turn.is_empty() && current.calls.is_empty() && current.group.is_none() {
            return;
        }
        if self.state.parked.len() == PARKED_MAX {
            let oldest = self.state.parked.remove(0);
            self.end_parked(oldest);
        }
        self.state.parked.push(current);
    }

    /// End the turn of a parked side thread.
    fn end_parked(&mut self, thread: Thread) {
        let current = std::mem::replace(&mut self.state.side, thread);
        self.end_turn(Chain::Side);
        self.state.side = current;
    }

    /// End the turns of all parked side threads: the main thread moved on.
    fn end_all_parked(&mut self) {
        for thread in std::mem::take(&mut self.state.parked) {
            self.end_parked(thread);
        }
    }

    /// A subagent's message as the main transcript mirrors it, read as its side chain when the
    /// subagent's own transcript is not read.
    fn mirror(&mut self, entry: &Entry<'_>) {
        let Some(progress) = entry
            .data
            .get()
            .filter(|p| text(&p.kind) == Some("agent_progress"))
        else {
            return;
        };
        let Some(message) = progress.message.get() else {
            return;
        };
        let agent = self.agent_name(text(&progress.agent_id));
        let own = match self.mirrored.get(agent) {
            Some(&own) => own,
            None => {
                let own = (self.own_transcript)(agent);
                if self.mirrored.len() < MIRRORED_AGENTS_MAX {
                    self.mirrored.insert(agent.to_owned(), own);
                }
                own
            }
        };
        if own {
            return;
        }
        if self.state.side.agent_id.as_deref() != Some(agent) {
            self.switch_side(agent);
        }
        match text(&message.kind) {
            Some("assistant") => self.assistant(message, Chain::Side),
            Some("user") => self.user(message, Chain::Side),
            _ => {}
        }
    }

    fn thread(&mut self, chain: Chain) -> &mut Thread {
        match chain {
            Chain::Main => &mut self.state.main,
            Chain::Side => &mut self.state.side,
        }
    }

    fn assistant(&mut self, entry: &Entry<'_>, chain: Chain) {
        let Some(message) = entry.message.get() else {
            return;
        };
        if is_synthetic(message) {
            return;
        }
        update(&mut self.state.meta.model, text(&message.model));
        let id = text(&message.id)
            .or(text(&entry.uuid))
            .unwrap_or("")
            .to_owned();
        if self.thread(chain).group.as_ref().is_none_or(|g| g.id != id) {
            self.end_group(chain);
            if self.thread(chain).calls.len() >= CALLS_PER_TURN_SPLIT {
                self.split_turn(chain);
            }
            let thread = self.thread(chain);
            if thread.turn.is_empty() {
                thread.turn = id.clone();
            }
            let first_call = thread.calls.len();
            thread.group = Some(Group {
                id,
                timestamp: text(&entry.timestamp).unwrap_or("").to_owned(),
                first_call,
                ..Group::default()
            });
        }
        let Content::Blocks(blocks) = &message.content else {
            return;
        };
        for block in blocks {
            match text(&block.kind) {
                Some("thinking") => self.append_text(chain, text(&block.thinking), true),
                Some("text") => self.append_text(chain, text(&block.text), false),
                Some("tool_use") => self.tool_use(block, chain, entry),
                _ => {}
            }
        }
    }

    fn append_text(&mut self, chain: Chain, t: Option<&str>, thinking: bool) {
        let Some(t) = t.filter(|t| !t.trim().is_empty()) else {
            return;
        };
        if self.thread(chain).failure.is_some() {
            // Redacted whole before it joins what was said, whose start is cut as it grows.
            let cleaned = self.clean(t).into_owned();
            if let Some(failure) = self.thread(chain).failure.as_mut() {
                let said = if thinking {
                    &mut failure.thinking
                } else {
                    &mut failure.text
                };
                push_latest(said, &cleaned, SAID_MAX);
            }
        }
        let Some(group) = self.thread(chain).group.as_mut() else {
            return;
        };
        let buf = if thinking {
            &mut group.thinking
        } else {
            &mut group.text
        };
        let room = GROUP_TEXT_MAX.saturating_sub(buf.len() + 2);
        if room == 0 {
            return;
        }
        if !buf.is_empty() {
            buf.push_str("\n\n");
        }
        // A block larger than the room left is cut, not dropped: at the last whitespace that
        // fits, so that no word (a secret, whose rule needs it whole) is cut in two.
        let mut end = t.len().min(room);
        if end < t.len() {
            end = t[..end].rfind(char::is_whitespace).unwrap_or(0);
        }
        buf.push_str(&t[..end]);
    }

    fn tool_use(&mut self, block: &Block<'_>, chain: Chain, entry: &Entry<'_>) {
        let name = text(&block.name).unwrap_or("").to_owned();
        let input: ToolInput<'_> = block
            .input
            .get()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default();
        let id = text(&block.id).unwrap_or("").to_owned();
        let mut op = op_of(&name);
        // A command that only writes a file from a heredoc is a write of that file.
        let written = text(&input.command)
            .filter(|_| op == Op::Bash)
            .and_then(heredoc_write);
        let heredoc = written.is_some();
        let input = match written {
            Some((path, content)) => {
                op = Op::Write;
                ToolInput {
                    file_path: Lenient(Some(Cow::Owned(path))),
                    content: Lenient(Some(Cow::Owned(content))),
                    command: input.command,
                    ..ToolInput::default()
                }
            }
            None => input,
        };
        // Redacted as it enters: the path goes into event sources and the saved state too.
        if let Some(path) = file_of(&input).filter(|_| self.state.root.is_none()) {
            self.state.root = self.roots.of(&self.state.meta.cwd, &path);
        }
        let path = file_of(&input).map(|f| self.relative(&f));
        let excluded = match op {
            Op::Bash => text(&input.command)
                .is_some_and(|c| self.redactor.names_excluded(c, |w| self.relative(w))),
            _ => path.as_deref().is_some_and(|f| self.redactor.excluded(f)),
        };
        // A file outside the repository is never recorded; what it held is judged above.
        let file = path
            .filter(|p| root::inside_repository(p))
            .map(|f| self.clean(&f).into_owned());
        if excluded {
            self.taint_with(&input);
        }
        let timestamp = text(&entry.timestamp).unwrap_or("").to_owned();
        self.propose(&name, &input, &id, chain, &timestamp);
        match name.as_str() {
            "Edit" | "MultiEdit" => self.edit(&id, file.as_deref(), &input, chain, &timestamp),
            _ => {}
        }
        let inside = file.as_deref();
        self.read_or_search(&name, &input, inside, chain, &timestamp);
        // What a write adds, as line hashes; nothing of a file never to capture, nor of a
        // line that holds a secret.
        let added = if op == Op::Write && !excluded && inside.is_some() {
            self.added_lines(&input)
        } else {
            Vec::new()
        };
        let commit_command: Option<String> = text(&input.command)
            .filter(|c| op == Op::Bash && runs_git_commit(c))
            .map(|c| self.clean(c).chars().take(COMMIT_COMMAND_MAX).collect());
        let command = text(&input.command).filter(|_| op == Op::Bash);
        let check = command
            .and_then(check_of)
            .map(|c| self.clean(&c).into_owned());
        let discards = command.is_some_and(discards_changes);
        // A command on a file never to capture is kept as a mark (a heredoc's text would be
        // the file's); a tool's call on one, as its path.
        let input = if excluded && (op == Op::Bash || heredoc) {
            "[REDACTED:excluded-file]".to_owned()
        } else if file.is_none() && file_of(&input).is_some() {
            OUTSIDE.to_owned()
        } else {
            compress_input(&name, &input, &self.cleaner())
        };
        let thread = self.thread(chain);
        let group = thread
            .group
            .as_ref()
            .map(|g| g.id.clone())
            .unwrap_or_default();
        if thread.calls.len() < CALLS_PER_TURN_MAX {
            thread.calls.push(Call {
                id,
                name,
                input,
                file,
                op,
                outcome: Outcome::Unknown,
                group,
                timestamp,
                commit_command,
                excluded,
                added,
                check,
                discards,
            });
        }
    }

    /// A call on a file never to capture: what it writes there is that file's content too,
    /// scrubbed from all the session says after.
    fn taint_with(&mut self, input: &ToolInput<'_>) {
        let edits = input
            .edits
            .get()
            .into_iter()
            .flatten()
            .filter_map(|e| e.get());
        let written = [
            &input.content,
            &input.new_string,
            &input.old_string,
            &input.new_source,
            &input.command,
        ]
        .into_iter()
        .filter_map(text)
        .chain(edits.flat_map(|e| {
            [text(&e.new_string), text(&e.old_string)]
                .into_iter()
                .flatten()
        }));
        for content in written {
            self.state.taint.add(content);
        }
    }

    /// A call that changes the task list or the plan once it succeeds: held until its result
    /// says so.
    fn propose(
        &mut self,
        name: &str,
        input: &ToolInput<'_>,
        id: &str,
        chain: Chain,
        timestamp: &str,
    ) {
        let change = match name {
            "TodoWrite" => self.todo_write(input),
            // Redacted as they are held: the state they wait in is saved.
            "TaskUpdate" => text(&input.task_id).map(|task| Change::Task {
                id: task.to_owned(),
                subject: text(&input.subject).map(|s| self.clean(s).into_owned()),
                status: text(&input.status).map(str::to_owned),
            }),
            "ExitPlanMode" => text(&input.plan).map(|plan| {
                let plan: String = plan.chars().take(GROUP_TEXT_MAX).collect();
                Change::Plan(self.clean(&plan).into_owned())
            }),
            _ => None,
        };
        let Some(change) = change else {
            return;
        };
        if self.state.proposed.len() == PROPOSED_MAX {
            self.state.proposed.pop_front();
        }
        self.state.proposed.push_back(Proposal {
            call: id.to_owned(),
            chain,
            timestamp: timestamp.to_owned(),
            change,
        });
    }

    /// A read or a search: an event of its own, once per session and file or pattern.
    fn read_or_search(
        &mut self,
        name: &str,
        input: &ToolInput<'_>,
        inside: Option<&str>,
        chain: Chain,
        timestamp: &str,
    ) {
        if let Some(event) = operation(
            &self.state.session_id,
            name,
            input,
            inside,
            timestamp,
            &self.cleaner(),
        ) && self.state.operations.len() < OPERATIONS_MAX
            && self.state.operations.insert(event.id.clone())
        {
            let thread = self.thread(chain);
            let event = Event {
                prompt_context: thread.prompt.clone(),
                agent_id: if chain == Chain::Side {
                    thread.agent_id.clone()
                } else {
                    None
                },
                session: self.state.meta.clone(),
                ..event
            };
            self.emit(event);
        }
    }

    fn user(&mut self, entry: &Entry<'_>, chain: Chain) {
        if let Some(plan) = text(&entry.plan_content) {
            let uuid = text(&entry.uuid).unwrap_or("plan").to_owned();
            self.plan(plan, &uuid, chain, text(&entry.timestamp).unwrap_or(""));
        }
        let Some(message) = entry.message.get() else {
            return;
        };
        let prompt = match &message.content {
            Content::Text(t) => Some(t.to_string()),
            Content::Blocks(blocks) => {
                let mut results = false;
                let mut prompt = String::new();
                for block in blocks {
                    if block.is("tool_result") {
                        results = true;
                        self.tool_result(block, entry, chain);
                    } else if block.is("text") {
                        prompt.push_str(text(&block.text).unwrap_or(""));
                    }
                }
                (!results).then_some(prompt)
            }
            Content::None => None,
        };
        let Some(prompt) = prompt else { return };
        if entry.is_meta.0 == Some(true) || entry.is_compact_summary.0 == Some(true) {
            return;
        }
        let Some(prompt) = prompt_text(&prompt) else {
            return;
        };
        let prompt = self.clean(&prompt).into_owned();
        self.end_turn(chain);
        if chain == Chain::Main {
            // The subagents of the turn before are done.
            self.end_all_parked();
            if self.state.request.is_empty() && asks_for_work(&prompt) {
                self.state.request = truncate_words(&prompt, PROMPT_MAX);
            }
        }
        let thread = self.thread(chain);
        thread.turn = text(&entry.uuid).unwrap_or("").to_owned();
        thread.prompt = truncate_words(&prompt, PROMPT_MAX);
        // The user's own words can carry decisions ("don't use X; use Y"); a subagent's
        // prompt is the main thread's instructions, whose reasoning is read there.
        if chain == Chain::Side {
            return;
        }
        let source = thread.turn.clone();
        self.state.options_prompts = self.state.options_prompts.saturating_add(1);
        if self.state.options_prompts > 1 {
            self.state.options.clear();
        }
        let timestamp = text(&entry.timestamp).unwrap_or("").to_owned();
        self.reasoning(
            &prompt,
            Origin::Prompt,
            &source,
            &timestamp,
            chain,
            &[Kind::Decision, Kind::Rejection, Kind::Tradeoff],
        );
    }

    fn tool_result(&mut self, block: &Block<'_>, entry: &Entry<'_>, chain: Chain) {
        self.state.results += 1;
        let id = text(&block.tool_use_id).unwrap_or("");
        let result: ToolUseResult<'_> = entry
            .tool_use_result
            .get()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_default();
        let error = block.is_error.0 == Some(true) || result.interrupted.0 == Some(true);
        if let Some(at) = self.state.proposed.iter().position(|p| p.call == id) {
            let proposal = self.state.proposed.remove(at).expect("found above");
            if !error {
                self.apply(proposal);
            }
        }
        let timestamp = text(&entry.timestamp).unwrap_or("").to_owned();
        let results = self.state.results;
        let thread = self.thread(chain);
        let Some(call) = thread.calls.iter_mut().find(|c| c.id == id) else {
            return;
        };
        if call.outcome != Outcome::Reverted {
            call.outcome = if error {
                Outcome::Error
            } else {
                Outcome::Success
            };
        }
        let (name, command, commit_command, excluded) = (
            call.name.clone(),
            call.input.clone(),
            call.commit_command.clone(),
            call.excluded,
        );
        let (check, discards) = (call.check.clone(), call.discards);
        self.taint_with_result(&name, excluded, block, &result);
        match name.as_str() {
            "Bash" => {
                // Only a check's failure tells the change was wrong (`git stash pop` failing
                // says nothing of it), and not one the user stopped or declined.
                let stopped = || result.interrupted.0 == Some(true) || declined(block);
                match check {
                    Some(check) if error && !stopped() => {
                        self.thread(chain).failure = Some(Failure {
                            command: command.clone(),
                            check,
                            results,
                            undone: None,
                            text: String::new(),
                            thinking: String::new(),
                        });
                    }
                    // The check that failed passes now: what is undone after (the debugging
                    // aids added meanwhile) is not undone because of it.
                    Some(check) if !error => {
                        let thread = self.thread(chain);
                        if thread.failure.as_ref().is_some_and(|f| f.check == check) {
                            thread.failure = None;
                        }
                    }
                    _ => {}
                }
                if discards && !error {
                    self.reset_after_failure(&command, id, chain, &timestamp);
                }
                let stdout = text(&result.stdout)
                    .map(str::to_owned)
                    .unwrap_or_else(|| result_text(block));
                let commit = commit_command
                    .and_then(|c| commit_info(&c, &stdout))
                    .filter(|_| !error);
                if let Some(mut info) = commit {
                    if let Some(sha) = result
                        .git_operation
                        .get()
                        .and_then(|g| g.commit.get())
                        .and_then(|c| c.sha.get())
                    {
                        info.sha = Some(sha.clone());
                    }
                    self.commit(info, id, chain, &timestamp);
                }
            }
            "TaskCreate" if !error => {
                if let Some(task) = result.task.get() {
                    let subject = text(&task.subject).map(str::to_owned).unwrap_or(command);
                    let task_id = task.id.get().map(|t| t.0.to_string()).unwrap_or_default();
                    self.set_task(task_id, Some(subject), Some("pending"));
                    self.task_event(chain, &timestamp);
                }
            }
            _ => {}
        }
    }

    /// What a call's result shows of excluded files: all of it for a call on one, the lines a
    /// search or a command over many files printed after their paths.
    fn taint_with_result(
        &mut self,
        name: &str,
        excluded: bool,
        block: &Block<'_>,
        result: &ToolUseResult<'_>,
    ) {
        if excluded {
            // The content of a file never to capture, as the tool gave it.
            for seen in [text(&result.stdout), text(&result.stderr)]
                .into_iter()
                .flatten()
                .map(str::to_owned)
                .chain(result_texts(block))
            {
                self.state.taint.add(&seen);
            }
        } else if matches!(op_of(name), Op::Bash | Op::Search) {
            // A search or a command over many files (`grep -r`, `rg`) prints the lines of
            // excluded files among the rest, each after its path.
            let (roots, root, cwd) = (
                self.roots,
                self.state.root.clone(),
                self.state.meta.cwd.clone(),
            );
            let redactor = self.redactor;
            for seen in [text(&result.stdout)]
                .into_iter()
                .flatten()
                .map(str::to_owned)
                .chain(result_texts(block))
            {
                self.state.taint.add_lines_of(&seen, |path| {
                    redactor.excluded(&roots.relative(root.as_deref(), &cwd, path))
                });
            }
        }
    }

    fn end_group(&mut self, chain: Chain) {
        let Some(mut group) = self.thread(chain).group.take() else {
            return;
        };
        // Redacted whole, before it is split into sentences: a split can part a secret from
        // the name that tells it is one (`Authorization: Bearer …`, a key's BEGIN line).
        group.thinking = self.clean(&group.thinking).into_owned();
        group.text = self.clean(&group.text).into_owned();
        let mut matched = false;
        if !group.thinking.is_empty() {
            matched |= self.reasoning(
                &group.thinking,
                Origin::Thinking,
                &group.id,
                &group.timestamp,
                chain,
                &REASONING,
            );
        }
        if !group.text.is_empty() {
            self.reasoning(
                &group.text,
                Origin::Text,
                &group.id,
                &group.timestamp,
                chain,
                &REASONING,
            );
        }
        if !group.thinking.is_empty() && !matched {
            let (paragraphs, sentences) = sentences::split(&group.thinking);
            // "Good!" says nothing; prefer the first sentence with some substance.
            let telling = sentences
                .iter()
                .find(|s| s.text(&paragraphs).split_whitespace().count() >= 6);
            if let Some(first) = telling.or(sentences.first()) {
                let mut event = self.event(
                    Kind::Raw,
                    first.text(&paragraphs),
                    Origin::Thinking,
                    &group.id,
                    &group.timestamp,
                    chain,
                );
                event.rationale = truncate_words(&group.thinking, RATIONALE_MAX);
                self.draft(event, chain);
            }
        }
        // Drafts made above point at this group's calls.
        let thread = self.thread(chain);
        for d in thread.drafts.iter_mut().filter(|d| d.group == group.id) {
            d.first_call = group.first_call;
        }
    }

    /// Classify the sentences of `body` (redacted) into drafts (one per kind and source); tell
    /// whether any sentence matched.
    fn reasoning(
        &mut self,
        body: &str,
        origin: Origin,
        source: &str,
        timestamp: &str,
        chain: Chain,
        kinds: &[Kind],
    ) -> bool {
        let (paragraphs, sentences) = sentences::split(body);
        // A subagent's options are its own business, neither kept nor named.
        let mut laid = match chain {
            Chain::Main => options::laid_out(body),
            Chain::Side => LaidOut::default(),
        };
        let mut matched = false;
        for (at, s) in sentences.iter().enumerate() {
            let sentence = s.text(&paragraphs);
            let Some(Verdict { kind, from }) =
                kind_of(sentence, s.form).filter(|v| kinds.contains(&v.kind))
            else {
                continue;
            };
            if origin == Origin::Prompt && asked(sentence) {
                continue;
            }
            matched = true;
            let paragraph = &*without_narration(&paragraphs, &sentences, at);
            // What a finding says does not work is the code as it stands, not an option not
            // taken.
            let alts = match kind {
                Kind::Decision | Kind::Rejection | Kind::Tradeoff => alternatives(sentence),
                _ => Vec::new(),
            };
            let id = event_id(&self.state.session_id, source, kind);
            if let Some(draft) = self
                .thread(chain)
                .drafts
                .iter_mut()
                .find(|d| d.event.id == id)
            {
                let e = &mut draft.event;
                if !e.rationale.contains(paragraph)
                    && e.rationale.len() + paragraph.len() < RATIONALE_MAX
                {
                    e.rationale.push_str("\n\n");
                    e.rationale.push_str(paragraph);
                }
                for alt in alts {
                    if e.alternatives.len() < ALTERNATIVES_MAX && !e.alternatives.contains(&alt) {
                        e.alternatives.push(alt);
                    }
                }
                continue;
            }
            // Told from its choice when too long to be a summary whole; with the sentence it
            // points back to when it does ("That won't work.").
            let before = (at.checked_sub(1).map(|b| &sentences[b]))
                .filter(|b| b.paragraph == s.paragraph)
                .map(|b| b.text(&paragraphs));
            let summary = match from {
                0 => with_antecedent(sentence, before),
                _ => Cow::Owned(format!("…{}", &sentence[from..])),
            };
            let summary = match chain {
                Chain::Main => {
                    options::spelled_out(&summary, || laid.before(s.source, &self.state.options))
                }
                Chain::Side => Cow::Borrowed(&*summary),
            };
            let mut event = self.event(kind, &summary, origin, source, timestamp, chain);
            event.rationale = truncate_words(
                &introduced(paragraph, &paragraphs[s.paragraph + 1..]),
                RATIONALE_MAX,
            );
            event.alternatives = alts.into_iter().take(ALTERNATIVES_MAX).collect();
            self.draft(event, chain);
        }
        match laid.lists.pop() {
            Some((_, last)) => (self.state.options, self.state.options_prompts) = (last, 0),
            None if laid.offered_at.is_some() => self.state.options.clear(),
            None => {}
        }
        matched
    }

    fn event(
        &self,
        kind: Kind,
        summary: &str,
        origin: Origin,
        source: &str,
        timestamp: &str,
        chain: Chain,
    ) -> Event {
        let thread = match chain {
            Chain::Main => &self.state.main,
            Chain::Side => &self.state.side,
        };
        Event {
            agent_id: if chain == Chain::Side {
                thread.agent_id.clone()
            } else {
                None
            },
            prompt_context: thread.prompt.clone(),
            session: self.state.meta.clone(),
            ..Event::new(
                &self.state.session_id,
                source,
                kind,
                origin,
                summary,
                timestamp,
            )
        }
    }

    /// Add or replace (by id) a draft of the current turn.
    fn draft(&mut self, event: Event, chain: Chain) {
        let thread = self.thread(chain);
        let group = thread
            .group
            .as_ref()
            .map(|g| g.id.clone())
            .unwrap_or_else(|| event.source.clone());
        let first_call = thread.calls.len();
        if let Some(d) = thread.drafts.iter_mut().find(|d| d.event.id == event.id) {
            d.event = event;
            return;
        }
        thread.drafts.push(Draft {
            event,
            first_call,
            group,
        });
        if thread.drafts.len() > DRAFTS_PER_TURN_MAX {
            // A runaway turn: emit its older half now rather than hold it.
            let older: Vec<Draft> = thread.drafts.drain(..DRAFTS_PER_TURN_MAX / 2).collect();
            let calls = thread.calls.clone();
            for d in older {
                self.emit(complete(d, &calls));
            }
        }
    }

    fn end_turn(&mut self, chain: Chain) {
        self.end_group(chain);
        let thread = std::mem::take(self.thread(chain));
        let mut events: Vec<Event> = thread
            .drafts
            .into_iter()
            .map(|d| complete(d, &thread.calls))
            .collect();
        // One write event per file the turn changed.
        let mut files: Vec<&str> = Vec::new();
        // An edit that failed changed nothing.
        let wrote = |c: &&Call| c.op == Op::Write && c.outcome != Outcome::Error;
        for call in thread.calls.iter().filter(wrote) {
            if let Some(f) = call.file.as_deref().filter(|f| !files.contains(f)) {
                files.push(f);
            }
        }
        for file in &files {
            if self.state.files_written.len() < FILES_PER_SESSION_MAX {
                self.state.files_written.insert((*file).to_owned());
            }
        }
        let agent_id = thread.agent_id.clone();
        for file in files {
            let calls: Vec<&Call> = thread
                .calls
                .iter()
                .filter(|c| wrote(c) && c.file.as_deref() == Some(file))
                .collect();
            let created = calls.iter().all(|c| c.name == "Write");
            let verb = if created { "Wrote" } else { "Edited" };
            let summary = match calls.len() {
                1 => format!("{verb} {file}"),
                n => format!("{verb} {file} ({n} changes)"),
            };
            let source = format!("{}:{file}", thread.turn);
            let mut event = Event {
                prompt_context: thread.prompt.clone(),
                agent_id: agent_id.clone(),
                ..self.event(
                    Kind::Write,
                    &summary,
                    Origin::ToolSequence,
                    &source,
                    "",
                    Chain::Main,
                )
            };
            event.timestamp = calls[0].timestamp.clone();
            event.tool_calls = calls
                .iter()
                .take(CALLS_PER_EVENT_MAX)
                .map(|c| compressed(c))
                .collect();
            event.files_affected = vec![file.to_owned()];
            event.lines = fingerprint::smallest(
                calls.iter().flat_map(|c| c.added.iter().copied()),
                fingerprint::KEPT_MAX,
            );
            events.push(event);
        }
        let agent = if chain == Chain::Side { agent_id } else { None };
        *self.thread(chain) = Thread {
            agent_id: agent,
            ..Thread::default()
        };
        for event in events {
            self.emit(event);
        }
    }

    /// A turn with very many tool calls (a long autonomous run, a subagent) ends here and goes
    /// on as a new part with the same prompt, so that its state stays bounded and no later
    /// call — a commit, an edit — is lost. Done between messages, when their results are in.
    fn split_turn(&mut self, chain: Chain) {
        let thread = self.thread(chain);
        let (turn, prompt, parts) = (thread.turn.clone(), thread.prompt.clone(), thread.parts + 1);
        self.end_turn(chain);
        let thread = self.thread(chain);
        let base = turn.split('#').next().unwrap_or("").to_owned();
        thread.turn = format!("{base}#{parts}");
        thread.prompt = prompt;
        thread.parts = parts;
    }

    fn emit(&mut self, mut event: Event) {
        self.cleaner().event(&mut event);
        self.out.push(event);
    }

    fn plan(&mut self, plan: &str, source: &str, chain: Chain, timestamp: &str) {
        let plan = &*self.clean(plan);
        let (paragraphs, sentences) = sentences::split(plan);
        let what = plan_summary(&paragraphs, &sentences);
        let mut event = self.event(
            Kind::Decision,
            &format!("{PLAN_LABEL}{what}"),
            Origin::Plan,
            source,
            timestamp,
            chain,
        );
        event.rationale = truncate_words(plan.trim(), PLAN_MAX);
        self.draft(event, chain);
        self.reasoning(
            plan,
            Origin::Plan,
            source,
            timestamp,
            chain,
            &[Kind::Rejection, Kind::Tradeoff],
        );
    }

    /// A commit the session made: its subject is the event, its body (trailers left out) the
    /// rationale. The message is in git already, so its body is not mined for reasoning.
    fn commit(&mut self, mut info: CommitInfo, source: &str, chain: Chain, timestamp: &str) {
        info.message = self.clean(&info.message).into_owned();
        let (subject, body) = info.message.split_once('\n').unwrap_or((&info.message, ""));
        let kind = commit_kind(subject);
        let mut event = self.event(kind, subject, Origin::Commit, source, timestamp, chain);
        event.rationale = truncate_words(without_trailers(body), RATIONALE_MAX);
        event.commits = info.sha.into_iter().collect();
        self.draft(event, chain);
    }

    fn edit(
        &mut self,
        call: &str,
        file: Option<&str>,
        input: &ToolInput<'_>,
        chain: Chain,
        timestamp: &str,
    ) {
        let Some(file) = file else { return };
        let pairs = edit_pairs(input)
            .into_iter()
            .filter_map(|(old, new)| Some((old?, new)));
        for (old, new) in pairs {
            let (before, after) = (hash(old), hash(new));
            let undone = self
                .state
                .edits
                .iter()
                .rev()
                .find(|m| m.file == file && m.before == after && m.after == before)
                .cloned();
            if let Some(mark) = &undone
                && (self.thread(chain).failure.as_ref()).is_some_and(|f| f.results > mark.results)
            {
                // The change tried went from what this edit puts back to what it takes out;
                // never told of a file whose content is not captured.
                let tried = short_change(new, old)
                    .filter(|_| !self.redactor.excluded(file))
                    .map(|change| self.clean(&change).into_owned());
                self.revert(
                    &[mark.call.as_str()],
                    &[file],
                    tried.as_deref(),
                    call,
                    chain,
                    timestamp,
                );
            }
            if self.state.edits.len() == EDIT_MARKS_MAX {
                self.state.edits.pop_front();
            }
            let results = self.state.results;
            self.state.edits.push_back(EditMark {
                call: call.to_owned(),
                file: file.to_owned(),
                before,
                after,
                results,
            });
        }
    }

    /// A Bash command that throws changes away after a failure (`git checkout -- f`,
    /// `git restore`, `git reset --hard`) turns the edits before the failure into a rejection.
    fn reset_after_failure(&mut self, command: &str, call: &str, chain: Chain, timestamp: &str) {
        let Some(failure) = self.thread(chain).failure.clone() else {
            return;
        };
        let marks: Vec<EditMark> = self
            .state
            .edits
            .iter()
            .filter(|m| m.results < failure.results)
            .cloned()
            .collect();
        if marks.is_empty() {
            return;
        }
        let named: Vec<&EditMark> = marks
            .iter()
            .filter(|m| command.contains(m.file.as_str()))
            .collect();
        let undone: Vec<&EditMark> = if named.is_empty() {
            marks.iter().collect()
        } else {
            named
        };
        let calls: Vec<&str> = undone.iter().map(|m| m.call.as_str()).collect();
        let mut files: Vec<&str> = Vec::new();
        for m in &undone {
            if !files.contains(&m.file.as_str()) {
                files.push(&m.file);
            }
        }
        self.revert(&calls, &files, None, call, chain, timestamp);
        self.state.edits.retain(|m| m.results >= failure.results);
    }

    /// Edits undone after a check failed (the thread's [`Failure`]): a rejection when the
    /// session said why since the failure, which later undoings after the same failure join.
    /// Undone with no reason given, the calls are marked reverted and no more is told: that a
    /// check failed says nothing of what was wrong with the change. `tried` is the change, when
    /// one short edit says it.
    fn revert(
        &mut self,
        calls: &[&str],
        files: &[&str],
        tried: Option<&str>,
        source: &str,
        chain: Chain,
        timestamp: &str,
    ) {
        let thread = self.thread(chain);
        for c in thread
            .calls
            .iter_mut()
            .filter(|c| calls.contains(&c.id.as_str()))
        {
            c.outcome = Outcome::Reverted;
        }
        let Some(failure) = thread.failure.clone() else {
            return;
        };
        let joined = failure
            .undone
            .as_ref()
            .and_then(|id| thread.drafts.iter_mut().find(|d| &d.event.id == id));
        if let Some(draft) = joined {
            let e = &mut draft.event;
            for f in files {
                if !e.files_affected.iter().any(|x| x == f)
                    && e.files_affected.len() < FILES_PER_EVENT_MAX
                {
                    e.files_affected.push(f.to_string());
                }
            }
            if e.files_affected.len() > 1 {
                e.summary = summarize(&undone(&e.files_affected, &failure.command, None));
            }
            return;
        }
        let Some(reason) = reason_given(&failure) else {
            return;
        };
        let files: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        let mut event = self.event(
            Kind::Rejection,
            &undone(&files, &failure.command, tried),
            Origin::ToolSequence,
            source,
            timestamp,
            chain,
        );
        event.files_affected = files;
        event.rationale = reason;
        if let Some(failure) = self.thread(chain).failure.as_mut() {
            failure.undone = Some(event.id.clone());
        }
        self.draft(event, chain);
    }

    /// The task list a TodoWrite call sets.
    fn todo_write(&self, input: &ToolInput<'_>) -> Option<Change> {
        let todos = input.todos.get()?;
        Some(Change::Tasks(
            todos
                .iter()
                .filter_map(|t| t.get())
                .take(TASKS_MAX)
                .enumerate()
                .map(|(i, t)| TaskItem {
                    id: (i + 1).to_string(),
                    subject: self.clean(text(&t.content).unwrap_or("")).into_owned(),
                    status: text(&t.status).unwrap_or("pending").to_owned(),
                })
                .collect(),
        ))
    }

    /// What a tool call that succeeded changes.
    fn apply(&mut self, p: Proposal) {
        match p.change {
            Change::Tasks(tasks) => {
                self.state.tasks = tasks;
                self.task_event(p.chain, &p.timestamp);
            }
            Change::Task {
                id,
                subject,
                status,
            } => {
                self.set_task(id, subject, status.as_deref());
                self.task_event(p.chain, &p.timestamp);
            }
            Change::Plan(plan) => self.plan(&plan, &p.call, p.chain, &p.timestamp),
        }
    }

    fn set_task(&mut self, id: String, subject: Option<String>, status: Option<&str>) {
        let subject = subject.map(|s| self.clean(&s).into_owned());
        let tasks = &mut self.state.tasks;
        if status == Some("deleted") {
            tasks.retain(|t| t.id != id);
            return;
        }
        let count = tasks.len();
        match tasks.iter_mut().find(|t| t.id == id) {
            Some(t) => {
                if let Some(s) = subject {
                    t.subject = s;
                }
                if let Some(s) = status {
                    t.status = s.to_owned();
                }
            }
            None if count < TASKS_MAX => tasks.push(TaskItem {
                id,
                subject: subject.unwrap_or_default(),
                status: status.unwrap_or("pending").to_owned(),
            }),
            None => {}
        }
    }

    /// The task list as one event per turn, replaced as the list changes.
    fn task_event(&mut self, chain: Chain, timestamp: &str) {
        let tasks = &self.state.tasks;
        if tasks.is_empty() {
            return;
        }
        let done = tasks.iter().filter(|t| t.status == "completed").count();
        let now = tasks
            .iter()
            .find(|t| t.status == "in_progress")
            .map(|t| format!("; now: {}", t.subject));
        let next = tasks
            .iter()
            .find(|t| t.status == "pending")
            .map(|t| format!("; next: {}", t.subject));
        let summary = format!(
            "Tasks: {done} of {} done{}",
            tasks.len(),
            now.or(next).unwrap_or_default()
        );
        let list: Vec<Task> = tasks
            .iter()
            .map(|t| Task {
                subject: t.subject.clone(),
                status: t.status.clone(),
            })
            .collect();
        let turn = self.thread(chain).turn.clone();
        let mut event = self.event(
            Kind::ToolCall,
            &summary,
            Origin::Tasks,
            &format!("tasks:{turn}"),
            timestamp,
            chain,
        );
        event.tasks = list;
        self.draft(event, chain);
    }

    /// The hashes of the lines a write call adds (see [`fingerprint`]): all of a written file or
    /// notebook cell, the lines an edit's new text has that its old text had not. Lines that
    /// redaction or what the session saw of excluded files would change are left out.
    fn added_lines(&self, input: &ToolInput<'_>) -> Vec<u32> {
        let mut pairs: Vec<(Option<&str>, &str)> = edit_pairs(input);
        if let Some(content) = text(&input.content).or(text(&input.new_source)) {
            pairs.push((None, content));
        }
        let mut added = std::collections::BTreeSet::new();
        for (old, new) in pairs {
            let old = old.unwrap_or("");
            let before = fingerprint::hashes(old);
            for line in new.lines() {
                if let Some(h) = fingerprint::hash(line)
                    && !before.contains(&h)
                    && self.clean(line) == line
                {
                    added.insert(h);
                }
            }
        }
        fingerprint::smallest(added, fingerprint::KEPT_MAX)
    }

    fn relative(&self, path: &str) -> String {
        self.roots
            .relative(self.state.root.as_deref(), &self.state.meta.cwd, path)
    }
}

/// What a call on a file outside the repository records of its input.
const OUTSIDE: &str = "(a file outside the repository)";

const REASONING: [Kind; 5] = [
    Kind::Decision,
    Kind::Rejection,
    Kind::Tradeoff,
    Kind::Exploration,
    Kind::Discovery,
];

/// The fewest characters of the sentence before that a summary takes in.
const ANTECEDENT_MIN: usize = 24;

/// `sentence`, and before it `before` (the sentence before it in its paragraph), when it opens
/// by pointing back ("That won't work.", "But this would change the semantics", "This ensures
/// …"): alone it does not say what was ruled out or decided. `before` is cut from its start,
/// at a word, to keep the summary within [`SUMMARY_MAX`]: the sentence itself is never cut for
/// it, and one with too little room left stays alone.
fn with_antecedent<'s>(sentence: &'s str, before: Option<&str>) -> Cow<'s, str> {
    // A label ("Note:", "Option 2:") points at nothing.
    let Some(before) = before
        .map(str::trim)
        .filter(|b| !b.ends_with(':') && b.split_whitespace().count() >= 3)
    else {
        return Cow::Borrowed(sentence);
    };
    if !points_back(sentence) {
        return Cow::Borrowed(sentence);
    }
    let room = SUMMARY_MAX.saturating_sub(sentence.chars().count() + 1);
    if before.chars().count() <= room {
        return Cow::Owned(format!("{before} {sentence}"));
    }
    if room < ANTECEDENT_MIN {
        return Cow::Borrowed(sentence);
    }
    // The last `room - 1` characters, from the first word that starts among them.
    let cut = before
        .char_indices()
        .rev()
        .nth(room - 2)
        .map_or(0, |(i, _)| i);
    let tail = before[cut..]
        .split_once(char::is_whitespace)
        .map_or("", |(_, rest)| rest.trim_start());
    match tail.is_empty() {
        true => Cow::Borrowed(sentence),
        false => Cow::Owned(format!("…{tail} {sentence}")),
    }
}

/// Whether `sentence` opens on a word that points at what came before it: "this", "that",
/// "these" or "those", after a "so", "but", "and" or the like.
fn points_back(sentence: &str) -> bool {
    let mut words = sentence.split_whitespace().map(|w| {
        let letters = w.find(|c: char| !c.is_alphabetic()).unwrap_or(w.len());
        w[..letters].to_lowercase()
    });
    let marker = words.next();
    let mut first = marker.clone();
    if marker.as_deref().is_some_and(|w| {
        matches!(
            w,
            "so" | "but" | "and" | "actually" | "still" | "however" | "yet" | "ok" | "okay"
        )
    }) {
        first = words.next();
    }
    // "So that…" says what for, not what.
    let purpose = marker.as_deref() == Some("so") && first.as_deref() == Some("that");
    !purpose && first.is_some_and(|w| matches!(w.as_str(), "this" | "that" | "these" | "those"))
}

/// A paragraph with what it introduces: the list or paragraphs after it when it ends in a colon
/// ("The fix is to add a nolint comment, since the pattern is deliberate:").
fn introduced<'p>(paragraph: &'p str, after: &[String]) -> Cow<'p, str> {
    if !paragraph.trim_end().ends_with(':') {
        return Cow::Borrowed(paragraph);
    }
    let mut joined = paragraph.to_owned();
    for next in after.iter().take(INTRODUCED_MAX) {
        if joined.len() + next.len() > RATIONALE_MAX {
            break;
        }
        joined.push_str("\n- ");
        joined.push_str(next);
    }
    Cow::Owned(joined)
}

/// The paragraph of sentence `at` as its rationale: without the sentences beside it that only
/// narrate the work ("Let me fix that.", "Now I need to update the test.", "Good!"), which a
/// later reader has no use for. A lead-in that ends the paragraph introduces what follows
/// ([`introduced`]) and stays, unless it is a step of the work ("Let me fix the helper:", not
/// "I need to either:").
fn without_narration<'p>(
    paragraphs: &'p [String],
    sentences: &[sentences::Sentence],
    at: usize,
) -> Cow<'p, str> {
    let paragraph = sentences[at].paragraph;
    // Sentences come in the order of their paragraphs.
    let first = sentences.partition_point(|s| s.paragraph < paragraph);
    let beside = &sentences[first..sentences.partition_point(|s| s.paragraph <= paragraph)];
    let last = first + beside.len() - 1;
    let kept: Vec<&str> = (first..)
        .zip(beside)
        .map(|(i, s)| (i, s.text(paragraphs)))
        .filter(|&(i, text)| {
            let leads_on = i == last && text.trim_end().ends_with(':') && !is_step(text);
            i == at || leads_on || !narrates(text)
        })
        .map(|(_, text)| text.trim())
        .collect();
    match kept.len() == beside.len() {
        true => Cow::Borrowed(&paragraphs[paragraph]),
        false => Cow::Owned(kept.join(" ")),
    }
}

/// Fill in what a draft led to: the tool calls of its message (or, when it made none, of the
/// next message that did) and the files they touched.
fn complete(draft: Draft, calls: &[Call]) -> Event {
    let mut event = draft.event;
    let after = calls.get(draft.first_call..).unwrap_or(&[]);
    let own: Vec<&Call> = after.iter().filter(|c| c.group == draft.group).collect();
    let chosen: Vec<&Call> = if own.is_empty() {
        match after.first() {
            Some(first) => after
                .iter()
                .take_while(|c| c.group == first.group)
                .collect(),
            None => Vec::new(),
        }
    } else {
        own
    };
    if event.tool_calls.is_empty() {
        event.tool_calls = chosen
            .iter()
            .take(CALLS_PER_EVENT_MAX)
            .map(|c| compressed(c))
            .collect();
    }
    if event.files_affected.is_empty() {
        let mut files: Vec<String> = Vec::new();
        for op in [Op::Write, Op::Read] {
            for c in chosen.iter().filter(|c| c.op == op) {
                if let Some(f) = c.file.as_ref().filter(|f| !files.contains(f)) {
                    files.push(f.clone());
                }
            }
        }
        files.truncate(FILES_PER_EVENT_MAX);
        event.files_affected = files;
    }
    event
}

/// The (old, new) text pairs of an Edit or a MultiEdit, in order; an edit without its old text
/// has `None`.
fn edit_pairs<'i>(input: &'i ToolInput<'_>) -> Vec<(Option<&'i str>, &'i str)> {
    let single = text(&input.new_string).map(|new| (text(&input.old_string), new));
    let multi = input
        .edits
        .get()
        .into_iter()
        .flatten()
        .filter_map(|p| p.get())
        .filter_map(|pair| Some((text(&pair.old_string), text(&pair.new_string)?)));
    single.into_iter().chain(multi).collect()
}

fn compressed(call: &Call) -> ToolCall {
    ToolCall {
        name: call.name.clone(),
        input: call.input.clone(),
        outcome: call.outcome,
    }
}

/// A commit message's body without its trailers (`Co-Authored-By: …`, `Signed-off-by: …`): its
/// last paragraph when each of its lines is a `Token: value` and one token is a trailer's
/// (`…-by`, or one git and its forges know), as `git interpret-trailers` tells them.
fn without_trailers(body: &str) -> &str {
    let trimmed = body.trim();
    let start = trimmed.rfind("\n\n").map_or(0, |i| i + 2);
    let last = &trimmed[start..];
    let tokens: Option<Vec<&str>> = last.lines().map(trailer_token).collect();
    let known = |t: &str| {
        let t = t.to_ascii_lowercase();
        t.ends_with("-by") || matches!(t.as_str(), "change-id" | "fixes" | "closes" | "cc" | "bug")
    };
    match tokens {
        Some(tokens) if tokens.iter().any(|t| known(t)) => trimmed[..start].trim_end(),
        _ => trimmed,
    }
}

/// The token of a `Token: value` line.
fn trailer_token(line: &str) -> Option<&str> {
    line.split_once(": ")
        .map(|(token, _)| token)
        .filter(|t| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
}

fn commit_kind(subject: &str) -> Kind {
    let lower = subject.to_ascii_lowercase();
    let prefix = lower.split([':', '(', '!']).next().unwrap_or("");
    match prefix {
        "feat" | "feature" => return Kind::Feature,
        "fix" | "bugfix" | "hotfix" => return Kind::Bugfix,
        "refactor" => return Kind::Refactor,
        _ => {}
    }
    let first = lower.split_whitespace().next().unwrap_or("");
    match first {
        "add" | "adds" | "added" | "implement" | "implements" | "support" | "introduce" => {
            Kind::Feature
        }
        "fix" | "fixes" | "fixed" => Kind::Bugfix,
        "refactor" | "rename" | "move" | "extract" | "simplify" | "clean" | "split" => {
            Kind::Refactor
        }
        _ => Kind::ToolCall,
    }
}

/// A typed prompt, or `None` for injected text (command output, reminders, notifications).
pub(crate) fn prompt_text(raw: &str) -> Option<String> {
    let t = raw.trim();
    if t.is_empty() {
        return None;
    }
    let injected = [
        "<local-command-stdout>",
        "<local-command-stderr>",
        "<system-reminder>",
        "<task-notification>",
        "<bash-",
        "Caveat:",
        "[Request interrupted",
    ];
    if injected.iter().any(|p| t.starts_with(p)) {
        return None;
    }
    if let Some(rest) = t.strip_prefix("<command-name>") {
        let name = rest.split("</command-name>").next().unwrap_or("").trim();
        let args = t
            .split("<command-args>")
            .nth(1)
            .and_then(|a| a.split("</command-args>").next())
            .unwrap_or("")
            .trim();
        return Some(if args.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {args}")
        });
    }
    if t.starts_with("<command-message>") {
        return None;
    }
    Some(t.to_owned())
}

/// How the rejection of an edit undone after a command failed starts.
pub(crate) const REVERTED: &str = "Reverted the change to ";

/// Append `t` to `buf` as a paragraph, keeping its last `max` bytes or so, cut where a paragraph
/// or a word ends.
fn push_latest(buf: &mut String, t: &str, max: usize) {
    if !buf.is_empty() {
        buf.push_str("\n\n");
    }
    buf.push_str(t);
    if buf.len() > max {
        let mut cut = buf.len() - max;
        while !buf.is_char_boundary(cut) {
            cut += 1;
        }
        // At a paragraph's end if one is near, else at a word's.
        let rest = &buf[cut..];
        let cut = cut
            + rest
                .find("\n\n")
                .filter(|&at| at < max / 2)
                .or_else(|| rest.find(char::is_whitespace))
                .unwrap_or(rest.len());
        buf.drain(..cut);
    }
}

/// What the session said since a check failed (redacted as it came), as the reason for undoing a
/// change: its latest sentences that say why ([`says_why`]), the reply's before the thinking's.
fn reason_given(failure: &Failure) -> Option<String> {
    for said in [&failure.text, &failure.thinking] {
        let (paragraphs, sentences) = sentences::split(said);
        let mut reason: Vec<&str> = Vec::new();
        let mut room = REASON_MAX;
        for s in sentences.iter().rev() {
            let sentence = s.text(&paragraphs);
            if sentence.len() > room || !says_why(sentence, s.form) || reason.contains(&sentence) {
                continue;
            }
            room -= sentence.len();
            reason.push(sentence);
        }
        if !reason.is_empty() {
            reason.reverse();
            return Some(reason.join(" "));
        }
    }
    None
}

/// Whether a tool's result says the user declined the call: it did not run, so it did not fail.
fn declined(block: &Block<'_>) -> bool {
    result_text(block).starts_with("The user doesn't want to proceed with this tool use")
}

/// The summary of a change to `files` undone after `failed` failed: the change itself when it
/// was one short edit of one file (`tried`).
fn undone(files: &[String], failed: &str, tried: Option<&str>) -> String {
    // Where its errors went is no part of what failed.
    let failed = failed.replace(" 2>&1", "");
    match (files, tried) {
        ([one], Some(tried)) => format!("Reverted {tried} in {one} after `{failed}` failed"),
        ([one], None) => format!("{REVERTED}{one} after `{failed}` failed"),
        (many, _) => format!("{REVERTED}{} files after `{failed}` failed", many.len()),
    }
}

/// "`from` → `to`" when both are short and on one line, to be read at a glance.
fn short_change(from: &str, to: &str) -> Option<String> {
    const SIDE_MAX: usize = 60;
    let (from, to) = (from.trim(), to.trim());
    let short = |s: &str| s.chars().count() <= SIDE_MAX && !s.contains(['\n', '`']);
    (short(from) && short(to) && !from.is_empty() && !to.is_empty())
        .then(|| format!("`{from}` → `{to}`"))
}

/// Claude Code's own commands that take arguments and still ask for no work on the code.
const SETTINGS_COMMANDS: &[&str] = &["/model", "/compact", "/add-dir", "/config", "/mcp"];

/// Whether a prompt asks for work: a slash command on its own (`/clear`, `/ide`) or one of
/// [`SETTINGS_COMMANDS`] does not, so that a session's request is the first prompt that does.
/// A path pasted alone (`/src/cache.rs`) is no command.
fn asks_for_work(prompt: &str) -> bool {
    let name = prompt.split_whitespace().next().unwrap_or("");
    let command = (name.strip_prefix('/')).is_some_and(|n| {
        !n.is_empty()
            && n.chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '_' | '-' | ':'))
    });
    !(command && (name.len() == prompt.trim().len() || SETTINGS_COMMANDS.contains(&name)))
}

/// Whether a sentence of a prompt asks rather than says, though people type it without a
/// question mark (one with it is no decision already): "can we use `checkpointID` instead of
/// `cpID`", "why didn't you…".
fn asked(sentence: &str) -> bool {
    const OPENERS: &[&str] = &[
        "can",
        "could",
        "would",
        "should",
        "shall",
        "does",
        "did",
        "is",
        "are",
        "why",
        "how",
        "what",
        "where",
        "when",
        "which",
        "will",
        "isn't",
        "shouldn't",
        "wouldn't",
    ];
    let first = sentence.split_whitespace().next().unwrap_or("");
    let first = first
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
        .to_ascii_lowercase();
    OPENERS.contains(&first.as_str())
}

/// The text of a tool result's content, whether a string or text blocks.
fn result_texts(block: &Block<'_>) -> Vec<String> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Content {
        Text(String),
        Blocks(Vec<serde_json::Value>),
    }
    let Some(raw) = block.content.get() else {
        return Vec::new();
    };
    match serde_json::from_str::<Content>(raw.get()) {
        Ok(Content::Text(t)) => vec![t],
        Ok(Content::Blocks(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text")?.as_str().map(str::to_owned))
            .collect(),
        Err(_) => Vec::new(),
    }
}

fn result_text(block: &Block<'_>) -> String {
    block
        .content
        .get()
        .and_then(|raw| serde_json::from_str::<String>(raw.get()).ok())
        .unwrap_or_default()
}

fn update(slot: &mut String, value: Option<&str>) {
    if let Some(v) = value.filter(|v| !v.is_empty() && *v != slot.as_str()) {
        *slot = v.to_owned();
    }
}

/// What a plan is about, for its summary: what it sets out to do in its own words (its goal),
/// else its title with why it is needed (the first sentence of its context): "Versioned
/// stanzas for shell config files — Completion setup appends blindly to rc files…". A title
/// alone reads as a heading. The goal is given as written: "npm …" is no "Npm …", and the
/// rationale shown beside the summary finds it there.
fn plan_summary(paragraphs: &[String], sentences: &[sentences::Sentence]) -> String {
    if let Some(goal) = plan_goal(paragraphs, sentences) {
        return goal.to_owned();
    }
    // A plan that opens with a section ("## Context") has no title.
    let title = (paragraphs.first())
        .filter(|title| !section(title))
        .map(|title| untitled(title));
    let why = first_under(paragraphs, sentences, CONTEXT);
    match (title, why) {
        (Some(title), Some(why)) => format!("{title} — {why}"),
        (Some(said), None) | (None, Some(said)) => said.to_owned(),
        (None, None) => (sentences.iter())
            .find(|s| states(s, paragraphs))
            .map_or("plan", |s| s.text(paragraphs))
            .to_owned(),
    }
}

/// The headings under which a plan says what it sets out to do.
const GOAL: &[&str] = &[
    "goal",
    "goals",
    "solution",
    "overview",
    "summary",
    "approach",
    "proposal",
    "decision",
    "the fix",
    "fix",
    "change",
    "the change",
    "proposed change",
];

/// The headings under which a plan says why it is needed.
const CONTEXT: &[&str] = &["context", "background", "problem", "motivation"];

/// Whether a plan's first line names one of its sections, not the plan ("Context", "Goal:";
/// not "Fix: Gemini session path").
fn section(heading: &str) -> bool {
    one_of(heading, GOAL) || one_of(heading, CONTEXT)
}

/// Whether `heading` is one of `names` (lower case, without a colon), whatever its case.
fn one_of(heading: &str, names: &[&str]) -> bool {
    let heading = heading.trim_end_matches(':');
    names.iter().any(|n| n.eq_ignore_ascii_case(heading))
}

/// What a plan sets out to do in its own words: the first sentence under its goal, solution or
/// overview ("Replace the technical warning with a friendlier message."), when that sentence
/// states it rather than introduce a list ("Remove these fields:"), or a goal said inline ("The
/// goal: wrap our text in versioned blocks so…", "**Goal:** Wrap…").
fn plan_goal<'p>(paragraphs: &'p [String], sentences: &[sentences::Sentence]) -> Option<&'p str> {
    const INLINE: &[&str] = &["the goal:", "our goal:", "goal:"];
    first_under(paragraphs, sentences, GOAL).or_else(|| {
        sentences.iter().enumerate().find_map(|(i, s)| {
            let text = s.text(paragraphs);
            let phrase = INLINE.iter().find(|g| {
                text.get(..g.len())
                    .is_some_and(|head| head.eq_ignore_ascii_case(g))
            })?;
            if s.form != Form::Prose {
                return None;
            }
            let said = text[phrase.len()..].trim_start();
            if !said.is_empty() {
                return says_it(said).then_some(said);
            }
            // "The goal: Wrap…" is split at its colon, "**Goal:**" may stand on a line of its
            // own: the goal is the sentence after it.
            let next = sentences.get(i + 1)?;
            states(next, paragraphs).then(|| next.text(paragraphs))
        })
    })
}

/// The first sentence under one of `headings` (lower case, without a colon) that states
/// something.
fn first_under<'p>(
    paragraphs: &'p [String],
    sentences: &[sentences::Sentence],
    headings: &[&str],
) -> Option<&'p str> {
    let at = (sentences.iter())
        .position(|s| s.form == Form::Heading && one_of(s.text(paragraphs), headings))?;
    let first = sentences[at + 1..]
        .iter()
        .find(|s| s.paragraph != sentences[at].paragraph)?;
    states(first, paragraphs).then(|| first.text(paragraphs))
}

/// Whether a sentence states something: prose that [`says_it`].
fn states(sentence: &sentences::Sentence, paragraphs: &[String]) -> bool {
    sentence.form == Form::Prose && says_it(sentence.text(paragraphs))
}

/// Whether `text` says something of its own: five words or more, not a lead-in to a list.
fn says_it(text: &str) -> bool {
    !text.ends_with(':') && text.split_whitespace().count() >= 5
}

/// A plan's title without the "Plan:" it often starts with ("# Plan: Simplify onboarding"), which
/// its event's summary says already.
fn untitled(title: &str) -> &str {
    match title.get(..5) {
        Some(head) if head.eq_ignore_ascii_case("plan:") => title[5..].trim_start(),
        _ => title,
    }
}

fn hash(s: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sentence_that_points_back_is_summed_up_with_the_one_before() {
        let before = Some("Using `git log --follow` would find the renames.");
        assert_eq!(
            with_antecedent("That won't work on a shallow clone.", before),
            "Using `git log --follow` would find the renames. That won't work on a shallow clone."
        );
        assert_eq!(
            with_antecedent("But this would change the semantics.", before),
            "Using `git log --follow` would find the renames. But this would change the semantics."
        );
        // One that says what it is about stays alone, as does one with nothing before it.
        for alone in ["A TTL map won't work here.", "Thistle is a name."] {
            assert_eq!(with_antecedent(alone, before), alone);
        }
        assert_eq!(
            with_antecedent("That won't work.", None),
            "That won't work."
        );
        let labelled = "This is acceptable for now.";
        assert_eq!(with_antecedent(labelled, Some("Note:")), labelled);
        let purpose = "So that the hook never waits on the network.";
        assert_eq!(with_antecedent(purpose, before), purpose);
        // A long sentence before is cut from its start, at a word; the summary fits.
        let long = format!(
            "{}the old cursor re-read the file from the start.",
            "word ".repeat(40)
        );
        let summary = with_antecedent("That is quadratic.", Some(&long));
        assert_eq!(
            summary,
            format!(
                "…{}the old cursor re-read the file from the start. That is quadratic.",
                "word ".repeat(18)
            )
        );
        assert!(summary.chars().count() <= SUMMARY_MAX);
        // Too little room left: the sentence alone, never cut.
        let wordy = format!("That won't work because {}.", "reasons ".repeat(16).trim());
        assert_eq!(with_antecedent(&wordy, Some(&long)), wordy);
    }

    #[test]
    fn a_rationale_leaves_out_the_narration_beside_its_sentence() {
        let text = "Good! The hook runs before stdin is parsed. Let me fix that. \
                    I'll keep the cursor instead of re-reading the file, because the file only grows. \
                    Let me check what we'd need:\n\nAnother paragraph.";
        let (paragraphs, sentences) = sentences::split(text);
        let at = (sentences.iter())
            .position(|s| s.text(&paragraphs).starts_with("I'll keep"))
            .expect("the kept sentence");
        assert_eq!(
            without_narration(&paragraphs, &sentences, at),
            "The hook runs before stdin is parsed. I'll keep the cursor instead of re-reading \
             the file, because the file only grows."
        );
        // A lead-in to what follows stays, unless it is a step of the work.
        for (lead, kept) in [
            ("I need to either:", true),
            ("Let me fix the helper:", false),
        ] {
            let text = format!("The fix is to return early, since the check fails. {lead}");
            let (paragraphs, sentences) = sentences::split(&text);
            assert_eq!(
                without_narration(&paragraphs, &sentences, 0).ends_with(lead),
                kept,
                "{lead}"
            );
        }
        // A paragraph with nothing to leave out is the paragraph as it was.
        let (paragraphs, sentences) = sentences::split("Keep the cursor. The file only grows.");
        assert!(matches!(
            without_narration(&paragraphs, &sentences, 0),
            Cow::Borrowed(p) if p == paragraphs[0]
        ));
    }

    #[test]
    fn state_saved_by_earlier_versions_still_loads() {
        let call = Call {
            id: "c1".into(),
            name: "Bash".into(),
            input: "cargo test".into(),
            file: None,
            op: Op::Bash,
            outcome: Outcome::Error,
            group: "g".into(),
            timestamp: String::new(),
            commit_command: None,
            excluded: false,
            added: Vec::new(),
            check: Some("cargo test".into()),
            discards: false,
        };
        let mut state = serde_json::to_value(State::default()).unwrap();
        let mut thread = serde_json::to_value(Thread {
            calls: vec![call],
            ..Thread::default()
        })
        .unwrap();
        // Before failures were kept per thread, with the check a call runs.
        thread.as_object_mut().unwrap().remove("failure");
        // Before options were kept.
        let fields = state.as_object_mut().unwrap();
        fields.remove("options");
        fields.remove("options_prompts");
        let old_call = thread["calls"][0].as_object_mut().unwrap();
        old_call.remove("check");
        old_call.remove("discards");
        state["main"] = thread;
        state["last_failure"] = serde_json::json!({"command": "cargo test", "results": 3});
        let loaded: State = serde_json::from_value(state).unwrap();
        assert!(loaded.main.failure.is_none());
        assert_eq!(loaded.main.calls[0].check, None);
        assert!(loaded.options.is_empty() && loaded.options_prompts == 0);
    }

    #[test]
    fn an_undone_change_is_told_by_its_files_or_its_edit() {
        let files = |n: usize| (0..n).map(|i| format!("f{i}.rs")).collect::<Vec<_>>();
        assert_eq!(
            undone(&files(1), "mise run lint 2>&1", None),
            "Reverted the change to f0.rs after `mise run lint` failed"
        );
        assert_eq!(
            undone(&files(1), "make", Some("`a` → `b`")),
            "Reverted `a` → `b` in f0.rs after `make` failed"
        );
        assert_eq!(
            undone(&files(2), "make", Some("`a` → `b`")),
            "Reverted the change to 2 files after `make` failed"
        );
    }

    #[test]
    fn a_change_is_told_when_it_reads_at_a_glance() {
        assert_eq!(
            short_change(" handleGeminiStart", "handleStart "),
            Some("`handleGeminiStart` → `handleStart`".to_owned())
        );
        for (from, to) in [
            ("fn a() {\n}", "fn b() {\n}"),
            ("`quoted`", "plain"),
            ("", "added"),
            (&"x".repeat(61) as &str, "y"),
        ] {
            assert_eq!(short_change(from, to), None, "{from:?} → {to:?}");
        }
    }

    #[test]
    fn a_plan_is_summed_up_by_its_goal_when_its_goal_states_it() {
        let goal = |plan: &str| {
            let (paragraphs, sentences) = sentences::split(plan);
            plan_goal(&paragraphs, &sentences).map(str::to_owned)
        };
        assert_eq!(
            goal(
                "# Plan: Update the warning\n\n## Goal\nReplace the technical warning with a friendlier one.\n\n## Files\n- hooks.go"
            ),
            Some("Replace the technical warning with a friendlier one.".to_owned())
        );
        assert_eq!(
            goal(
                "# Plan: Trim metadata\n\n## Goal\nRemove these fields from the metadata:\n\n1. Agents"
            ),
            None
        );
        assert_eq!(
            goal("# Plan\n\n## Context\nThe docs drifted from the code over the year."),
            None
        );
        let summary = |plan: &str| {
            let (paragraphs, sentences) = sentences::split(plan);
            plan_summary(&paragraphs, &sentences)
        };
        // A goal said inline; else the title and why it is needed; else the title.
        assert_eq!(
            summary(
                "# Plan: Stanzas\n\n## Context\nSetup appends to rc files blindly.\n\nThe goal: wrap our text in versioned blocks so we can remove it."
            ),
            "wrap our text in versioned blocks so we can remove it."
        );
        // As written, however it is set off: split at its colon, in bold, or not the goal.
        assert_eq!(
            summary(
                "# Plan: Stanzas\n\nThe goal: Wrap our text in versioned blocks so we can remove it."
            ),
            "Wrap our text in versioned blocks so we can remove it."
        );
        assert_eq!(
            summary("# Plan: Pin\n\n**Goal:** npm installs the exact versions the lockfile names."),
            "npm installs the exact versions the lockfile names."
        );
        assert_eq!(
            summary(
                "# Plan: Pin\n\n**Goal:**\n\nnpm installs the exact versions the lockfile names."
            ),
            "npm installs the exact versions the lockfile names."
        );
        assert_eq!(
            summary("# Plan: Simpler setup\n\nThe goal: simplicity."),
            "Simpler setup"
        );
        // A plan that opens with a section has no title; a title can start as a section's name.
        assert_eq!(
            summary("# Fix: Gemini session path\n\n## Changes\n- restore.go"),
            "Fix: Gemini session path"
        );
        assert_eq!(
            summary(
                "## Context\nRestoring a Gemini session writes to Claude's folder.\n\n## Changes\n- restore.go"
            ),
            "Restoring a Gemini session writes to Claude's folder."
        );
        assert_eq!(
            summary(
                "# Plan: Fix the restore path\n\n## Context\nRestoring a Gemini session writes its transcript to Claude's folder.\n\n## Changes\n- restore.go"
            ),
            "Fix the restore path — Restoring a Gemini session writes its transcript to Claude's folder."
        );
        assert_eq!(
            summary("# Plan: Fix the restore path\n\n## Changes\n- restore.go"),
            "Fix the restore path"
        );
    }

    #[test]
    fn a_prompt_that_asks_is_told_from_one_that_says() {
        for asks in [
            "can we use `checkpointID` instead of `cpID` in session.go",
            "Why exactly didn't you create the wrapper instead of inlining it",
            "How about a TTL map rather than an LRU?",
        ] {
            assert!(asked(asks), "{asks}");
        }
        for says in [
            "Use a TTL map instead of an LRU, since entries expire by time.",
            "Don't deprecate it; remove it completely.",
            "Do it with a TTL map rather than an LRU.",
        ] {
            assert!(!asked(says), "{says}");
        }
    }

    #[test]
    fn a_plan_is_titled_plan_once() {
        assert_eq!(untitled("Plan: Simplify onboarding"), "Simplify onboarding");
        assert_eq!(untitled("PLAN:cache"), "cache");
        assert_eq!(untitled("Planning the cache"), "Planning the cache");
        assert_eq!(untitled("Plan"), "Plan");
    }

    #[test]
    fn a_commit_body_loses_its_trailers_and_keeps_its_reasoning() {
        // The body as `commit` has it: what follows the subject's line end.
        assert_eq!(
            without_trailers("\nCo-Authored-By: Claude <noreply@anthropic.com>"),
            ""
        );
        assert_eq!(
            without_trailers(
                "\nUse a cursor.\n\nSigned-off-by: A <a@b.c>\nCo-Authored-By: Claude <c@d.e>\n"
            ),
            "Use a cursor."
        );
        // A last paragraph of `Word: text` lines that are no trailers is the body's own.
        assert_eq!(
            without_trailers("\nUse a cursor.\n\nWhy: re-reading is quadratic"),
            "Use a cursor.\n\nWhy: re-reading is quadratic"
        );
    }
}
