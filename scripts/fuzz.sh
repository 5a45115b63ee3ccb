#!/usr/bin/env bash
# Reruns the extractors' fuzz campaign (issue #26): builds the cargo-fuzz targets in
# fuzz/, gathers real source files of every language from this machine as seeds, runs
# each target for SECONDS and prints, per target, the time, executions and the crashes,
# timeouts and out-of-memory inputs it found (kept under fuzz/work/artifacts/<target>/).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     run (default: 300 s, every target)
#   scripts/fuzz.sh --seeds [TARGET...]       only gather the seeds
#   scripts/fuzz.sh --minimise [TARGET...]    rewrite fuzz/corpus/<target>/ from the run's
#                                             corpus: libFuzzer's merge, then at most
#                                             MAX_KEPT_BYTES of its smallest inputs
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`).
# Seeds come from: ~/.cargo/registry/src (Rust), Python's standard library, the npm
# packages expo-modules-core (TypeScript, TSX, Kotlin, Swift) and npm's own
# node_modules (JavaScript), golang's /usr/share/go-*/src (apt golang-src), OpenJDK's
# src.zip (Java), the pythonnet sdist from PyPI (C#), /usr/include and /usr/src/googletest
# (C, C++: libc6-dev, googletest, libfmt-dev, libboost-dev), Ruby's /usr/lib/ruby,
# /usr/share/php (PHP), shell scripts under /etc and /usr/share (Bash); the resolution
# target starts from the index's own fixture workspaces, the E5S1 model loader's (e5s1)
# from the tiny model committed in fuzz/corpus/e5s1/. A source that is missing is
# reported and skipped. Which files are sampled is fixed by FUZZ_SEED.
#
# A found input is a defect to fix: copy it to crates/index/tests/fuzz_regressions/<lang>/
# (the test `fuzz_regressions` extracts each one under a deadline).
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
FUZZ=$ROOT/fuzz
WORK=${FUZZ_WORK:-$FUZZ/work}
FUZZ_SEED=${FUZZ_SEED:-20261204}
SEEDS_PER_TARGET=${SEEDS_PER_TARGET:-400}
MAX_SEED_BYTES=${MAX_SEED_BYTES:-65536}
MAX_LEN=${MAX_LEN:-65536}
TIMEOUT=${TIMEOUT:-10}
RSS_LIMIT_MB=${RSS_LIMIT_MB:-2048}
MAX_KEPT_BYTES=${MAX_KEPT_BYTES:-24576}
BIN=$FUZZ/target/x86_64-unknown-linux-gnu/release

EXTRACT_TARGETS=(rust python javascript typescript tsx go java c cpp csharp ruby php kotlin swift bash)
ALL_TARGETS=()
for lang in "${EXTRACT_TARGETS[@]}"; do ALL_TARGETS+=("extract_$lang"); done
ALL_TARGETS+=(header resolve e5s1)

mode=run
if [[ ${1:-} == --minimise || ${1:-} == --seeds ]]; then
    mode=${1#--}
    shift
    seconds=0
else
    seconds=${1:-300}
    [[ $# -gt 0 ]] && shift
fi
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${ALL_TARGETS[@]}")

build() {
    (cd "$FUZZ" && cargo +nightly fuzz build --sanitizer none --debug-assertions "$@" >&2)
}

# A reproducible pseudo-random byte stream for `shuf`, from FUZZ_SEED.
random_source() {
    openssl enc -aes-256-ctr -pass pass:"$FUZZ_SEED" -nosalt </dev/zero 2>/dev/null
}

# Lists files under the given roots whose names match `-name` patterns ($1: "*.rs|*.h"),
# at most MAX_SEED_BYTES each; prints them sorted.
list_files() {
    local patterns=$1
    shift
    local args=() first=1
    IFS='|' read -ra pats <<<"$patterns"
    for p in "${pats[@]}"; do
        ((first)) || args+=(-o)
        args+=(-name "$p")
        first=0
    done
    for root in "$@"; do
        if [[ -d $root ]]; then
            find "$root" -type f \( "${args[@]}" \) -size -"$((MAX_SEED_BYTES + 1))"c 2>/dev/null
        else
            echo "fuzz.sh: seed source $root is missing, skipped" >&2
        fi
    done | LC_ALL=C sort
}

# Prints the files directly under the given folders that start with a `sh`/`bash` `#!`.
shell_scripts() {
    find "$@" -maxdepth 1 -type f -size -"$((MAX_SEED_BYTES + 1))"c 2>/dev/null |
        LC_ALL=C sort | while read -r f; do
        head -c 64 "$f" 2>/dev/null | grep -qaE '^#! ?/(usr/)?bin/(env )?(ba)?sh' && echo "$f"
    done
}

