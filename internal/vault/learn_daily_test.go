package vault

import (
	"slices"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestLearnDailyNote: an existing daily note gets the line under its
// captures section (added when missing), CRLF kept; a daily template is used
// for a new one.
func TestLearnDailyNote(t *testing.T) {
	files := with(learnVault, map[string]string{"04-daily/2026-11-29.md": "# Friday\r\n\r\nMet the team.\r\n"})
	dir, s := openLearn(t, files, learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Zephyr", Insight: "Zephyrs quibble.", Domain: "go", Tags: []string{"state", "decision"}})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "# Friday\r\n\r\nMet the team.\r\n\r\n## Captures\r\n\r\n- 10:30 [[zephyr]] (decision)\r\n" {
		t.Errorf("daily:\n%q", got)
	}
	files = with(learnVault, map[string]string{"_templates/daily.md": "---\ntype: daily\ncreated: \"{{date}}\"\n---\n\n# {{date:dddd D MMMM}}\n\n## Captures\n\n## Notes\n"})
	dir, s = openLearn(t, files, learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Zephyr", Insight: "Zephyrs quibble.", Domain: "go"})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "---\ntype: daily\ncreated: \"2026-11-29\"\n---\n\n# Sunday 29 November\n\n## Captures\n\n- 10:30 [[zephyr]] (learning)\n\n## Notes\n" {
		t.Errorf("daily from template:\n%s", got)
	}
	// A template without a type gets one; its other keys stay as written.
	files = with(learnVault, map[string]string{"_templates/daily.md": "---\n# the day\nmood:\nversion: 1.10\n---\n## Captures\n"})
	dir, s = openLearn(t, files, learnOpts{})
	learn(t, s, api.LearnRequest{Title: "Zephyr", Insight: "Zephyrs quibble.", Domain: "go"})
	if got := read(t, dir, "04-daily/2026-11-29.md"); got != "---\n# the day\nmood:\nversion: 1.10\ntype: daily\n---\n## Captures\n\n- 10:30 [[zephyr]] (learning)\n" {
		t.Errorf("daily from an untyped template:\n%s", got)
	}
}

// TestLearnPropagationIdempotent: a MOC that already lists the note (a
// planned, so far broken link) is not written again, and nothing is
// duplicated.
func TestLearnPropagationIdempotent(t *testing.T) {
	files := with(learnVault, map[string]string{
		"02-wiki/go/go-moc.md":   "---\ntype: moc\n---\n# Go\n\n## Notes\n\n- [[zephyr-notes]] — planned\n",
		"04-daily/2026-11-29.md": "## Captures\n\n- 10:30 [[zephyr-notes]] (learning)\n",
	})
	dir, s := openLearn(t, files, learnOpts{})
	res := learn(t, s, api.LearnRequest{Title: "Zephyr notes", Insight: "Zephyrs quibble.", Domain: "go"})
	if res.Path != "02-wiki/go/zephyr-notes.md" || len(res.Propagated) != 0 || !slices.Equal(res.Files, []string{res.Path}) {
		t.Fatalf("%+v", res)
	}
	if read(t, dir, "02-wiki/go/go-moc.md") != files["02-wiki/go/go-moc.md"] || read(t, dir, "04-daily/2026-11-29.md") != files["04-daily/2026-11-29.md"] {
		t.Error("a file was rewritten with a line it already had")
	}
}
