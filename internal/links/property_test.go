package links

import (
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// TestPlanMovePropertyLinks: links in frontmatter properties are rewritten
// on a move, inside their quotes, in the author's form, and the graph
// counts them.
func TestPlanMovePropertyLinks(t *testing.T) {
	tests := []struct {
		name     string
		notes    map[string]string
		from, to string
		want     map[string]string
	}{
		{
			name: "text property and list, both quotings",
			notes: map[string]string{
				"s.md":                  "---\nrelated: \"[[auth-guard]]\"\nlinks:\n  - '[[auth-guard|auth-guard]]'\n  - \"[[other]]\"\nup: [\"[[02-wiki/auth-guard#Setup]]\", x]\n---\nBody [[auth-guard]].\n",
				"02-wiki/auth-guard.md": "# Auth\n## Setup\n",
				"other.md":              "o\n",
			},
			from: "02-wiki/auth-guard.md", to: "02-wiki/nestjs/jwt-guard.md",
			want: map[string]string{
				"s.md": "---\nrelated: \"[[jwt-guard]]\"\nlinks:\n  - '[[jwt-guard|jwt-guard]]'\n  - \"[[other]]\"\nup: [\"[[02-wiki/nestjs/jwt-guard#Setup]]\", x]\n---\nBody [[jwt-guard]].\n",
			},
		},
		{
			name:  "a quote in the new name is doubled in single quotes",
			notes: map[string]string{"s.md": "---\nrelated: '[[x]]'\nsee: \"[[x]]\"\n---\n", "x.md": "x\n"},
			from:  "x.md", to: "it's.md",
			want: map[string]string{"s.md": "---\nrelated: '[[it''s]]'\nsee: \"[[it's]]\"\n---\n"},
		},
		{
			name:  "a single-quoted name with a quote is read and rewritten",
			notes: map[string]string{"s.md": "---\nrelated: '[[don''t|don''t]]'\n---\n", "don't.md": "x\n"},
			from:  "don't.md", to: "do.md",
			want: map[string]string{"s.md": "---\nrelated: '[[do|do]]'\n---\n"},
		},
		{
			name:  "the moved note's own property links",
			notes: map[string]string{"a/x.md": "---\nup: \"[[./y]]\"\nrel: '[[y]]'\n---\n", "a/y.md": "y\n"},
			from:  "a/x.md", to: "b/x.md",
			want: map[string]string{"b/x.md": "---\nup: \"[[../a/y]]\"\nrel: '[[y]]'\n---\n"},
		},
		{
			name:  "a date naming a daily note is not a link",
			notes: map[string]string{"s.md": "---\ncreated: 2026-08-20\nday: \"[[2026-08-20]]\"\n---\n", "04-daily/2026-08-20.md": "d\n"},
			from:  "04-daily/2026-08-20.md", to: "99-archive/2026-08-20-old.md",
			want: map[string]string{"s.md": "---\ncreated: 2026-08-20\nday: \"[[2026-08-20-old]]\"\n---\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newMemVault(tc.notes)
			w, _ := runMove(t, v, tc.from, tc.to)
			for p, src := range v.notes {
				p2 := p
				if p == tc.from {
					p2 = tc.to
				}
				want, ok := tc.want[p2]
				if !ok {
					want = string(src)
				}
				if got := string(w.notes[p2]); got != want {
					t.Errorf("%s after the move:\n got %q\nwant %q", p2, got, want)
				}
			}
		})
	}
}

// TestPlanMovePropertyRefused: a name that cannot be written inside a
// double-quoted property is refused, nothing planned.
func TestPlanMovePropertyRefused(t *testing.T) {
	v := newMemVault(map[string]string{"s.md": "---\nrelated: \"[[x]]\"\n---\n", "x.md": "x\n"})
	_, err := PlanMove(v.resolver(), v.graph(), "x.md", `say "hi".md`, v.read)
	if api.CodeOf(err) != api.CodeRefused || !strings.Contains(err.Error(), "double-quoted frontmatter property") {
		t.Fatalf("err = %v", err)
	}
}

// TestGraphCountsPropertyLinks: backlinks and graph edges include them.
func TestGraphCountsPropertyLinks(t *testing.T) {
	v := newMemVault(map[string]string{
		"s.md": "---\nrelated: \"[[x]]\"\n---\nno body link\n", "t.md": "---\nlinks: ['[[x]]', \"[[x#h]]\"]\n---\n", "x.md": "x\n",
		"u.md": "---\ncreated: 2026-01-01\n---\n",
	})
	g := v.graph()
	if got := g.BacklinkSources("x.md"); len(got) != 2 {
		t.Errorf("backlink sources of x.md: %v", got)
	}
	if st := g.Stats(); st.Links != 3 || st.Broken != 0 {
		t.Errorf("stats %+v", st)
	}
}
