//! Opening the repository a workspace is in, computing a diff between two sides, and
//! reading a file's bytes on a committed or staged side.

use std::path::{Path, PathBuf};

use git2::{Delta, DiffFindOptions, DiffFormat, DiffOptions, ErrorCode, FileMode, Patch, Tree};

use crate::compare::{Compare, MAX_REV_BYTES};
use crate::diff::{Content, Diff, FileChange, LineRange, SideInfo, Status};
use crate::error::GitError;

/// How much of a diff is read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most files listed with their hunks; the rest are only counted.
    pub max_files: usize,
    /// Files larger than this on either side are treated as binary (no hunks).
    pub max_file_bytes: u64,
}

/// The repository a workspace root lies in, read only.
pub struct Repo {
    repo: git2::Repository,
    /// The workspace root relative to the repository's working tree (`""` at its top),
    /// with `/` separators and a trailing `/` when not empty.
    prefix: String,
}

impl Repo {
    /// The repository whose working tree holds `root` (found upward from it, as git
    /// does; environment variables such as `GIT_DIR` are not read).
    pub fn open(root: &Path) -> Result<Repo, GitError> {
        skip_hash_verification();
        let not_repo = || GitError::NotARepository {
            path: root.to_path_buf(),
        };
        let repo = match git2::Repository::discover(root) {
            Ok(r) => r,
            Err(e) if e.code() == ErrorCode::NotFound => return Err(not_repo()),
            Err(e) => return Err(e.into()),
        };
        let Some(workdir) = repo.workdir() else {
            return Err(not_repo());
        };
        let real = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let (workdir, root) = (real(workdir), real(root));
        let rel: PathBuf = root.strip_prefix(&workdir).map_err(|_| not_repo())?.into();
        let mut prefix = rel.to_string_lossy().replace('\\', "/");
        if !prefix.is_empty() {
            prefix.push('/');
        }
        Ok(Repo { repo, prefix })
    }

    /// The libgit2 handle, for this crate's other modules.
    pub(crate) fn git2(&self) -> &git2::Repository {
        &self.repo
    }

    /// The workspace root relative to the working tree (`""`, or ending in `/`).
    pub(crate) fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The files `compare` changes under the workspace root, with the line ranges each
    /// hunk removes and adds (no context lines), renames found as git finds them.
    pub fn diff(&self, compare: &Compare, limits: Limits) -> Result<Diff, GitError> {
        self.list(compare, limits)?.with_hunks()
    }

