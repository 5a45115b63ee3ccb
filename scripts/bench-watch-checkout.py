#!/usr/bin/env python3
"""How soon `loci watch` follows a checkout: the time from `git checkout` returning to
the watcher's sync event, split into noticing (debounce included) and the sync itself
(the event's own `elapsed_ms`), and whether an answer's freshness then names the new commit.

Usage: scripts/bench-watch-checkout.py REPO REV_A REV_B [RUNS]   (default 6)
       LOCI_BIN=/path/to/loci (default: target/release/loci)

The repository is cloned into a temp dir (loci writes .loci/ inside the workspace),
indexed at REV_A, then checked out alternately at REV_B and REV_A while `loci watch
--json` runs with its default debounce. Prints each run and the medians.
"""

import json
import os
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
LOCI = os.environ.get("LOCI_BIN", os.path.join(HERE, "..", "target", "release", "loci"))
EVENT_DEADLINE_S = 120


def git(cwd, *args):
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    repo, rev_a, rev_b = sys.argv[1:4]
    runs = int(sys.argv[4]) if len(sys.argv) > 4 else 6
    work = tempfile.mkdtemp(prefix="loci-watch-bench-")
    env = dict(os.environ, LOCI_HOME=os.path.join(work, "home"))
    ws = os.path.join(work, "repo")
    watcher = None
    try:
        git(work, "clone", "-q", "--no-checkout", repo, ws)
        git(ws, "checkout", "-q", "--detach", rev_a)
        differ = len(git(ws, "diff", "--name-only", rev_a, rev_b).splitlines())
        print(f"{rev_a}..{rev_b}: {differ} files differ", file=sys.stderr)
        subprocess.run([LOCI, "index", ws, "--json"], env=env, check=True, capture_output=True)
        watcher = subprocess.Popen(
            [LOCI, "watch", "--json"], cwd=ws, env=env, stdout=subprocess.PIPE, text=True
        )
        events = queue.Queue()

        def pump():
            for line in watcher.stdout:
                events.put((time.monotonic(), json.loads(line)))

        threading.Thread(target=pump, daemon=True).start()
        _, first = events.get(timeout=EVENT_DEADLINE_S)
        assert first["trigger"] == "catch_up", first
        notice, total, syncs = [], [], []
        target = rev_b
        for i in range(runs):
            git(ws, "checkout", "-q", "--detach", target)
            done = time.monotonic()
            at, event = events.get(timeout=EVENT_DEADLINE_S)
            while event.get("files_parsed", 0) == 0 and event.get("wrote") is False:
                at, event = events.get(timeout=EVENT_DEADLINE_S)
            whole = (at - done) * 1000
            sync = event["elapsed_ms"]
            answer = json.loads(
                subprocess.run(
                    [LOCI, "find", "main", "--json", "--limit", "1"],
                    cwd=ws, env=env, check=True, capture_output=True, text=True,
                ).stdout
            )
            head = git(ws, "rev-parse", "HEAD")
            named = (answer["index"].get("commit") or {}).get("id") == head
            print(
                f"run {i + 1}: to {target[:12]}: event after {whole:.0f} ms "
                f"(noticed {whole - sync:.0f} ms, sync {sync} ms, parsed {event['files_parsed']}); "
                f"answers name HEAD: {named}",
                file=sys.stderr,
            )
            notice.append(whole - sync)
            total.append(whole)
            syncs.append(sync)
            target = rev_a if target == rev_b else rev_b
        print(
            f"median: noticed {statistics.median(notice):.0f} ms, sync {statistics.median(syncs):.0f} ms, "
            f"checkout to synced {statistics.median(total):.0f} ms (max {max(total):.0f})"
        )
    finally:
        if watcher:
            watcher.kill()
            watcher.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
