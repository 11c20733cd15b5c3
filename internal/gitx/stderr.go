package gitx

import (
	"errors"
	"strings"
)

// git tells most of its failures apart only in words: the exit status is 1
// or 128 for all of them. The few failures this package must tell apart are
// read here, in one place, from the *Error of the run that failed (a
// failed push is classified by pushRules, in push.go). Everything above
// gitx sees typed values (ErrNothingToCommit, ErrLocalChanges, *PushError,
// ...), never git's text.

// stderrOf is the standard error of the git run that err comes from, or "".
func stderrOf(err error) string {
	var ge *Error
	if errors.As(err, &ge) {
		return ge.Stderr
	}
	return ""
}

// isIndexLocked tells a failure caused by an index.lock another program holds.
func isIndexLocked(err error) bool {
	s := stderrOf(err)
	return strings.Contains(s, "index.lock") && (strings.Contains(s, "File exists") || strings.Contains(s, "Unable to create"))
}

// nothingToCommit tells git's ways of saying a commit (or a revert) would
// be empty; git commit says it on stdout, so out is read too.
func nothingToCommit(err error, out []byte) bool {
	var ge *Error
	if !errors.As(err, &ge) {
		return false
	}
	output := ge.Stderr + string(out)
	for _, s := range []string{"nothing to commit", "nothing added to commit", "no changes added to commit"} {
		if strings.Contains(output, s) {
			return true
		}
	}
	return false
}

// wouldOverwriteLocal tells a revert refused because it would overwrite
// changes in the work tree or the index.
func wouldOverwriteLocal(err error) bool {
	s := stderrOf(err)
	return strings.Contains(s, "would be overwritten") || strings.Contains(s, "not up to date")
}

// noCommitsYet tells a log of a repository whose branch has no commit.
func noCommitsYet(err error) bool {
	return strings.Contains(stderrOf(err), "does not have any commits")
}