    /// The files `compare` changes, their hunks not yet read (see [`Listed`]).
    pub fn list(&self, compare: &Compare, limits: Limits) -> Result<Listed<'_>, GitError> {
        let mut opts = DiffOptions::new();
        opts.context_lines(0)
            .interhunk_lines(0)
            .include_typechange(true)
            .ignore_submodules(false)
            .max_size(i64::try_from(limits.max_file_bytes).unwrap_or(i64::MAX));
        if !self.prefix.is_empty() {
            opts.pathspec(&self.prefix).disable_pathspec_match(true);
        }
        let (old, new, mut diff) = match compare {
            Compare::Worktree => {
                untracked(&mut opts);
                let head = self.head()?;
                let d = self
                    .repo
                    .diff_tree_to_workdir_with_index(head.1.as_ref(), Some(&mut opts))?;
                (head.0, worktree_side(), d)
            }
            Compare::Staged => {
                let head = self.head()?;
                let d = self
                    .repo
                    .diff_tree_to_index(head.1.as_ref(), None, Some(&mut opts))?;
                (head.0, index_side(), d)
            }
            Compare::Unstaged => {
                untracked(&mut opts);
                let d = self.repo.diff_index_to_workdir(None, Some(&mut opts))?;
                (index_side(), worktree_side(), d)
            }
            Compare::Rev(rev) => {
                let (old, new) = self.rev_sides(rev)?;
                match new {
                    Some((new_side, new_tree)) => {
                        let d = self.repo.diff_tree_to_tree(
                            Some(&old.1),
                            Some(&new_tree),
                            Some(&mut opts),
                        )?;
                        (old.0, new_side, d)
                    }
                    None => {
                        untracked(&mut opts);
                        let d = self
                            .repo
                            .diff_tree_to_workdir_with_index(Some(&old.1), Some(&mut opts))?;
                        (old.0, worktree_side(), d)
                    }
                }
            }
        };
        diff.find_similar(Some(
            DiffFindOptions::new()
                .renames(true)
                .for_untracked(true)
                .renames_from_rewrites(false),
        ))?;
        // Printing reads every file's content; only a rename or copy has a score.
        let scores = if diff
            .deltas()
            .any(|d| matches!(d.status(), Delta::Renamed | Delta::Copied))
        {
            similarity_scores(&diff)?
        } else {
            Vec::new()
        };
        let files_total = diff.deltas().count();
        let mut files = Vec::new();
        for (i, delta) in diff.deltas().enumerate().take(limits.max_files) {
            let mut change = self.change_of(&delta, scores.get(i).copied().flatten());
            if new.worktree {
                change.new_id = None; // read from disk, not from the object database
            }
            files.push(change);
        }
        Ok(Listed {
            diff,
            listed: Diff {
                old,
                new,
                files,
                files_total,
            },
        })
    }

    /// The bytes of `change`'s old (`new == false`) or new side, when that side is a
    /// blob (a commit's or the index's) no larger than `max_bytes`; `Ok(None)` when the
    /// side is the working tree, absent, not a regular file, or too large.
    pub fn blob(
        &self,
        change: &FileChange,
        new: bool,
        max_bytes: u64,
    ) -> Result<Option<Vec<u8>>, GitError> {
        let (id, link) = if new {
            (change.new_id, change.new_is_link)
        } else {
            (change.old_id, change.old_is_link)
        };
        let Some(id) = id.filter(|id| !id.is_zero()) else {
            return Ok(None);
        };
        if link || change.content == Content::Submodule {
            return Ok(None);
        }
        let odb = self.repo.odb()?;
        let (size, _) = odb.read_header(id)?;
        if size as u64 > max_bytes {
            return Ok(None);
        }
        Ok(Some(self.repo.find_blob(id)?.content().to_vec()))
    }

    /// `HEAD`'s side and tree (no tree for a branch with no commit yet).
    fn head(&self) -> Result<(SideInfo, Option<Tree<'_>>), GitError> {
        match self.repo.head() {
            Ok(r) => {
                let commit = r.peel_to_commit()?;
                Ok((commit_side("HEAD", &commit), Some(commit.tree()?)))
            }
            Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok((
                SideInfo {
                    label: "HEAD".into(),
                    commit: None,
                    worktree: false,
                },
                None,
            )),
            Err(e) => Err(e.into()),
        }
    }

    /// A revision's old side, and its new side unless it is the working tree.
    #[allow(clippy::type_complexity)]
    fn rev_sides(
        &self,
        rev: &str,
    ) -> Result<((SideInfo, Tree<'_>), Option<(SideInfo, Tree<'_>)>), GitError> {
        if rev.trim().is_empty() || rev.len() > MAX_REV_BYTES {
            return Err(GitError::BadRevision(format!(
                "a revision must be 1 to {MAX_REV_BYTES} bytes, not {}",
                rev.len()
            )));
        }
        let unknown = |e: git2::Error| GitError::UnknownRevision {
            rev: rev.to_string(),
            reason: e.message().to_string(),
        };
        let spec = self.repo.revparse(rev).map_err(unknown)?;
        let (from_text, to_text) = match rev.split_once("...").or_else(|| rev.split_once("..")) {
            Some((a, b)) => (nonempty(a, "HEAD"), nonempty(b, "HEAD")),
            None => (rev, ""),
        };
        let from = self.commit_of(spec.from(), from_text)?;
        if spec.mode().contains(git2::RevparseMode::SINGLE) {
            return Ok(((commit_side(rev, &from), from.tree()?), None));
        }
        let to = self.commit_of(spec.to(), to_text)?;
        let (old_label, old) = if spec.mode().contains(git2::RevparseMode::MERGE_BASE) {
            let base = self.repo.merge_base(from.id(), to.id()).map_err(|_| {
                GitError::BadRevision(format!("`{from_text}` and `{to_text}` have no merge base"))
            })?;
            (
                format!("merge-base({from_text}, {to_text})"),
                self.repo.find_commit(base)?,
            )
        } else {
            (from_text.to_string(), from)
        };
        Ok((
            (commit_side(&old_label, &old), old.tree()?),
            Some((commit_side(to_text, &to), to.tree()?)),
        ))
    }

    /// The commit a revision's end names (`HEAD` when the range leaves it out).
    fn commit_of<'r>(
        &'r self,
        o: Option<&git2::Object<'r>>,
        text: &str,
    ) -> Result<git2::Commit<'r>, GitError> {
        match o {
            Some(o) => o
                .peel_to_commit()
                .map_err(|_| GitError::BadRevision(format!("`{text}` names no commit"))),
            None => Ok(self.repo.head()?.peel_to_commit()?),
        }
    }

    /// A delta as a [`FileChange`], its paths relative to the workspace root.
    fn change_of(&self, delta: &git2::DiffDelta<'_>, similarity: Option<u8>) -> FileChange {
        let status = match delta.status() {
            Delta::Added | Delta::Untracked | Delta::Copied => Status::Added,
            Delta::Deleted => Status::Deleted,
            Delta::Renamed => Status::Renamed,
            Delta::Typechange => Status::TypeChanged,
            _ => Status::Modified,
        };
        let path = |f: &git2::DiffFile<'_>| {
            f.path_bytes().map(|b| {
                let text = String::from_utf8_lossy(b);
                text.strip_prefix(self.prefix.as_str())
                    .unwrap_or(&text)
                    .to_string()
            })
        };
        let (old, new) = (delta.old_file(), delta.new_file());
        let old_path = (status != Status::Added).then(|| path(&old)).flatten();
        let new_path = (status != Status::Deleted).then(|| path(&new)).flatten();
        let mode = if status == Status::Deleted {
            old.mode()
        } else {
            new.mode()
        };
        let content = match mode {
            FileMode::Commit => Content::Submodule,
            FileMode::Link => Content::Symlink,
            _ if delta.flags().is_binary() || old.is_binary() || new.is_binary() => Content::Binary,
            _ => Content::Text,
        };
        FileChange {
            status,
            old_path,
            new_path,
            similarity: similarity.filter(|_| status == Status::Renamed),
            content,
            removed: Vec::new(),
            added: Vec::new(),
            lines_removed: 0,
            lines_added: 0,
            old_id: (status != Status::Added).then(|| old.id()),
            new_id: (status != Status::Deleted).then(|| new.id()),
            old_is_link: old.mode() == FileMode::Link || old.mode() == FileMode::Commit,
            new_is_link: new.mode() == FileMode::Link || new.mode() == FileMode::Commit,
        }
    }
}

