#!/usr/bin/env bash
# Agent evaluation (issue #30): scripted tasks with ground truth on tokio, asked over MCP
# (`BIN mcp --workspace TREE`, official MCP Python SDK) and scored from the answers:
# correctness, tool calls, characters. See docs/mcp.md, "Agent evaluation".
#
# Usage: scripts/agent-eval.sh BIN [BIN2] [--out DIR] [--label NAME]... [--crate DIR]
#   BIN, BIN2   loci binaries (BIN2: the "after" side of a before/after comparison)
#   --out DIR   results.json, results.md and the work trees (default target/agent-eval)
#   --label     a name per binary, in order (default: the file's name)
#   --crate     the tokio crate directory (default: the highest tokio-1.* in ~/.cargo/registry/src;
#               its version must be that of scripts/agent_eval/truth-tokio-*.json)
# Needs python3 with the MCP Python SDK (`pip install mcp`); not the ground truth's tools
# (rustc nightly, tree-sitter): the truth is stored, built by `python3 -m agent_eval.truth build`.
set -euo pipefail
cd "$(dirname "$0")/.."
bins=()
args=()
out=target/agent-eval
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --label|--crate) args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "agent-eval: unknown option $1" >&2; exit 2 ;;
    *) bins+=("$(realpath "$1")"); shift ;;
  esac
done
if [ ${#bins[@]} -lt 1 ] || [ ${#bins[@]} -gt 2 ]; then
  echo "usage: scripts/agent-eval.sh BIN [BIN2] [--out DIR] [--label NAME]... [--crate DIR]" >&2
  exit 2
fi
python3 -c "import mcp" 2>/dev/null || { echo "agent-eval: needs the MCP Python SDK (pip install mcp)" >&2; exit 2; }
mkdir -p "$out"
out=$(realpath "$out")
binargs=()
for b in "${bins[@]}"; do binargs+=(--bin "$b"); done
cd scripts
exec python3 -m agent_eval.run "${binargs[@]}" --out "$out" "${args[@]}"
