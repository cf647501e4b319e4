//! The only writer to the repository: what we keep in `$GIT_DIR/agent-context/`.
//!
//! Everything lives under the *common* git directory, so linked worktrees share one store.
//! Writes are atomic (write a temporary file, then rename) and serialized between processes by
//! an advisory lock on `agent-context/lock`, which the OS releases if a writer dies.

pub mod distill_state;
pub mod erase;
pub mod forgotten;
pub mod git_config;
pub mod graph;
pub(crate) mod history;
pub mod link;
pub mod log;
pub mod notes;
pub mod pack;
pub mod parameters;
pub mod pending;
pub mod seen;
pub mod sessions;
pub mod state;
pub mod told;

use std::fs::{self, File, TryLockError};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use crate::config::Config;

/// How old a ref's lock file must be to be taken for one a dead writer left.
pub const STALE_REF_LOCK: Duration = Duration::from_secs(5);

/// The folder under the common git directory that holds local, rebuildable data.
pub const DIR: &str = "agent-context";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("not a git repository (or any parent up to the root): {path}")]
    NotARepository { path: PathBuf },
    /// A `.git` git stops at that names no repository, inside a repository gix went on to.
    #[error("{} names {target}, which is not a git repository", dot_git.display())]
    BrokenGitLink { dot_git: PathBuf, target: String },
    /// A repository owned by another user, which `safe.directory` does not allow: git refuses
    /// to work in it, and so do we (its configuration and files are someone else's).
    #[error("detected dubious ownership in repository at '{}'", path.display())]
    DubiousOwnership { path: PathBuf },
    /// A bare repository found inside another repository's working tree: its files (its store
    /// configuration too) came with a clone, so nothing is read from it unless `GIT_DIR` names
    /// it (docs/security.md).
    #[error(
        "{} is a bare repository inside the working tree of {}: it may have come with a clone, \
         so it is not used unless GIT_DIR names it",
        path.display(),
        outer.display()
    )]
    EmbeddedBare { path: PathBuf, outer: PathBuf },
    #[error("cannot open the git repository at {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error(
        "{path} keeps its refs in reftable (extensions.refStorage), which gitoxide cannot read yet; \
         `git refs migrate --ref-format=files` converts it"
    )]
    Reftable { path: PathBuf },
    #[error("{action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        source: io::Error,
    },
    /// `io`: the kind of the I/O error found among the causes, if any: what tells a machine
    /// that failed (a full disk) from a repository that is damaged, the message being text.
    #[error("git: {action}: {message}")]
    Git {
        action: String,
        message: String,
        io: Option<io::ErrorKind>,
    },
    #[error(transparent)]
    Config(#[from] crate::config::Error),
    #[error("the store is busy (another git agent-context is writing); left for the next run")]
    Busy,
    /// Other writers moved the ref under every one of our attempts to update it: as
    /// [`Error::Busy`], a crowd, not damage.
    #[error(
        "{refname} moved under each of {attempts} attempts to update it (other writers); left for the next run"
    )]
    Contended {
        refname: &'static str,
        attempts: usize,
    },
    #[error("{path} is not valid agent-context JSON")]
    Json {
        path: PathBuf,
        source: serde_json::Error,
    },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Why a path given on the command line or by a tool cannot be named as git names it.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error("this repository has no working tree to find {0} in")]
    NoWorkTree(String),
    #[error("{path}: outside the repository at {}", workdir.display())]
    Outside { path: String, workdir: PathBuf },
}

pub(crate) fn io_error<'a>(
    action: &'static str,
    path: &'a Path,
) -> impl FnOnce(io::Error) -> Error + use<'a> {
    move |source| Error::Io {
        action,
        path: path.to_owned(),
        source,
    }
}

/// Map a gix error to ours, saying what we were doing. The message is the error and its
/// causes on one line ([`error_chain`]): gix's alternate form (`{:#}`) prints its diagnostics
/// as Rust debug structures, with a "Caused by:" block over several lines.
pub(crate) fn git_error(action: impl Into<String>) -> impl FnOnce(gix::Error) -> Error {
    let action = action.into();
    move |e| Error::Git {
        action,
        message: error_chain(&e),
        io: e.downcast_any_ref::<io::Error>().map(io::Error::kind),
    }
}

