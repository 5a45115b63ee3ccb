#!/usr/bin/env bash
# Builds a pure-Rust benchmark tree of a given size from the crates in
# ~/.cargo/registry/src: whole crates, taken in name order, that hold Rust and no other
# source language, until their .rs files (each up to 1 MiB, as loci indexes them) reach
# the size. The core issue's reference repository is 17 MB.
#
# Usage: scripts/rust-corpus.sh <out-dir> [megabytes, default 17]
set -euo pipefail

out=${1:?usage: scripts/rust-corpus.sh <out-dir> [megabytes]}
mb=${2:-17}
if [ -e "$out" ]; then
    echo "rust-corpus: $out already exists" >&2
    exit 2
fi
python3 - "$out" "$mb" <<'PY'
import os, shutil, sys

out, limit = sys.argv[1], float(sys.argv[2]) * 1e6
registry = os.path.expanduser("~/.cargo/registry/src")
other = (".c", ".h", ".cc", ".cpp", ".hpp", ".py", ".js", ".ts", ".tsx", ".go", ".java",
         ".rb", ".php", ".sh", ".cs", ".kt", ".swift")
crates = sorted(
    os.path.join(index, crate)
    for index in (os.path.join(registry, d) for d in os.listdir(registry))
    for crate in os.listdir(index)
)
os.makedirs(out)
total = lines = used = 0
for crate in crates:
    rust = rust_lines = 0
    mixed = False
    for d, _, files in os.walk(crate):
        for f in files:
            path = os.path.join(d, f)
            if os.path.islink(path):
                continue
            size = os.path.getsize(path)
            if f.endswith(".rs") and size <= 1 << 20:
                rust += size
                with open(path, "rb") as fh:
                    rust_lines += fh.read().count(b"\n")
            elif f.endswith(other):
                mixed = True
    if mixed or rust == 0 or total + rust > limit:
        continue
    shutil.copytree(crate, os.path.join(out, os.path.basename(crate)), symlinks=True)
    total, lines, used = total + rust, lines + rust_lines, used + 1
print(f"{out}: {used} crates, {total / 1e6:.1f} MB of Rust, {lines} lines")
PY
