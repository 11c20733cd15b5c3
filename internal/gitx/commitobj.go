package gitx

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// The fast commit writes its commit object itself too, where what git
// commit-tree would write is known for certain: the author and committer
// are user.name and user.email (or the fallback identity where one is not
// set, or the caller's author), the date is now in the local time zone,
// and the message is taken as it is (commit-tree does not clean it up).
// Anything else that takes part — GIT_AUTHOR_* or GIT_COMMITTER_* in the
// environment, author.* or committer.* or user.useConfigOnly or
// i18n.commitEncoding in the configuration, a name or email git would
// trim or strip characters from — sends the commit through commit-tree.

// commitIdents are the author and committer of a commit.
type commitIdents struct {
	authorName, authorEmail       string
	committerName, committerEmail string
}

// identEnv are the environment variables git reads for an identity or a date.
var identEnv = []string{"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE"}

// idents returns the identities commit-tree would use, and false when they
// are not known for certain here.
func (c repoConfig) idents(co CommitOptions) (commitIdents, bool) {
	if c.identityRules {
		return commitIdents{}, false
	}
	for _, k := range identEnv {
		if _, set := os.LookupEnv(k); set {
			return commitIdents{}, false
		}
	}
	name, email := FallbackName, FallbackEmail
	if c.hasName {
		name = c.name
	}
	if c.hasEmail {
		email = c.email
	}
	ids := commitIdents{authorName: name, authorEmail: email, committerName: name, committerEmail: email}
	if n, e, ok := co.author(); ok {
		ids.authorName, ids.authorEmail = n, e
	}
	for _, v := range []string{ids.authorName, ids.authorEmail, ids.committerName, ids.committerEmail} {
		if !plainIdent(v) {
			return commitIdents{}, false
		}
	}
	return ids, true
}

// plainIdent reports whether git keeps v as it is in an identity: not
// empty, no character git trims from either end (control characters,
// spaces, . , : ; < > " \ '), and none of the delimiters it strips inside
// (newline, < and >).
func plainIdent(v string) bool {
	if v == "" || strings.ContainsAny(v, "\n<>") {
		return false
	}
	crud := func(b byte) bool { return b <= ' ' || strings.IndexByte(".,:;<>\"\\'", b) >= 0 }
	return !crud(v[0]) && !crud(v[len(v)-1])
}

// commitBody is the body of a commit object of tree with one parent.
func commitBody(tree, parent string, ids commitIdents, when time.Time, message string) []byte {
	stamp := strconv.FormatInt(when.Unix(), 10) + " " + zoneOffset(when)
	var b strings.Builder
	b.Grow(len(message) + 256)
	b.WriteString("tree " + tree + "\n")
	b.WriteString("parent " + parent + "\n")
	b.WriteString("author " + ids.authorName + " <" + ids.authorEmail + "> " + stamp + "\n")
	b.WriteString("committer " + ids.committerName + " <" + ids.committerEmail + "> " + stamp + "\n")
	b.WriteString("\n")
	b.WriteString(message)
	return []byte(b.String())
}

// zoneOffset is when's offset from UTC as git writes it: +hhmm or -hhmm.
func zoneOffset(when time.Time) string {
	_, off := when.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	off /= 60
	return string(sign) + twoDigits(off/60) + twoDigits(off%60)
}

func twoDigits(n int) string {
	return string([]byte{byte('0' + n/10%10), byte('0' + n%10)})
}
