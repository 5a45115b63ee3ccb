#!/usr/bin/env bash
# How a first index grows with the tree, on the crate sources of
# ~/.cargo/registry/src hard-linked into OUT and indexed from nothing by one or two
# loci binaries, alternated so both see the same machine.
#
# Two families of trees:
# - Same mix, more of it (the fit): `f1` `f2` `f4` `f8` hold, from EVERY crate, the
#   files whose path hashes (sha1 of the path inside the registry) into the first
#   1, 2, 4 or 8 of 8 buckets. Each is a superset of the one before, and all four
#   have the same crates, languages and kinds of file in the same proportions, so
#   the fit of time against lines measures the algorithm, not which crates a tree
#   happened to get (`f8` is every file). Picking whole crates instead (`quarter`,
#   `half`, `all` below) gives trees of different make-up: `all` holds 0.6 M lines of
#   C that `quarter` has almost none of, and per-file work alone (parsing) then grows
#   faster than lines.
# - Whole crates: `quarter` (every 4th crate), `half` (every 2nd), `all`, and `twice`
#   (all of them again beside themselves: every name has twice the definitions, the
#   worst case for resolution).
#
# Prints per tree and binary: lines and files the index holds (every language, from
# the index itself), wall and user CPU seconds, peak RSS, the seconds of the parse
# phase and of resolution (wall, from the log), resolution's chunks and the lines per
# CPU second; then, per binary, the least-squares exponent k of CPU ∝ lines^k over
# the trees of the first family that ran (1 is linear).
#
# Usage: scripts/scale.sh OUT LOCI [BASELINE_LOCI]
#   ROUNDS=n runs of each binary per tree (default 1); TREES="f1 f2 f4 f8" (default;
#   any of f1 f2 f4 f8 quarter half all twice)
set -euo pipefail
out=${1:?usage: scripts/scale.sh OUT LOCI [BASELINE_LOCI]}
shift
bins=("$@")
[ ${#bins[@]} -ge 1 ] || { echo "scale: no loci binary given" >&2; exit 2; }
registry=$(echo ~/.cargo/registry/src/*/)
mkdir -p "$out"
trees=${TREES:-f1 f2 f4 f8}

# Whole crates, built once (hard links: no copy of the sources).
crates() { # crates NAME STEP COPIES
    local tree="$out/$1"
    [ -d "$tree" ] && return
    local i=0
    for crate in $(ls "$registry"); do
        if [ $((i % $2)) -eq 0 ]; then
            for c in $(seq 1 "$3"); do
                mkdir -p "$tree/copy$c"
                cp -al "$registry/$crate" "$tree/copy$c/"
            done
        fi
        i=$((i + 1))
    done
}

# The same mix at a fraction: the files of every crate in the first BUCKETS of 8
# buckets by the hash of their path.
fraction() { # fraction NAME BUCKETS
    local tree="$out/$1"
    [ -d "$tree" ] && return
    python3 - "$registry" "$tree" "$2" <<'EOF'
import hashlib, os, sys
src, dst, buckets = sys.argv[1], sys.argv[2], int(sys.argv[3])
for root, _dirs, files in os.walk(src):
    for name in files:
        path = os.path.join(root, name)
        rel = os.path.relpath(path, src)
        if hashlib.sha1(rel.encode()).digest()[0] % 8 >= buckets or os.path.islink(path):
            continue
        target = os.path.join(dst, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        os.link(path, target)
EOF
}

for tree in $trees; do
    case $tree in
        f1) fraction f1 1 ;; f2) fraction f2 2 ;; f4) fraction f4 4 ;; f8) fraction f8 8 ;;
        quarter) crates quarter 4 1 ;; half) crates half 2 1 ;; all) crates all 1 1 ;;
        twice) crates twice 1 2 ;;
        *) echo "scale: unknown tree $tree" >&2; exit 2 ;;
    esac
done

results=$(mktemp)
printf '%-8s %-10s %10s %7s %8s %8s %9s %8s %9s %7s %10s\n' \
    tree binary lines files wall-s user-s peak-MiB parse-s resolve-s chunks lines/cpu-s
for tree in $trees; do
    for round in $(seq 1 "${ROUNDS:-1}"); do
        # Alternated: the baseline first every other round.
        order=("${bins[@]}")
        [ $((round % 2)) -eq 0 ] && order=($(printf '%s\n' "${bins[@]}" | tac))
        for b in "${order[@]}"; do
            work=$(mktemp -d)
            LOCI_HOME="$work/home" LOCI_LOG=loci_index=debug \
                /usr/bin/time -f '%M %e %U' -o "$work/time" \
                "$b" index "$out/$tree" --index-path "$work/index.db" \
                >"$work/out" 2>"$work/log"
            read -r kb wall user <"$work/time"
            read -r lines files < <(python3 -c '
import sqlite3, sys
lines, files = sqlite3.connect(sys.argv[1]).execute(
    "SELECT COALESCE(SUM(lines), 0), COUNT(*) FROM files").fetchone()
print(lines, files)' "$work/index.db")
            log=$(sed 's/\x1b\[[0-9;]*m//g' "$work/log")
            parsed_ms=$(grep 'parsed and written' <<<"$log" | grep -o ' ms=[0-9]*' | cut -d= -f2)
            resolved_ms=$(grep 'resolved ms' <<<"$log" | grep -o 'ms=[0-9]*' | cut -d= -f2)
            chunks=$(grep -c 'resolved a chunk' <<<"$log" || true)
            printf '%-8s %-10s %10s %7s %8s %8s %9s %8s %9s %7s %10s\n' \
                "$tree" "$(basename "$b")" "$lines" "$files" "$wall" "$user" "$((kb / 1024))" \
                "$((parsed_ms / 1000))" "$(((resolved_ms - parsed_ms) / 1000))" "$chunks" \
                "$(python3 -c "print(round($lines / $user))")"
            echo "$tree $b $lines $user" >>"$results"
            rm -rf "$work"
        done
    done
done

# The exponent of CPU ∝ lines^k per binary, over the same-mix trees (means of rounds).
python3 - "$results" <<'EOF'
import collections, math, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    tree, binary, lines, user = line.split()
    if tree in ("f1", "f2", "f4", "f8"):
        runs[(binary, tree)].append((int(lines), float(user)))
by_binary = collections.defaultdict(list)
for (binary, _tree), samples in runs.items():
    lines = sum(l for l, _ in samples) / len(samples)
    user = sum(u for _, u in samples) / len(samples)
    by_binary[binary].append((math.log(lines), math.log(user)))
for binary, points in by_binary.items():
    if len(points) < 2:
        continue
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    k = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    print(f"{binary}: CPU ∝ lines^{k:.3f} over {len(points)} same-mix trees")
EOF
rm -f "$results"