/// A diff whose changed files are known and whose hunks are not read yet. Reading the
/// hunks loads and compares every changed file's two blobs, a good part of a diff's
/// time: a caller can read the files' sides and start on them meanwhile (another
/// thread), then take the hunks.
pub struct Listed<'r> {
    diff: git2::Diff<'r>,
    listed: Diff,
}

impl Listed<'_> {
    /// The diff so far: its sides, and its changed files in the order
    /// [`Listed::with_hunks`] keeps, each without line ranges. A text file may still
    /// turn out binary once its content is read.
    pub fn without_hunks(&self) -> &Diff {
        &self.listed
    }

    /// The diff with every text file's hunks (a file whose content proves binary is
    /// marked [`Content::Binary`] instead).
    pub fn with_hunks(self) -> Result<Diff, GitError> {
        let Listed { diff, mut listed } = self;
        for (i, change) in listed.files.iter_mut().enumerate() {
            if change.content == Content::Text {
                fill_hunks(&diff, i, change)?;
            }
        }
        Ok(listed)
    }
}

/// The line ranges of delta `i`'s hunks (context 0, so each hunk is one block of
/// removed old lines and one of added new lines). A file the patch finds binary gets
/// none and is marked so.
fn fill_hunks(diff: &git2::Diff<'_>, i: usize, change: &mut FileChange) -> Result<(), GitError> {
    let Some(patch) = Patch::from_diff(diff, i)? else {
        return Ok(());
    };
    if patch.delta().flags().is_binary() {
        change.content = Content::Binary;
        return Ok(());
    }
    for h in 0..patch.num_hunks() {
        let (hunk, _) = patch.hunk(h)?;
        if hunk.old_lines() > 0 {
            change.removed.push(LineRange {
                start: hunk.old_start(),
                end: hunk.old_start() + hunk.old_lines() - 1,
            });
            change.lines_removed += hunk.old_lines();
        }
        if hunk.new_lines() > 0 {
            change.added.push(LineRange {
                start: hunk.new_start(),
                end: hunk.new_start() + hunk.new_lines() - 1,
            });
            change.lines_added += hunk.new_lines();
        }
    }
    Ok(())
}

/// Each delta's similarity score, from libgit2's raw format (`... R087\told\tnew`),
/// the one place git2 hands it out; `None` for a delta without one.
fn similarity_scores(diff: &git2::Diff<'_>) -> Result<Vec<Option<u8>>, GitError> {
    let mut scores = Vec::new();
    diff.print(DiffFormat::Raw, |_, _, line| {
        let text = String::from_utf8_lossy(line.content());
        let status = text.split(['\t', ' ']).nth(4).unwrap_or_default();
        let score = status
            .strip_prefix(['R', 'C'])
            .and_then(|digits| digits.parse::<u8>().ok());
        scores.push(score);
        true
    })?;
    Ok(scores)
}

/// Turns off libgit2's re-hashing of every object it reads (SHA-1 over each blob, a
/// tenth of a `changes` answer's time), once per process. loci only reads the
/// repository, and git itself checks objects when they are written and by `git fsck`,
/// not on every read.
fn skip_hash_verification() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| git2::opts::strict_hash_verification(false));
}

fn untracked(opts: &mut DiffOptions) {
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .show_untracked_content(true);
}

fn nonempty<'a>(text: &'a str, default: &'a str) -> &'a str {
    if text.is_empty() { default } else { text }
}

fn commit_side(label: &str, commit: &git2::Commit<'_>) -> SideInfo {
    SideInfo {
        label: label.to_string(),
        commit: Some(commit.id().to_string()),
        worktree: false,
    }
}

fn worktree_side() -> SideInfo {
    SideInfo {
        label: "working tree".into(),
        commit: None,
        worktree: true,
    }
}

fn index_side() -> SideInfo {
    SideInfo {
        label: "index".into(),
        commit: None,
        worktree: false,
    }
}