# Copies a fixed random sample of the listed files (stdin) into $1.
sample_into() {
    local dest=$1 i=0
    mkdir -p "$dest"
    shuf --random-source=<(random_source) -n "$SEEDS_PER_TARGET" | while read -r f; do
        cp "$f" "$dest/$(printf '%04d' $i)-$(basename "$f")"
        i=$((i + 1))
    done
}

# Fetches (once) the registry packages whose files seed the languages this machine's
# system packages have none of.
fetch_packages() {
    local pkgs=$WORK/packages
    mkdir -p "$pkgs"
    if [[ ! -d $pkgs/expo-modules-core ]]; then
        (cd "$pkgs" && npm pack --silent expo-modules-core@58.2.0 >/dev/null &&
            mkdir -p expo-modules-core && tar -xzf expo-modules-core-58.2.0.tgz -C expo-modules-core) ||
            echo "fuzz.sh: npm pack expo-modules-core failed" >&2
    fi
    if [[ ! -d $pkgs/typescript ]]; then
        (cd "$pkgs" && npm pack --silent typescript@5.9.3 >/dev/null &&
            mkdir -p typescript && tar -xzf typescript-5.9.3.tgz -C typescript) ||
            echo "fuzz.sh: npm pack typescript failed" >&2
    fi
    if [[ ! -d $pkgs/pythonnet ]]; then
        (cd "$pkgs" && python3 -m pip download --quiet --no-deps --no-binary :all: \
            pythonnet==3.2.1 -d . >/dev/null && mkdir -p pythonnet &&
            tar -xzf pythonnet-3.2.1.tar.gz -C pythonnet) ||
            echo "fuzz.sh: pip download pythonnet failed" >&2
    fi
    if [[ ! -d $pkgs/jdk ]]; then
        local zip
        zip=""
        for z in /usr/lib/jvm/*/lib/src.zip; do # a link whose target is missing is passed over
            if [[ -f $z ]]; then zip=$z; break; fi
        done
        if [[ -n $zip ]]; then
            mkdir -p "$pkgs/jdk" && unzip -q "$zip" 'java.base/java/util/*' 'java.base/java/lang/*' \
                'java.base/java/io/*' -d "$pkgs/jdk"
        else
            echo "fuzz.sh: no OpenJDK src.zip (apt: openjdk-17-source)" >&2
        fi
    fi
}

# Gathers the seeds of one target into $WORK/seeds/<target>, once.
gather_seeds() {
    local target=$1 dest=$WORK/seeds/$1 pkgs=$WORK/packages
    [[ -d $dest ]] && return
    local stdlib
    stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
    case $target in
        extract_rust) list_files '*.rs' "$HOME/.cargo/registry/src" ;;
        extract_python) list_files '*.py' "$stdlib" ;;
        extract_javascript) list_files '*.js|*.mjs|*.cjs|*.jsx' /usr/lib/node_modules/npm "$pkgs/expo-modules-core" ;;
        extract_typescript) list_files '*.ts' "$pkgs/expo-modules-core" "$pkgs/typescript" ;;
        extract_tsx) list_files '*.tsx|*.ts|*.jsx' "$pkgs/expo-modules-core" ;;
        extract_go) list_files '*.go' /usr/share/go-*/src ;;
        extract_java) list_files '*.java' "$pkgs/jdk" ;;
        extract_c) list_files '*.c|*.h' /usr/include/linux /usr/include/x86_64-linux-gnu /usr/share/go-*/misc /usr/share/go-*/src/runtime/cgo ;;
        extract_cpp) list_files '*.h|*.hpp|*.cc|*.cpp|*.ipp' /usr/src/googletest /usr/include/fmt /usr/include/boost/algorithm /usr/include/boost/container /usr/include/boost/optional ;;
        extract_csharp) list_files '*.cs' "$pkgs/pythonnet" ;;
        extract_ruby) list_files '*.rb' /usr/lib/ruby ;;
        extract_php) list_files '*.php' /usr/share/php ;;
        extract_kotlin) list_files '*.kt|*.kts' "$pkgs/expo-modules-core" ;;
        extract_swift) list_files '*.swift' "$pkgs/expo-modules-core" ;;
        extract_bash) { list_files '*.sh|*.bash' /etc /usr/share; shell_scripts /usr/bin /usr/sbin /usr/lib/git-core; } ;;
        header) list_files '*.h' /usr/include /usr/src/googletest ;;
        resolve) seed_resolve "$dest"; return ;;
        # the committed fuzz/corpus/e5s1/tiny.bin (a tiny model) is its seed
        e5s1) mkdir -p "$dest"; return ;;
    esac | sample_into "$dest"
}

