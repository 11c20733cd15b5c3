package api

import "context"

// Learner records what an agent learned without asking where it goes
// (vault_learn, DESIGN.md section 6). It is a write: a read-only vault does
// not offer it.
type Learner interface {
	Learn(ctx context.Context, req LearnRequest) (*LearnResult, error)
}

// LearnRequest is the input of vault_learn.
type LearnRequest struct {
	// Title names the learning: the note's title (and, as a slug, its file
	// name) or the heading of the section appended to an existing note.
	Title string `json:"title"`
	// Insight is what was learned (markdown).
	Insight string `json:"insight"`
	// Context says where it came from (the task, the error, the file);
	// it may be empty.
	Context string `json:"context"`
	// Domain is the folder under 02-wiki/ a new note goes to. A domain that
	// does not exist yet needs ConfirmNewDomain.
	Domain           string   `json:"domain"`
	Project          string   `json:"project,omitempty"`
	Tags             []string `json:"tags,omitempty"`
	Links            []string `json:"links,omitempty"`
	ConfirmNewDomain bool     `json:"confirm_new_domain,omitempty"`
}

// Modes of a learning: the insight went into a new note, or was appended to
// an existing one as a dated section.
const (
	LearnCreated  = ActionCreated
	LearnAppended = ActionAppended
)

// Decisions of vault_learn: why the insight was appended to an existing note
// (LearnDuplicate) or not. A renderer may word them in its own language; the
// result's Reason says the same in English.
const (
	LearnNoMatch     = "no_match"     // the search found nothing
	LearnOutsideWiki = "outside_wiki" // the top result is not under 02-wiki/
	LearnViaGraph    = "via_graph"    // the top result was reached through a link, not matched
	LearnStructural  = "structural"   // the top result is a map of content
	LearnRatioLow    = "ratio_low"    // the top result does not stand out enough from the runner-up
	LearnNoOverlap   = "no_overlap"   // the top result shares no tag and lies outside the domain
	LearnDuplicate   = "duplicate"    // the top result is the same subject: appended there
)

// LearnDuplicateRatio is how many times the best chunk of any other note the
// top result must score to count as the note the insight belongs to.
const LearnDuplicateRatio = 1.8

// LearnResult is the answer of vault_learn: everything a write answers
// (Action is "created" or "appended", Path the note written), plus why.
type LearnResult struct {
	WriteResult
	// Mode is LearnCreated or LearnAppended (the same as Action).
	Mode string `json:"mode"`
	// Domain is the domain asked for, spelled as the existing folder is when
	// it differs only in letter case. A new note goes there; the note a
	// learning is appended to may lie in another domain (a shared tag).
	Domain string `json:"domain"`
	// Decision is one of the Learn* decision codes; Reason says it in
	// English, with the note and ratio involved.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	// Candidate is the top search result the decision was about, if any.
	Candidate string `json:"candidate,omitempty"`
	// Ratio is the candidate's score over the best chunk of any other note;
	// 0 when there is no candidate or no other note matched at all.
	Ratio float64 `json:"ratio,omitempty"`
	// Propagated lists the other files written: the domain's map of
	// content, the knowledge index, the daily note.
	Propagated []string `json:"propagated"`
}
