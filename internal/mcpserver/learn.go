package mcpserver

import (
	"context"
	"strconv"
	"strings"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// vault_learn (DESIGN.md section 6): the agent hands over what it learned,
// the backend decides where it goes.

// canLearn is the Available check of vault_learn: a backend that writes and
// knows how to file a learning.
func canLearn(b api.Backend) bool {
	_, w := b.(api.Writer)
	_, l := b.(api.Learner)
	return w && l
}

type learnInput struct {
	Title            string   `json:"title" jsonschema:"A short title for what was learned, e.g. Retry only idempotent requests. It names the new note (and its file), or the dated section added to an existing note."`
	Insight          string   `json:"insight" jsonschema:"What was learned, in markdown: the fact, the rule or the fix, written so that someone without today's context can use it. The first sentence becomes its summary in the map of content."`
	Context          string   `json:"context" jsonschema:"Where it came from: the task, the error, the file or the discussion (may be empty)."`
	Domain           string   `json:"domain" jsonschema:"The area of knowledge, one folder name under 02-wiki, e.g. go, devops or postgres. Use an existing domain (vault_list with folder 02-wiki shows them); a new one needs confirm_new_domain."`
	Project          string   `json:"project,omitempty" jsonschema:"The project it came from, noted next to the capture in the daily note."`
	Tags             []string `json:"tags,omitempty" jsonschema:"Tags without #, e.g. [\"go\", \"gotcha\"]. gotcha, pattern, decision or state says what kind of capture it is; a tag shared with an existing note helps file the insight there."`
	Links            []string `json:"links,omitempty" jsonschema:"Names of related notes to link to, e.g. [\"retry-backoff\"]."`
	ConfirmNewDomain bool     `json:"confirm_new_domain,omitempty" jsonschema:"Set to true to create a domain that does not exist yet (with its map of content and a line in the knowledge index), after checking that none of the existing ones fits."`
}

var learnTool = toolSpec[learnInput, api.LearnResult]{
	Name:  "vault_learn",
	Title: "Record a learning",
	Description: "Record something worth keeping (a decision, a pattern, a gotcha, the state of a task) without asking " +
		"the user where it goes: the server searches the vault and, when one note under 02-wiki clearly covers the same " +
		"subject (same domain or a shared tag), appends the insight to it as a dated section; otherwise it creates " +
		"02-wiki/<domain>/<title-slug>.md from the wiki template and lists it in the domain's map of content. The capture " +
		"is logged in today's daily note. Nothing is overwritten, and everything goes into one git commit that vault_undo " +
		"takes back. The answer says where the insight went and why, the files written, any warnings, and the diff to " +
		"show the user. A domain that does not exist yet is refused with the list of existing ones unless " +
		"confirm_new_domain is true.",
	Effect:    effectWrite,
	Available: canLearn,
	Validate: func(m *messages, in *learnInput) error {
		for _, f := range []struct{ name, value string }{{"title", in.Title}, {"insight", in.Insight}, {"domain", in.Domain}} {
			if err := notBlank(m, f.name, f.value); err != nil {
				return err
			}
		}
		return nil
	},
	Call: onSide(func(ctx context.Context, l api.Learner, in learnInput) (*api.LearnResult, error) {
		return l.Learn(ctx, api.LearnRequest(in))
	}),
	Render: func(m *messages, _ learnInput, out *api.LearnResult) string {
		return renderLearn(m, out)
	},
}

// renderLearn renders the answer of vault_learn: where the insight went,
// why, the files it was propagated to, then what every write answers.
func renderLearn(m *messages, res *api.LearnResult) string {
	var b strings.Builder
	b.WriteString(writeHeadline(m, &res.WriteResult, ""))
	b.WriteByte('\n')
	b.WriteString(m.get(msgLearnReason, learnReason(m, res)))
	b.WriteByte('\n')
	if len(res.Propagated) > 0 {
		b.WriteString(m.get(msgLearnPropagated, escapedList(res.Propagated)))
		b.WriteByte('\n')
	}
	// The headline and the propagation line name every file a learning
	// writes; a list of files is worth it only for what they leave out.
	named := map[string]bool{res.Path: true}
	for _, p := range res.Propagated {
		named[p] = true
	}
	others := false
	for _, f := range res.Files {
		others = others || !named[f]
	}
	writeDetails(&b, m, &res.WriteResult, others)
	return b.String()
}

// learnReason words the decision in the server's language; a decision this
// server does not know (a newer backend's) is shown as the backend said it.
func learnReason(m *messages, res *api.LearnResult) string {
	c := escape(res.Candidate)
	ratio := strconv.FormatFloat(res.Ratio, 'f', 2, 64)
	switch res.Decision {
	case api.LearnNoMatch:
		return m.get(msgLearnNoMatch)
	case api.LearnOutsideWiki:
		return m.get(msgLearnOutsideWiki, c)
	case api.LearnViaGraph:
		return m.get(msgLearnViaGraph, c)
	case api.LearnStructural:
		return m.get(msgLearnStructural, c)
	case api.LearnRatioLow:
		return m.get(msgLearnRatioLow, c, ratio, strconv.FormatFloat(api.LearnDuplicateRatio, 'f', 1, 64))
	case api.LearnNoOverlap:
		return m.get(msgLearnNoOverlap, c, escape(res.Domain))
	case api.LearnDuplicate:
		if res.Ratio > 0 {
			return m.get(msgLearnDuplicate, c, ratio)
		}
		return m.get(msgLearnDuplicateAlone, c)
	}
	return escape(res.Reason)
}
