#!/usr/bin/env bash
# Makes cmd/vaultmcp/default.pgo again: the CPU profile that `go build` and
# `go install` of vaultmcp use for profile-guided optimisation (Go's -pgo=auto).
# It profiles, on each vault given, the first build of the index, a start
# from the index snapshot, searches in process and searches over MCP stdio
# framing, and merges the profiles.
#
#   eval/pgo.sh VAULT...
#
# The committed profile came from the Obsidian hub and the generated
# 100k-note vault (`vaultmcp bench --sizes 100000 --out DIR`). Run it again
# when the hot paths change; the README's Performance section says what the
# profile gave.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -eq 0 ]; then
  echo "usage: eval/pgo.sh VAULT..." >&2
  exit 2
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
i=0
for vault in "$@"; do
  i=$((i + 1))
  VAULTMCP_CORPUS="$vault" go test -run '^$' -bench 'BenchmarkColdIndex|BenchmarkSnapshotStart|BenchmarkSearch$' \
    -benchtime 2x -cpuprofile "$tmp/vault-$i.prof" -o "$tmp/vault.test" ./internal/vault
  VAULTMCP_CORPUS="$vault" go test -run '^$' -bench 'BenchmarkSearchMCPRaw' \
    -benchtime 2000x -cpuprofile "$tmp/mcp-$i.prof" -o "$tmp/bench.test" ./internal/bench
done
go tool pprof -proto "$tmp"/*.prof > "$tmp/default.pgo"
mv "$tmp/default.pgo" cmd/vaultmcp/default.pgo
echo "cmd/vaultmcp/default.pgo: $(wc -c < cmd/vaultmcp/default.pgo) bytes"
