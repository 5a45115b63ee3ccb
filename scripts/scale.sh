#!/usr/bin/env bash
# How a first index grows with the tree: the crate sources of ~/.cargo/registry/src
# at four sizes (every 4th crate, every 2nd, all of them, and all of them twice:
# the same code again, so every name has twice the definitions), hard-linked into
# OUT, each indexed from nothing by one or two loci binaries, alternated so both see
# the same machine. Prints per tree and binary: lines of Rust, files parsed, wall and
# user CPU seconds, peak RSS, resolution's seconds and chunks, and the lines per CPU
# second.
#
# Usage: scripts/scale.sh OUT LOCI [BASELINE_LOCI]
#   ROUNDS=n runs of each binary per tree (default 1), TREES="quarter half all twice"
set -euo pipefail
out=${1:?usage: scripts/scale.sh OUT LOCI [BASELINE_LOCI]}
shift
bins=("$@")
[ ${#bins[@]} -ge 1 ] || { echo "scale: no loci binary given" >&2; exit 2; }
registry=$(echo ~/.cargo/registry/src/*/)
mkdir -p "$out"

# The trees, built once (hard links: no copy of the sources).
build() { # build NAME STEP COPIES
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
build quarter 4 1
build half 2 1
build all 1 1
build twice 1 2

printf '%-8s %-10s %10s %7s %8s %8s %9s %9s %7s %10s\n' \
    tree binary rust-lines files wall-s user-s peak-MiB resolve-s chunks lines/cpu-s
for tree in ${TREES:-quarter half all twice}; do
    lines=$(find "$out/$tree" -name '*.rs' -size -1025k -print0 | xargs -0 cat | wc -l)
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
            log=$(sed 's/\x1b\[[0-9;]*m//g' "$work/log")
            files=$(grep -o 'parsed=[0-9]*' <<<"$log" | tail -1 | cut -d= -f2)
            parsed_ms=$(grep 'parsed and written' <<<"$log" | grep -o ' ms=[0-9]*' | cut -d= -f2)
            resolved_ms=$(grep 'resolved ms' <<<"$log" | grep -o 'ms=[0-9]*' | cut -d= -f2)
            chunks=$(grep -c 'resolved a chunk' <<<"$log" || true)
            printf '%-8s %-10s %10s %7s %8s %8s %9s %9s %7s %10s\n' \
                "$tree" "$(basename "$b")" "$lines" "$files" "$wall" "$user" "$((kb / 1024))" \
                "$(((resolved_ms - parsed_ms) / 1000))" "$chunks" \
                "$(python3 -c "print(round($lines / $user))")"
            rm -rf "$work"
        done
    done
done