impl Error {
    /// A git error of ours, with no cause below it: `message` says what is wrong.
    pub(crate) fn git(action: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Git {
            action: action.into(),
            message: message.into(),
            io: None,
        }
    }
}

/// An error and its causes on one line (`cannot write …/x: Is a directory (os error 21)`),
/// for a hook's one line on stderr and in the log, where the cause is the useful part. A
/// cause the message already names is not repeated.
pub fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        cause = c.source();
    }
    text.replace('\n', " ")
}

/// The object `refname` points at, if the ref exists.
pub(crate) fn ref_tip(repo: &gix::Repository, refname: &str) -> Result<Option<gix::ObjectId>> {
    let reference = repo
        .try_find_reference(refname)
        .map_err(git_error(format!("read {refname}")))?;
    Ok(reference.and_then(|r| r.target().try_id().map(ToOwned::to_owned)))
}

/// Who our commits on the notes and graph refs are by, found as gix finds a committer
/// (`GIT_COMMITTER_*` or `committer.*`, then `user.*`, then `EMAIL`), or git's generic fallback
/// when none is configured; and when: `GIT_COMMITTER_DATE` when it is set and readable, else now
/// at UTC. Not gix's own `committer()`, which always works out the local time's offset: finding
/// the system's time zone by its name costs a process 1–6 ms, and our commits need no offset.
pub(crate) fn signature(repo: &gix::Repository) -> gix::actor::Signature {
    let config = repo.config_snapshot();
    let first = |keys: &[&str], fallback: &str| {
        keys.iter()
            .find_map(|key| config.string(*key))
            .unwrap_or_else(|| fallback.into())
    };
    let name = first(
        &[
            "committer.name",
            "user.name",
            "gitoxide.committer.nameFallback",
        ],
        "no name configured",
    );
    let email = first(
        &[
            "committer.email",
            "user.email",
            "gitoxide.user.emailFallback",
            "gitoxide.committer.emailFallback",
        ],
        "noEmailAvailable@example.com",
    );
    // A date gix cannot read (empty, or in a form it does not know) is now, as for gix.
    let now = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC);
    let time = config
        .string("gitoxide.commit.committerDate")
        .and_then(|date| gix::date::parse(&date.to_string(), Some(now)).ok())
        .unwrap_or_else(gix::date::Time::now_utc);
    gix::actor::Signature { name, email, time }
}

/// Point `refname` at `new` when it is as `constraint` expects, as `gix::Repository::reference`
/// does, but with the reflog's line (`message`) by `signature`: gix would otherwise work out a
/// committer of its own, local time zone and all ([`signature`]).
pub(crate) fn point(
    repo: &gix::Repository,
    signature: &gix::actor::Signature,
    refname: &str,
    new: gix::ObjectId,
    constraint: gix::refs::transaction::PreviousValue,
    message: &str,
) -> std::result::Result<(), gix::Error> {
    let name = gix::refs::FullName::try_from(refname).expect("our refs' names are valid");
    let edit = gix::refs::transaction::RefEdit::update(name, new, constraint, message);
    let mut time = gix::date::parse::TimeBuf::default();
    repo.edit_references_as([edit], Some(signature.to_ref(&mut time)))
        .map(|_| ())
}

/// A commit of ours (by `signature`) of `tree` with `parents`, for `refname`'s chain; the ref is
/// the caller's to move.
pub(crate) fn commit(
    repo: &gix::Repository,
    signature: &gix::actor::Signature,
    refname: &str,
    message: &str,
    tree: gix::ObjectId,
    parents: impl IntoIterator<Item = gix::ObjectId>,
) -> Result<gix::ObjectId> {
    let mut time = gix::date::parse::TimeBuf::default();
    let who = signature.to_ref(&mut time);
    Ok(repo
        .new_commit_as(who, who, message, tree, parents)
        .map_err(git_error(format!("commit to {refname}")))?
        .id)
}

/// What a compare-and-swap of a ref expects: the tip read before, or no ref at all.
pub(crate) fn expecting(tip: Option<gix::ObjectId>) -> gix::refs::transaction::PreviousValue {
    use gix::refs::transaction::PreviousValue;
    match tip {
        Some(t) => PreviousValue::MustExistAndMatch(gix::refs::Target::Object(t)),
        None => PreviousValue::MustNotExist,
    }
}

