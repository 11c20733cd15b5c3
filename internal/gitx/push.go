package gitx

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// PushKind classifies a failed push by what the user has to do about it.
type PushKind int

const (
	// PushOther is any failure not named below; Detail says what git said.
	PushOther PushKind = iota
	// PushNoUpstream: the branch has no upstream, there is no remote to push
	// to, or HEAD is detached.
	PushNoUpstream
	// PushRejected: the remote has commits we do not have (non-fast-forward).
	// vaultmcp never pulls, rebases or merges; the user integrates by hand.
	PushRejected
	// PushAuth: the remote wants credentials we do not have (we never prompt).
	PushAuth
	// PushNetwork: the remote could not be reached, or the push timed out.
	PushNetwork
)

func (k PushKind) String() string {
	switch k {
	case PushNoUpstream:
		return "no upstream"
	case PushRejected:
		return "rejected: the remote is ahead"
	case PushAuth:
		return "authentication failed"
	case PushNetwork:
		return "remote unreachable"
	}
	return "failed"
}

// PushError is a failed `git push`.
type PushError struct {
	Kind   PushKind
	Detail string // git's most telling line, credentials in URLs removed
	Err    error  // the underlying *Error (or context error)
}

func (e *PushError) Error() string {
	if e.Detail == "" {
		return "git push: " + e.Kind.String()
	}
	return fmt.Sprintf("git push: %s: %s", e.Kind, e.Detail)
}

func (e *PushError) Unwrap() error { return e.Err }

// Push runs `git push` with no refspec (the branch's configured upstream,
// following push.default), bounded by the timeout and never prompting.
// A failure is a *PushError. It never pulls, rebases or merges.
func (r *Repo) Push(ctx context.Context) error {
	_, err := r.Run(ctx, "push", "--quiet")
	if err == nil {
		return nil
	}
	return classifyPushErr(ctx, err)
}

// pushRules are tried in order against git's stderr, case-insensitively; the
// first match names the kind, and the line it matched is the detail.
// Authentication comes before network: "unable to access ... 403" is auth.
var pushRules = []struct {
	kind PushKind
	subs []string
}{
	{PushNoUpstream, []string{"has no upstream branch", "no configured push destination", "not currently on a branch"}},
	{PushRejected, []string{"[rejected]", "non-fast-forward", "fetch first", "updates were rejected"}},
	{PushAuth, []string{
		"authentication failed", "could not read username", "could not read password", "terminal prompts disabled",
		"permission denied", "access denied", "returned error: 401", "returned error: 403",
		"host key verification failed", "invalid username or password", "invalid username or token",
		"invalid credentials", "bad credentials", "password authentication was removed",
	}},
	{PushNetwork, []string{
		"could not resolve host", "could not resolve hostname", "failed to connect", "couldn't connect",
		"connection refused", "connection timed out", "operation timed out", "timed out", "network is unreachable",
		"no route to host", "connection reset", "the remote end hung up unexpectedly", "early eof",
		"ssh: connect to host", "temporary failure in name resolution", "proxy connect", "ssl connect error",
		"ssl certificate problem", "gnutls", "tls handshake",
	}},
}

// Compiled on first use: a process start does not pay for it.
var credInURL = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(://)[^/@\s]+@`) })

// classifyPush tells the kind of a failed push from git's stderr.
func classifyPush(stderr string) (PushKind, string) {
	lines := strings.Split(strings.ReplaceAll(stderr, "\r", "\n"), "\n")
	for _, rule := range pushRules {
		for _, line := range lines {
			l := strings.ToLower(line)
			for _, sub := range rule.subs {
				if strings.Contains(l, sub) {
					return rule.kind, cleanDetail(line)
				}
			}
		}
	}
	// Nothing recognised: the first fatal/error line, else the first line.
	for _, line := range lines {
		l := strings.ToLower(strings.TrimSpace(line))
		if strings.HasPrefix(l, "fatal:") || strings.HasPrefix(l, "error:") || strings.Contains(l, "[remote rejected]") {
			return PushOther, cleanDetail(line)
		}
	}
	return PushOther, cleanDetail(firstLine(stderr))
}

func cleanDetail(line string) string {
	line = strings.TrimSpace(line)
	for _, p := range []string{"fatal: ", "error: ", "remote: ", "hint: "} {
		line = strings.TrimPrefix(line, p)
	}
	return credInURL().ReplaceAllString(line, "$1")
}
