package bench

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strings"
)

// commonWords are the most frequent English words: they take the top ranks of
// the generated vocabulary, so word frequencies (and the stopword share of a
// note) look like real English prose.
var commonWords = strings.Fields(`the of and to in is it that for on with as was be this are by or from at an not
have but you which they can all one we there their has more also were when if will would been about its out
into only other some what than then them these so up may such how use most any each new like just used over
first two should make after because where while both between through before same many even our much well very
way get see need does here set still those must under could without since every own time work note case`)

// techWords are ordinary words of the notes a developer keeps; they follow the
// common words in frequency.
var techWords = strings.Fields(`retry backoff jitter timeout deadline context cancel goroutine channel mutex lock
leak pool connection database postgres mysql sqlite index query plan vacuum migration schema column table row
transaction isolation deadlock replica primary failover backup restore cache redis memcached eviction latency
throughput benchmark profile allocation memory heap stack garbage collector compiler build test coverage fuzz
deploy rollback canary release version tag branch merge rebase commit review pipeline runner artifact docker
image layer container kubernetes pod service ingress node cluster helm chart config secret vault token key
certificate renewal dns resolver ttl proxy gateway load balancer route header cookie session auth oauth jwt
password hash encryption signature logging metrics tracing span alert dashboard incident postmortem runbook
oncall queue worker consumer producer kafka topic partition offset event stream batch job scheduler cron rate
limit bucket throttle api endpoint request response status error exception panic recover handler middleware
router template render component state props hook effect reducer store browser bundle webpack module package
dependency vendor upgrade patch security vulnerability audit permission role policy feature flag experiment
rollout monitor probe health readiness liveness disk volume snapshot storage bucket object upload download
file path folder link markdown note vault search ranking score term document field weight tokenizer stemmer
parser syntax grammar lexer editor plugin theme shortcut command terminal shell script python golang rust
typescript javascript java kotlin swift ruby elixir haskell function method interface struct pointer slice map
array string integer float boolean null nil value reference copy clone serialize json yaml protobuf grpc
http websocket tcp udp socket port address network firewall packet bandwidth mobile android ios desktop
linux macos windows kernel process thread signal pipe filesystem inode permission user group`)

// vocabulary is a ranked word list: index 0 is the most frequent word.
type vocabulary []string

// newVocabulary returns n distinct words: the common English words, then
// developer words, then pronounceable generated words (shorter ones ranked
// first, as in natural language), all determined by r.
func newVocabulary(r *rand.Rand, n int) vocabulary {
	seen := make(map[string]bool, n)
	out := make(vocabulary, 0, n)
	add := func(w string) {
		if len(out) < n && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, w := range commonWords {
		add(w)
	}
	for _, w := range techWords {
		add(w)
	}
	var gen []string
	for tries := 0; len(out)+len(gen) < n && tries < 50*n; tries++ {
		w := pronounceable(r)
		if !seen[w] {
			seen[w] = true
			gen = append(gen, w)
		}
	}
	slices.SortStableFunc(gen, func(a, b string) int { return cmp.Compare(len(a), len(b)) })
	for _, w := range gen {
		if len(out) == n {
			break
		}
		out = append(out, w)
	}
	return out
}

var (
	onsets = strings.Fields("b bl br c ch cl cr d dr f fl fr g gl gr h j k kl l m n p pl pr qu r s sc sh sk sl sm sn sp st str t th tr v w wh z")
	vowels = strings.Fields("a e i o u a e i o ai ea ee io oa ou y")
	codas  = []string{"", "", "", "n", "r", "s", "t", "l", "m", "nd", "nt", "st", "ck", "x", "rk", "ng", "sh"}
)

// pronounceable makes a word of 1 to 4 syllables.
func pronounceable(r *rand.Rand) string {
	var b strings.Builder
	syl := 1 + r.IntN(3)
	if r.IntN(4) == 0 {
		syl++
	}
	for i := 0; i < syl; i++ {
		if i == 0 || r.IntN(3) > 0 {
			b.WriteString(onsets[r.IntN(len(onsets))])
		}
		b.WriteString(vowels[r.IntN(len(vowels))])
		if i == syl-1 || r.IntN(3) == 0 {
			b.WriteString(codas[r.IntN(len(codas))])
		}
	}
	return b.String()
}