/// The top of the working tree of another repository holding the bare repository `git_dir`
/// (a folder above it with a `.git`), if one does.
fn enclosing_worktree(git_dir: &Path) -> Option<PathBuf> {
    let git_dir = absolute(git_dir);
    git_dir
        .ancestors()
        .skip(1)
        .find(|folder| folder.join(".git").exists())
        .map(Path::to_owned)
}

/// What [`Store::repo_for_history`] keeps of the delta bases it inflated (git keeps 96 MiB:
/// `core.deltaBaseCacheLimit`).
const PACK_CACHE_BYTES: usize = 8 << 20;

/// A repository's agent-context store.
#[derive(Debug, Clone)]
pub struct Store {
    repo: gix::ThreadSafeRepository,
    common_dir: PathBuf,
    workdir: Option<PathBuf>,
    dir: PathBuf,
    config: Config,
    /// How long to wait for other writers; `None`: as long as it takes.
    patience: Option<Duration>,
}

impl Store {
    /// Find the repository containing `path` (honouring `GIT_DIR` and friends).
    pub fn discover(path: &Path) -> Result<Store> {
        let repo = gix::discover_with_environment_overrides(path).map_err(|e| {
            let message = error_chain(&e);
            if message.contains("not a git repository")
                || message.contains("Could not find a git repository")
            {
                Error::NotARepository {
                    path: path.to_owned(),
                }
            } else {
                Error::Open {
                    path: path.to_owned(),
                    message,
                }
            }
        })?;
        if !trusted(&repo) {
            return Err(Error::DubiousOwnership {
                path: owned_path(&repo),
            });
        }
        if std::env::var_os("GIT_DIR").is_none()
            && repo.workdir().is_none()
            && let Some(outer) = enclosing_worktree(repo.git_dir())
        {
            return Err(Error::EmbeddedBare {
                path: absolute(repo.git_dir()),
                outer,
            });
        }
        // Each folder made absolute once: `canonicalize` reads every folder from `/` down.
        let workdir = repo.workdir().map(absolute);
        let git_dir = absolute(repo.git_dir());
        if std::env::var_os("GIT_DIR").is_none()
            && let Some(dot_git) = broken_git_link(path, workdir.as_deref(), &git_dir)
        {
            let target = fs::read_to_string(&dot_git)
                .ok()
                .and_then(|t| {
                    t.trim()
                        .strip_prefix("gitdir:")
                        .map(|d| d.trim().to_owned())
                })
                .unwrap_or_else(|| dot_git.display().to_string());
            return Err(Error::BrokenGitLink { dot_git, target });
        }
        let reftable = repo
            .config_snapshot()
            .string("extensions.refStorage")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"reftable"));
        if reftable {
            return Err(Error::Reftable {
                path: absolute(repo.common_dir()),
            });
        }
        let common_dir = match repo.common_dir() == repo.git_dir() {
            true => git_dir,
            false => absolute(repo.common_dir()),
        };
        let dir = common_dir.join(DIR);
        let config = Config::load(workdir.as_deref(), &dir)?;
        Ok(Store {
            repo: repo.into_sync(),
            common_dir,
            workdir,
            dir,
            config,
            patience: None,
        })
    }

    /// The store folder of the repository containing `path`, found without reading the
    /// configuration: where a hook that cannot open the store (its configuration is bad) still
    /// logs why. `None` outside a repository, or when there is no store yet.
    pub fn existing_dir(path: &Path) -> Option<PathBuf> {
        let dir = match gix::discover_with_environment_overrides(path) {
            Ok(repo) if trusted(&repo) => absolute(repo.common_dir()).join(DIR),
            Ok(_) => return None,
            // A repository gix cannot open (its `.git/config` is bad, say): the usual layout,
            // looked for by hand, in a repository of ours.
            Err(_) => path
                .ancestors()
                .map(|p| p.join(".git"))
                .find(|d| d.join(DIR).is_dir())
                .filter(|d| gix::sec::identity::is_path_owned_by_current_user(d).unwrap_or(false))?
                .join(DIR),
        };
        Some(dir).filter(|dir| dir.is_dir())
    }

    /// Wait at most `patience` for other writers (the store lock, a ref lock) and give up with
    /// [`Error::Busy`] after: what a hook needs, which must not hold up git or Claude Code.
    pub fn with_patience(mut self, patience: Duration) -> Store {
        self.patience = Some(patience);
        self
    }

    /// A handle on the repository for this thread.
    pub(crate) fn repo(&self) -> gix::Repository {
        self.repo.to_thread_local()
    }

    /// A handle on the repository that keeps the delta bases it inflated, for reading many
    /// versions of the same files: gix built without its `max-performance` feature keeps none,
    /// so each object read from a pack would inflate its whole delta chain again. The cache
    /// grows only as it is used, to [`PACK_CACHE_BYTES`].
    pub(crate) fn repo_for_history(&self) -> gix::Repository {
        let mut repo = self.repo();
        repo.objects.set_pack_cache(|| {
            Box::new(gix::odb::pack::cache::lru::MemoryCappedHashmap::new(
                PACK_CACHE_BYTES,
            ))
        });
        repo
    }

    /// `path` (relative to `cwd`, or absolute) as git names it: relative to the top of the
    /// working tree, `/`-separated; else why not.
    pub fn repo_path(&self, cwd: &Path, path: &str) -> std::result::Result<String, PathError> {
        let workdir = self
            .workdir()
            .ok_or_else(|| PathError::NoWorkTree(path.to_owned()))?;
        let joined = cwd.join(path);
        // The file may be gone from the working tree and still be tracked: resolve its folder.
        let absolute = match (joined.parent(), joined.file_name()) {
            (Some(dir), Some(name)) => fs::canonicalize(dir)
                .map(|d| d.join(name))
                .unwrap_or_else(|_| normalize(&joined)),
            _ => normalize(&joined),
        };
        let relative = absolute
            .strip_prefix(workdir)
            .map_err(|_| PathError::Outside {
                path: path.to_owned(),
                workdir: workdir.to_owned(),
            })?;
        let parts: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Ok(parts.join("/"))
    }

    /// The repository's working tree, if it has one.
    pub fn workdir(&self) -> Option<&Path> {
        self.workdir.as_deref()
    }

    /// The folders of every worktree of this repository: the main one (unless it is bare) and
    /// the linked ones.
    pub fn worktrees(&self) -> Vec<PathBuf> {
        let mut roots: Vec<PathBuf> = Vec::new();
        if self.common_dir.file_name().is_some_and(|n| n == ".git")
            && let Some(main) = self.common_dir.parent()
        {
            roots.push(absolute(main));
        }
        if let Ok(entries) = fs::read_dir(self.common_dir.join("worktrees")) {
            for entry in entries.flatten() {
                // `gitdir` names the worktree's `.git` file.
                if let Ok(text) = fs::read_to_string(entry.path().join("gitdir"))
                    && let Some(root) = Path::new(text.trim()).parent()
                {
                    roots.push(absolute(root));
                }
            }
        }
        if let Some(workdir) = &self.workdir
            && !roots.contains(workdir)
        {
            roots.push(workdir.clone());
        }
        roots.sort();
        roots.dedup();
        roots
    }

    /// The other worktrees of this repository that lie inside the worktree `root` (such as
    /// Claude Code's `.claude/worktrees/<name>`): sessions run there are theirs.
    pub fn nested_in(&self, root: &Path) -> Vec<PathBuf> {
        self.worktrees()
            .into_iter()
            .filter(|r| r != root && r.starts_with(root))
            .collect()
    }

    /// [`Store::nested_in`] this worktree.
    pub fn nested_worktrees(&self) -> Vec<PathBuf> {
        match &self.workdir {
            Some(workdir) => self.nested_in(workdir),
            None => Vec::new(),
        }
    }

    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// The effective configuration (read when the store was opened).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// `$GIT_COMMON_DIR/agent-context`.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn exists(&self) -> bool {
        self.dir.is_dir()
    }

    /// Create the store's folders; true when they did not exist before.
    pub fn init(&self) -> Result<bool> {
        let existed = self.exists();
        for sub in [pending::DIR, state::DIR] {
            let path = self.dir.join(sub);
            fs::create_dir_all(&path).map_err(io_error("cannot create", &path))?;
        }
        Ok(!existed)
    }

    /// The files of the store folder `sub` whose names end in `.ext`, sorted; none when the
    /// folder does not exist.
    pub(crate) fn files_in(&self, sub: &str, ext: &str) -> Result<Vec<PathBuf>> {
        let mut paths: Vec<PathBuf> = self.entries(sub, ext)?.iter().map(|e| e.path()).collect();
        paths.sort();
        Ok(paths)
    }

    /// The files of the store folder `sub` whose names end in `.ext`, each with when it was
    /// last changed (one that cannot be read left out), in no order; none when the folder does
    /// not exist. Each is looked up in the folder already open rather than by its whole path:
    /// the pending queue holds a file per session, and the first hook of every session reads
    /// when each changed.
    pub(crate) fn files_modified(
        &self,
        sub: &str,
        ext: &str,
    ) -> Result<Vec<(SystemTime, PathBuf)>> {
        Ok((self.entries(sub, ext)?.iter())
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect())
    }

    /// The entries of the store folder `sub` whose names end in `.ext`, as listed.
    fn entries(&self, sub: &str, ext: &str) -> Result<Vec<fs::DirEntry>> {
        let dir = self.dir.join(sub);
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(io_error("cannot list", &dir)(e)),
        };
        Ok(entries
            .flatten()
            .filter(|e| {
                Path::new(&e.file_name())
                    .extension()
                    .is_some_and(|x| x == ext)
            })
            .collect())
    }

    /// Hold the store's write lock until the guard is dropped (waits for other writers, as
    /// long as the store's patience allows).
    pub fn lock(&self) -> Result<File> {
        self.init()?;
        let path = self.dir.join("lock");
        let file = lock_file(&path)?;
        match self.patience {
            None => file.lock().map_err(io_error("cannot lock", &path))?,
            Some(patience) => {
                let deadline = Instant::now() + patience;
                loop {
                    match file.try_lock() {
                        Ok(()) => break,
                        Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_millis(2));
                        }
                        Err(TryLockError::WouldBlock) => return Err(Error::Busy),
                        Err(TryLockError::Error(e)) => {
                            return Err(io_error("cannot lock", &path)(e));
                        }
                    }
                }
            }
        }
        self.sweep_temporary_files();
        Ok(file)
    }

    /// The store's write lock if no one holds it now: not waited for, and nothing tidied. For
    /// a cache written only while nothing else is.
    pub(crate) fn lock_if_free(&self) -> Option<File> {
        let file = lock_file(&self.dir.join("lock")).ok()?;
        file.try_lock().ok()?;
        Some(file)
    }

    /// After the compare-and-swap of `refname` from `expected` failed with `error`: `Ok(())`
    /// when another try may succeed — another writer moved the ref first (a lost race, after
    /// a backoff), or a writer's lock file was in the way and is gone (it finished, or it died
    /// and its lock was cleared) — else the error to stop with, at once: [`Error::Busy`] when
    /// a live writer holds the lock past our patience, the update's own error when retrying
    /// cannot mend it (a ref that cannot be created, a full disk).
    pub(crate) fn retry_update(
        &self,
        repo: &gix::Repository,
        refname: &str,
        expected: Option<gix::ObjectId>,
        error: gix::Error,
        attempt: usize,
    ) -> Result<()> {
        if ref_tip(repo, refname)? != expected {
            backoff(attempt);
            return Ok(());
        }
        // gix says a lock file is in the way with the io::Error of its exclusive create.
        let locked = error
            .downcast_any_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::AlreadyExists);
        if !locked {
            return Err(git_error(format!("update {refname}"))(error));
        }
        match self.clear_dead_ref_lock(refname) {
            true => Ok(()),
            false => Err(Error::Busy),
        }
    }

    /// After a ref update failed on a lock file — `<ref>.lock`, or `packed-refs.lock`, which
    /// gix takes for every update of a repository with packed refs — whether the lock is gone:
    /// its writer finished, or died holding it (it is older than [`STALE_REF_LOCK`], or
    /// becomes so within the store's patience) and it was removed, so that the caller may try
    /// again. A live writer holds such a lock for milliseconds; one killed holding it (a hook
    /// past its timeout) would leave every later update of a ref failing, ours and git's.
    fn clear_dead_ref_lock(&self, refname: &str) -> bool {
        let paths = [
            self.common_dir.join(format!("{refname}.lock")),
            self.common_dir.join("packed-refs.lock"),
        ];
        let deadline = Instant::now() + self.patience.unwrap_or(STALE_REF_LOCK);
        loop {
            let Some((path, modified)) = paths.iter().find_map(|path| {
                let modified = fs::metadata(path).and_then(|m| m.modified()).ok()?;
                Some((path, modified))
            }) else {
                return true;
            };
            let age = modified.elapsed().unwrap_or_default();
            if age >= STALE_REF_LOCK {
                match fs::remove_file(path) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return false,
                    _ => continue,
                }
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep((STALE_REF_LOCK - age).min(Duration::from_millis(100)));
        }
    }

    /// Remove the temporary files of writers that died before renaming them. Not every write
    /// happens under the lock (a hook records its session, saves a continuation, notes the
    /// graph CLAUDE.md was made from), so a file whose writer may still be at work stays
    /// ([`may_be_written`]).
    fn sweep_temporary_files(&self) {
        for sub in [
            "",
            pending::DIR,
            state::DIR,
            link::DIR,
            sessions::DIR,
            "continuation",
            "index",
            "index/terms",
            "index/files",
            "index/symbols",
            "index/commits",
        ] {
            let Ok(entries) = fs::read_dir(self.dir.join(sub)) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let name = name.to_string_lossy();
                if name.starts_with('.')
                    && name.ends_with(TMP_SUFFIX)
                    && !may_be_written(&entry.path(), &name)
                {
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
    }
}

/// Whether the temporary file `name` at `path` (`.<file>.<pid>.tmp`, see [`replace`]) may be
/// a live writer's: its process is running (where `/proc` tells), or else the file is younger
/// than [`STALE_REF_LOCK`] — a live writer renames its file within milliseconds.
fn may_be_written(path: &Path, name: &str) -> bool {
    let pid = name
        .strip_suffix(TMP_SUFFIX)
        .and_then(|n| n.rsplit_once('.'))
        .and_then(|(_, pid)| pid.parse::<u32>().ok());
    let proc = Path::new("/proc");
    if let Some(pid) = pid
        && proc.join("self").exists()
    {
        return proc.join(pid.to_string()).exists();
    }
    fs::metadata(path)
        .and_then(|m| m.modified())
        .is_ok_and(|t| t.elapsed().unwrap_or_default() < STALE_REF_LOCK)
}

/// The bucket a key's lines are kept in, where an index is split into files: the first byte
/// of the key's XXH3-64, in hex (`00` to `ff`).
pub(crate) fn bucket(key: &str) -> String {
    format!("{:02x}", xxhash_rust::xxh3::xxh3_64(key.as_bytes()) >> 56)
}

/// Wait a little before retrying a compare-and-swap lost to another writer: a random time that
/// grows with the attempts, up to 10 ms, so that writers racing for one ref stop colliding.
fn backoff(attempt: usize) {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let seed = format!("{}:{attempt}:{nanos}", std::process::id());
    let most = 1000 * attempt.min(10) as u64;
    let micros = xxhash_rust::xxh3::xxh3_64(seed.as_bytes()) % (most + 1);
    std::thread::sleep(std::time::Duration::from_micros(micros));
}

/// The `.git` between `path` and the repository gix found above it, which gix passed over
/// because it names no repository (a linked worktree whose git directory is gone, such as
/// Claude Code's `.claude/worktrees/<name>` after `git worktree prune`): git stops there with
/// "not a git repository", and so do we, rather than act on the repository around it. `top`
/// and `git_dir` are that repository's working tree and git directory, made absolute.
fn broken_git_link(path: &Path, top: Option<&Path>, git_dir: &Path) -> Option<PathBuf> {
    for dir in absolute(path).ancestors() {
        if Some(dir) == top || dir.starts_with(git_dir) {
            return None;
        }
        let dot_git = dir.join(".git");
        if fs::symlink_metadata(&dot_git).is_ok() {
            return Some(dot_git);
        }
    }
    None
}

/// `.` and `..` taken out of a path without asking the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// Whether git works in `repo`: one owned by another user only when `safe.directory` allows
/// it, as git's `ensure_valid_ownership` decides (git-config(1), safe.directory), or when
/// `GIT_DIR` names it (git checks only the repositories it discovers). gix checks the
/// ownership, and the `safe.directory` of the system and global files, when it opens the
/// repository: an untrusted one is opened with reduced trust. `git -c safe.directory=…`, read
/// after the files as git reads it, is checked here.
fn trusted(repo: &gix::Repository) -> bool {
    if repo.git_dir_trust() == gix::sec::Trust::Full || std::env::var_os("GIT_DIR").is_some() {
        return true;
    }
    let Some(params) = std::env::var_os("GIT_CONFIG_PARAMETERS") else {
        return false;
    };
    let path = owned_path(repo);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut safe = false;
    for value in parameters::all(&params.to_string_lossy(), "safe.directory") {
        let value = value.unwrap_or_default();
        match value.as_str() {
            "" => safe = false,
            "*" => safe = true,
            _ => safe |= allows(&value, &path, home.as_deref()),
        }
    }
    safe
}

/// Whether the `safe.directory` entry `value` names `path` (a real path): the same real path,
/// or a folder above it when the entry ends in `/*`. `~/` is the home folder; a relative entry
/// other than `.` allows nothing.
fn allows(value: &str, path: &Path, home: Option<&Path>) -> bool {
    let entry = match (value.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(value),
    };
    if !entry.is_absolute() && value != "." {
        return false;
    }
    match value.strip_suffix("/*") {
        Some(_) => entry
            .parent()
            .and_then(|folder| fs::canonicalize(folder).ok())
            .is_some_and(|folder| path != folder && path.starts_with(folder)),
        None => fs::canonicalize(&entry).is_ok_and(|entry| entry == path),
    }
}

/// The folder whose ownership git checks, and names when it refuses: the working tree, or the
/// git directory of a bare repository.
fn owned_path(repo: &gix::Repository) -> PathBuf {
    absolute(repo.workdir().unwrap_or(repo.git_dir()))
}

fn absolute(path: &Path) -> PathBuf {
    fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

const TMP_SUFFIX: &str = ".tmp";

/// Replace `path` with `bytes` atomically: readers see the old or the new file, never a mix.
/// The file at `path` to take a lock on (`File::lock`, `try_lock`), made with its folder if
/// need be; its content is never read or written.
pub(crate) fn lock_file(path: &Path) -> Result<File> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(io_error("cannot create", dir))?;
    }
    File::options()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .map_err(io_error("cannot open", path))
}

pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    replace(path, bytes, true, None)
}

/// Remove the file at `path`; one already gone is no error.
pub(crate) fn remove_file(path: &Path) -> Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_error("cannot remove", path)(e)),
        _ => Ok(()),
    }
}

/// [`write_atomic`] for a cache that can be made again: not synced to disk.
pub(crate) fn write_cache(path: &Path, bytes: &[u8]) -> Result<()> {
    replace(path, bytes, false, None)
}

/// [`write_atomic`], the new file with the permissions `mode` (Unix): a file of the user's we
/// edit keeps its own, a git hook is executable.
pub(crate) fn write_atomic_with_mode(path: &Path, bytes: &[u8], mode: Option<u32>) -> Result<()> {
    replace(path, bytes, true, mode)
}

/// A temporary file in the same folder, then a rename; the temporary file is removed if any
/// step fails.
fn replace(path: &Path, bytes: &[u8], sync: bool, mode: Option<u32>) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io_error("cannot create", dir))?;
    let tmp = dir.join(format!(
        ".{}.{}{TMP_SUFFIX}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    let written = (|| {
        let mut file = File::create(&tmp).map_err(io_error("cannot create", &tmp))?;
        file.write_all(bytes)
            .map_err(io_error("cannot write", &tmp))?;
        if sync {
            file.sync_all().map_err(io_error("cannot sync", &tmp))?;
        }
        set_mode(&tmp, mode)?;
        fs::rename(&tmp, path).map_err(io_error("cannot replace", path))
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(unix)]
fn set_mode(path: &Path, mode: Option<u32>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match mode {
        Some(mode) => fs::set_permissions(path, fs::Permissions::from_mode(mode))
            .map_err(io_error("cannot set the permissions of", path)),
        None => Ok(()),
    }
}

#[cfg(not(unix))]
fn set_mode(_path: &Path, _mode: Option<u32>) -> Result<()> {
    Ok(())
}