# The resolution target's seeds: each fixture workspace of the index tests as one input
# of `//// path` sections (fuzz/src/lib.rs).
seed_resolve() {
    local dest=$1
    mkdir -p "$dest"
    for dir in "$ROOT"/crates/index/tests/fixtures/*/; do
        local name out
        name=$(basename "$dir")
        out=$dest/$name
        : >"$out"
        (cd "$dir" && find . -type f ! -name 'expected_*' | LC_ALL=C sort | while read -r f; do
            printf '//// %s\n' "${f#./}"
            cat "$f"
            echo
        done) >>"$out"
    done
}

# Rewrites the committed corpus of one target from its run corpus: libFuzzer's merge
# keeps the smallest inputs that cover every feature; then the smallest of those up to
# MAX_KEPT_BYTES.
minimise_corpus() {
    local target=$1 kept=$FUZZ/corpus/$1 merged=$WORK/merged/$1 total=0
    rm -rf "$merged" && mkdir -p "$merged" "$kept"
    "$BIN/$target" -merge=1 -max_len="$MAX_LEN" -timeout="$TIMEOUT" -rss_limit_mb="$RSS_LIMIT_MB" \
        "$merged" "$WORK/corpus/$target" "$kept" >"$WORK/logs/$target.merge.log" 2>&1
    rm -rf "$kept" && mkdir -p "$kept"
    while read -r size f; do
        ((total + size > MAX_KEPT_BYTES)) && break
        cp "$f" "$kept/"
        total=$((total + size))
    done < <(find "$merged" -type f -printf '%s %p\n' | LC_ALL=C sort -n)
    echo "$target: $(ls "$kept" | wc -l) inputs, $total bytes kept of $(ls "$merged" | wc -l) merged"
}

# Runs one target for $seconds in fork mode (one job: the machine has two cores), going
# on past crashes, timeouts and OOMs so that one run finds more than one defect.
run_target() {
    local target=$1 corpus=$WORK/corpus/$1 artifacts=$WORK/artifacts/$1/ log=$WORK/logs/$1.log
    mkdir -p "$corpus" "$artifacts" "$WORK/logs" "$FUZZ/corpus/$target"
    local started=$SECONDS
    "$BIN/$target" -fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        -max_total_time="$seconds" -max_len="$MAX_LEN" -timeout="$TIMEOUT" \
        -rss_limit_mb="$RSS_LIMIT_MB" -report_slow_units=2 -seed="$FUZZ_SEED" \
        -artifact_prefix="$artifacts" \
        "$corpus" "$FUZZ/corpus/$target" "$WORK/seeds/$target" >"$log" 2>&1 || true
    local elapsed=$((SECONDS - started))
    # Fork mode's status lines: `#EXECS: cov: .. corp: N .. oom/timeout/crash: a/b/c`.
    local last execs corp faults
    last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -n 1 || true)
    execs=$(sed -E 's/^#([0-9]+):.*/\1/' <<<"$last")
    corp=$(sed -nE 's/.* corp: ([0-9]+) .*/\1/p' <<<"$last")
    faults=$(sed -nE 's|.*oom/timeout/crash: ([0-9/]+).*|\1|p' <<<"$last")
    printf '%-20s %6ss %12s execs  corpus %6s  oom/timeout/crash %s  artifacts %s\n' \
        "$target" "$elapsed" "${execs:-?}" "${corp:-?}" "${faults:-?}" \
        "$(find "$artifacts" -type f | wc -l)"
}

mkdir -p "$WORK/logs"
if [[ $mode == minimise ]]; then
    build
    for t in "${targets[@]}"; do minimise_corpus "$t"; done
    exit 0
fi
fetch_packages
for t in "${targets[@]}"; do gather_seeds "$t"; done
[[ $mode == seeds ]] && exit 0
build
echo "seed: $FUZZ_SEED; ${seconds}s per target; timeout ${TIMEOUT}s; rss limit ${RSS_LIMIT_MB} MB; max_len $MAX_LEN"
for t in "${targets[@]}"; do run_target "$t"; done
