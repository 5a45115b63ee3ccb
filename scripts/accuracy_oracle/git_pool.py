"""Pool entries read from a bare clone at a pinned commit: `git:OWNER/NAME@COMMIT:FOLDERS`
(Kotlin's and Swift's pools). The clone is `ROOT/OWNER+NAME/repo` (the layout the
`fetch` tool makes; `git clone --bare` one there by hand elsewhere)."""
import os
import subprocess


def parse(spec):
    """(OWNER/NAME, commit, [folders]) of a `git:OWNER/NAME@COMMIT:FOLDERS` entry."""
    repo_at, folders = spec.split(":", 1)[1].rsplit(":", 1)
    repo, commit = repo_at.split("@")
    return repo, commit, folders.split(",")


def git_dir(root, repo):
    """The bare clone of `repo` under `root`; an error saying how to make it when missing."""
    d = os.path.join(root, repo.replace("/", "+"), "repo")
    if not os.path.isdir(d):
        raise RuntimeError(f"{repo} is not cloned: git clone --bare it into {d}")
    return d


def export(root, repo, commit, paths, dest):
    """Writes `paths` (files or folders) of `repo` at `commit` under `dest`."""
    archive = subprocess.run(["git", "--git-dir", git_dir(root, repo), "archive", commit, "--"] + list(paths),
                             stdout=subprocess.PIPE, check=True).stdout
    os.makedirs(dest, exist_ok=True)
    subprocess.run(["tar", "x", "-C", dest], input=archive, check=True)
