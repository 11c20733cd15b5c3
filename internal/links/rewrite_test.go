package links

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// runMove plans and applies a move on v, checks the invariant with an
// independent resolver, and returns the vault after it.
func runMove(t *testing.T, v *memVault, from, to string) (*memVault, []FileEdits) {
	t.Helper()
	plan, err := PlanMove(v.resolver(), v.graph(), from, to, v.read)
	if err != nil {
		t.Fatalf("PlanMove(%s -> %s): %v", from, to, err)
	}
	w, err := v.applyMove(from, to, plan)
	if err != nil {
		t.Fatalf("applying the plan: %v", err)
	}
	if c := checkMove(v, w, from, to); len(c.failures) > 0 {
		t.Fatalf("move %s -> %s changed link targets:\n%s", from, to, strings.Join(c.failures, "\n"))
	}
	return w, plan
}

func TestPlanMoveForms(t *testing.T) {
	tests := []struct {
		name        string
		notes       map[string]string
		attachments []string
		from, to    string
		want        map[string]string // note contents after the move (by new path); other notes must be unchanged
	}{
		{
			name:  "bare name renamed",
			notes: map[string]string{"s.md": "see [[x]] and [[x]].\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "a/y.md",
			want: map[string]string{"s.md": "see [[y]] and [[y]].\n"},
		},
		{
			name:  "bare name moved to another folder stays bare",
			notes: map[string]string{"s.md": "[[x]]\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/c/x.md",
		},
		{
			name:  "bare name gets the shortest unambiguous suffix",
			notes: map[string]string{"s.md": "[[x]]\n", "a/x.md": "x\n", "c/y.md": "y\n"},
			from:  "a/x.md", to: "b/y.md",
			want: map[string]string{"s.md": "[[b/y]]\n"},
		},
		{
			name:  "bare name gets the full path when every suffix is ambiguous",
			notes: map[string]string{"s.md": "[[x]]\n", "x.md": "x\n", "b/c/y.md": "y\n", "c/y.md": "y\n"},
			from:  "x.md", to: "a/c/y.md",
			want: map[string]string{"s.md": "[[a/c/y]]\n"},
		},
		{
			name:  "path form stays a path",
			notes: map[string]string{"s.md": "[[b/x]] [[B/X]] [t](b/x.md)\n", "a/b/x.md": "x\n"},
			from:  "a/b/x.md", to: "c/d/z.md",
			want: map[string]string{"s.md": "[[d/z]] [[d/z]] [t](d/z.md)\n"},
		},
		{
			name:  "whole vault path stays the whole path",
			notes: map[string]string{"s.md": "[[a/x]] [[A/X]] [t](a/x.md) [[a/x|a/x]]\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/c/z.md",
			want: map[string]string{"s.md": "[[b/c/z]] [[b/c/z]] [t](b/c/z.md) [[b/c/z|a/x]]\n"},
		},
		{
			name:  "whole vault path is rewritten even when its suffix still matches",
			notes: map[string]string{"s.md": "[[a/x]] [[x]]\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "99-archive/a/x.md",
			want: map[string]string{"s.md": "[[99-archive/a/x]] [[x]]\n"},
		},
		{
			name:  "path form into the root becomes the full path",
			notes: map[string]string{"s.md": "[[a/x]]\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "x2.md",
			want: map[string]string{"s.md": "[[x2]]\n"},
		},
		{
			name:  "root-absolute wiki and markdown",
			notes: map[string]string{"s.md": "[[/a/x]] [t](/a/x.md)\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/x.md",
			want: map[string]string{"s.md": "[[/b/x]] [t](/b/x.md)\n"},
		},
		{
			name:  "relative markdown links stay relative",
			notes: map[string]string{"n/s.md": "[t](../a/x.md) [u](./../a/x.md)\n", "a/s.md": "[t](x.md) [u](./x.md)\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/sub/x.md",
			want: map[string]string{
				"n/s.md": "[t](../b/sub/x.md) [u](../b/sub/x.md)\n",
				"a/s.md": "[t](../b/sub/x.md) [u](../b/sub/x.md)\n",
			},
		},
		{
			name:  "relative markdown link into the source's folder keeps ./",
			notes: map[string]string{"b/s.md": "[t](../a/x.md) [u](./../a/x.md)\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/x.md",
			want: map[string]string{"b/s.md": "[t](x.md) [u](./x.md)\n"},
		},
		{
			name:  "markdown link found by name stays a name",
			notes: map[string]string{"s.md": "[t](x.md)\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/y.md",
			want: map[string]string{"s.md": "[t](y.md)\n"},
		},
		{
			name:  "percent-encoded spaces",
			notes: map[string]string{"s.md": "[t](My%20Note.md) [u](sub/My%20Note.md#Part%20two)\n", "My Note.md": "x\n", "sub/My Note.md": "y\n"},
			from:  "sub/My Note.md", to: "new dir/Your Note.md",
			want: map[string]string{"s.md": "[t](My%20Note.md) [u](new%20dir/Your%20Note.md#Part%20two)\n"},
		},
		{
			name:  "angle brackets keep raw spaces",
			notes: map[string]string{"s.md": "[t](<My Note.md>) [u](<My%20Note.md#H>)\n", "My Note.md": "x\n"},
			from:  "My Note.md", to: "new dir/Your Note.md",
			want: map[string]string{"s.md": "[t](<new dir/Your Note.md>) [u](<new%20dir/Your%20Note.md#H>)\n"},
		},
		{
			name:  "spaces without evidence are encoded outside angle brackets",
			notes: map[string]string{"s.md": "[t](x.md) [c](x.md \"a title\")\n", "x.md": "x\n"},
			from:  "x.md", to: "a b/c (d).md",
			want: map[string]string{"s.md": "[t](a%20b/c%20(d).md) [c](a%20b/c%20(d).md \"a title\")\n"},
		},
		{
			name:  "percent-encoded non-ASCII stays encoded, raw stays raw",
			notes: map[string]string{"s.md": "[t](%F0%9F%9A%80%20Launch.md) [r](🚀%20Launch.md) [[🚀 Launch]]\n", "🚀 Launch.md": "x\n"},
			from:  "🚀 Launch.md", to: "Launch 🚀.md",
			want: map[string]string{"s.md": "[t](Launch%20%F0%9F%9A%80.md) [r](Launch%20🚀.md) [[Launch 🚀]]\n"},
		},
		{
			name:  "characters that need encoding in a destination",
			notes: map[string]string{"s.md": "[t](x.md) [[x]]\n", "x.md": "x\n"},
			from:  "x.md", to: "100% (a.md",
			want: map[string]string{"s.md": "[t](100%25%20%28a.md) [[100% (a]]\n"},
		},
		{
			name:        "embeds of notes and attachments",
			notes:       map[string]string{"s.md": "![[x]] ![[x#Part]] ![[img.png]] ![i](img.png)\n", "x.md": "x\n"},
			attachments: []string{"img.png"},
			from:        "x.md", to: "y.md",
			want: map[string]string{"s.md": "![[y]] ![[y#Part]] ![[img.png]] ![i](img.png)\n"},
		},
		{
			name:        "moving an attachment",
			notes:       map[string]string{"s.md": "![[img.png]] ![i](img.png) [[img.png|img.png]]\n"},
			attachments: []string{"img.png"},
			from:        "img.png", to: "assets/pic.png",
			want: map[string]string{"s.md": "![[pic.png]] ![i](assets/pic.png) [[pic.png|pic.png]]\n"},
		},
		{
			name:  "headings and blocks",
			notes: map[string]string{"s.md": "[[x#Setup]] [[x#Setup#Retry]] [[x#^abc]] [t](x.md#setup) [b](x.md#^abc)\n", "x.md": "# Setup\n"},
			from:  "x.md", to: "y.md",
			want: map[string]string{"s.md": "[[y#Setup]] [[y#Setup#Retry]] [[y#^abc]] [t](y.md#setup) [b](y.md#^abc)\n"},
		},
		{
			// Spelled as the name, letter case included: "X" for x.md is
			// the author's own text (a word of a sentence, often).
			name:  "aliases spelled as the old name follow it, others are kept",
			notes: map[string]string{"s.md": "[[x|x]] [[x|X]] [[x| x ]] [[x|my x]] [[x#H|x]] [[x.md|x.md]] [x](x.md) [X.md](x.md) [see](x.md)\n", "x.md": "x\n"},
			from:  "x.md", to: "New Name.md",
			want: map[string]string{"s.md": "[[New Name|New Name]] [[New Name|X]] [[New Name| New Name ]] [[New Name|my x]] [[New Name#H|New Name]] [[New Name.md|New Name.md]] [New Name](New%20Name.md) [X.md](New%20Name.md) [see](New%20Name.md)\n"},
		},
		{
			name:  "alias kept when only the folder changes",
			notes: map[string]string{"s.md": "[[a/x|x]]\n", "a/x.md": "x\n"},
			from:  "a/x.md", to: "b/x.md",
			want: map[string]string{"s.md": "[[b/x|x]]\n"},
		},
		{
			name:  "escaped pipe in a table",
			notes: map[string]string{"s.md": "| a | b |\n|---|---|\n| [[x\\|x]] | [[x#H\\|other]] |\n", "x.md": "x\n"},
			from:  "x.md", to: "y.md",
			want: map[string]string{"s.md": "| a | b |\n|---|---|\n| [[y\\|y]] | [[y#H\\|other]] |\n"},
		},
		{
			name:  ".md kept when written, omitted when not",
			notes: map[string]string{"s.md": "[[x.md]] [[x]] [[x.MD]] [t](x) [u](x.md)\n", "x.md": "x\n"},
			from:  "x.md", to: "d/y.md",
			want: map[string]string{"s.md": "[[y.md]] [[y]] [[y.md]] [t](d/y) [u](d/y.md)\n"},
		},
		{
			name: "the moved note's own relative links",
			notes: map[string]string{
				"a/m.md":   "[o](../b/o.md) [[./sib]] [r](sib.md) [[../b/o]] [[#Top]] [[m#Top]] [self](m.md#Top)\n# Top\n",
				"a/sib.md": "s\n", "b/o.md": "o\n",
			},
			from: "a/m.md", to: "c/d/m.md",
			want: map[string]string{"c/d/m.md": "[o](../../b/o.md) [[../../a/sib]] [r](../../a/sib.md) [[../../b/o]] [[#Top]] [[m#Top]] [self](m.md#Top)\n# Top\n"},
		},
		{
			name: "the moved note's bare link that relied on its folder",
			notes: map[string]string{
				"a/m.md": "[[topic]] [[other]]\n", "a/topic.md": "t\n", "b/topic.md": "t\n", "other.md": "o\n",
			},
			from: "a/m.md", to: "b/m.md",
			want: map[string]string{"b/m.md": "[[a/topic]] [[other]]\n"},
		},
		{
			name:  "the moved note renamed links to itself by name",
			notes: map[string]string{"m.md": "[[m]] [[m#H|m]] [[#H]]\n# H\n"},
			from:  "m.md", to: "n.md",
			want: map[string]string{"n.md": "[[n]] [[n#H|n]] [[#H]]\n# H\n"},
		},
		{
			name:  "a bare link that the move would capture",
			notes: map[string]string{"s.md": "[[x]] [t](x.md)\n", "a/x.md": "x\n", "q.md": "q\n"},
			from:  "q.md", to: "x.md",
			want: map[string]string{"s.md": "[[a/x]] [t](a/x.md)\n"},
		},
		{
			name:  "a bare link the move would make ambiguous",
			notes: map[string]string{"c/s.md": "[[x]] [[x#H|alias]]\n", "a/x.md": "x\n", "b/q.md": "q\n"},
			from:  "b/q.md", to: "b/x.md",
			want: map[string]string{"c/s.md": "[[a/x]] [[a/x#H|alias]]\n"},
		},
		{
			name:  "an already ambiguous link is left to the resolver",
			notes: map[string]string{"c/s.md": "[[x]]\n", "a/x.md": "x\n", "d/x.md": "x\n", "b/q.md": "q\n"},
			from:  "b/q.md", to: "b/x.md",
		},
		{
			name:  "renaming only the case",
			notes: map[string]string{"s.md": "[[Note]] [[note]] [[NOTE]] [[Note|Note]] [[a/Note]] [t](a/Note.md) [[Note.md]]\n", "a/Note.md": "x\n"},
			from:  "a/Note.md", to: "a/note.md",
			want: map[string]string{"s.md": "[[note]] [[note]] [[NOTE]] [[note|note]] [[a/note]] [t](a/note.md) [[note.md]]\n"},
		},
		{
			name:  "renaming only the folder's case",
			notes: map[string]string{"s.md": "[[Projects/x]] [[x]] [t](Projects/x.md)\n", "Projects/x.md": "x\n"},
			from:  "Projects/x.md", to: "projects/x.md",
			want: map[string]string{"s.md": "[[projects/x]] [[x]] [t](projects/x.md)\n"},
		},
		{
			name: "links in code, broken links and other notes are not touched",
			notes: map[string]string{
				"s.md": "`[[x]]` [[missing]] [[x]]\n```\n[[x]]\n```\n", "x.md": "x\n", "o.md": "[[s]]\n",
			},
			from: "x.md", to: "y.md",
			want: map[string]string{"s.md": "`[[x]]` [[missing]] [[y]]\n```\n[[x]]\n```\n"},
		},
		{
			name:  "a link wrapping an image",
			notes: map[string]string{"s.md": "[![x](x.md)](x.md)\n", "x.md": "x\n"},
			from:  "x.md", to: "d/y.md",
			want: map[string]string{"s.md": "[![y](d/y.md)](d/y.md)\n"},
		},
		{
			name:  "dotted names",
			notes: map[string]string{"s.md": "[[v1.2]] [[v1.2.md]]\n", "v1.2.md": "x\n"},
			from:  "v1.2.md", to: "v1.3.md",
			want: map[string]string{"s.md": "[[v1.3]] [[v1.3.md]]\n"},
		},
		{
			name:  "a .markdown note renamed to .md keeps the written extension",
			notes: map[string]string{"s.md": "[a](d/T.markdown) [[T.markdown]] [[d/T.markdown]] [b](d/T.markdown#h) [c](d/x)\n", "d/T.markdown": "t\n", "d/x.md": "x\n"},
			from:  "d/T.markdown", to: "d/U.md",
			want: map[string]string{"s.md": "[a](d/U.md) [[U.md]] [[d/U.md]] [b](d/U.md#h) [c](d/x)\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := newMemVault(tc.notes, tc.attachments...)
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

func TestPlanMoveArchiveAndBack(t *testing.T) {
	notes := map[string]string{
		"02-wiki/go/retry.md":   "# Retry\n[[backoff]] [b](backoff.md) [[./backoff]]\n^blk\n",
		"02-wiki/go/backoff.md": "[[retry]] [[go/retry#Retry]] [r](retry.md#retry) [[retry#^blk|see retry]]\n",
		"01-raw/inbox.md":       "[[02-wiki/go/retry]] [r](../02-wiki/go/retry.md) [abs](/02-wiki/go/retry.md) ![[retry#Retry]]\n",
		"00-index/moc.md":       "- [[retry|retry]] — summary\n",
	}
	v := newMemVault(notes)
	archived, plan := runMove(t, v, "02-wiki/go/retry.md", "99-archive/02-wiki/go/retry.md")
	if len(plan) == 0 {
		t.Fatal("archiving produced no edits")
	}
	wantArchived := map[string]string{
		"99-archive/02-wiki/go/retry.md": "# Retry\n[[backoff]] [b](../../../02-wiki/go/backoff.md) [[../../../02-wiki/go/backoff]]\n^blk\n",
		"02-wiki/go/backoff.md":          "[[retry]] [[go/retry#Retry]] [r](../../99-archive/02-wiki/go/retry.md#retry) [[retry#^blk|see retry]]\n",
		"01-raw/inbox.md":                "[[99-archive/02-wiki/go/retry]] [r](../99-archive/02-wiki/go/retry.md) [abs](/99-archive/02-wiki/go/retry.md) ![[retry#Retry]]\n",
		"00-index/moc.md":                "- [[retry|retry]] — summary\n",
	}
	for p, want := range wantArchived {
		if got := string(archived.notes[p]); got != want {
			t.Errorf("%s after archiving:\n got %q\nwant %q", p, got, want)
		}
	}
	back, _ := runMove(t, archived, "99-archive/02-wiki/go/retry.md", "02-wiki/go/retry.md")
	for p, want := range notes {
		got := string(back.notes[p])
		if got != want {
			t.Errorf("%s after archiving and unarchiving:\n got %q\nwant %q", p, got, want)
		}
	}
}

func TestPlanMoveEditsAndOrder(t *testing.T) {
	v := newMemVault(map[string]string{
		"b.md": "one [[x]]\ntwo [[x|x]] [t](x.md)\n",
		"a.md": "[[x#h]]\n",
		"x.md": "x\n",
	})
	plan, err := PlanMove(v.resolver(), v.graph(), "x.md", "y.md", v.read)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(plan)
	want := "[{a.md [{2 3 x y 1}]} {b.md [{6 7 x y 1} {16 19 x|x y|y 2} {26 30 x.md y.md 2}]}]"
	if got != want {
		t.Errorf("plan:\n got %s\nwant %s", got, want)
	}
}

func TestPlanMoveNilGraphMatchesGraph(t *testing.T) {
	v := newMemVault(map[string]string{
		"s.md": "[[x]] [t](x.md)\n", "a/x.md": "x\n", "b/q.md": "[[x]]\n", "c/x.md": "[[q]]\n",
	})
	withGraph, err := PlanMove(v.resolver(), v.graph(), "b/q.md", "x.md", v.read)
	if err != nil {
		t.Fatal(err)
	}
	without, err := PlanMove(v.resolver(), nil, "b/q.md", "x.md", v.read)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(withGraph) != fmt.Sprint(without) {
		t.Errorf("plans differ:\nwith graph    %v\nwithout graph %v", withGraph, without)
	}
	// b/q.md's own [[x]] and s.md's links would be captured by the new
	// root x.md; c/x.md's [[q]] follows the move.
	if got, want := fmt.Sprint(withGraph), "[{b/q.md [{2 3 x a/x 1}]} {c/x.md [{2 3 q x 1}]} {s.md [{2 3 x a/x 1} {10 14 x.md a/x.md 1}]}]"; got != want {
		t.Errorf("plan:\n got %s\nwant %s", got, want)
	}
}

func TestPlanMoveErrors(t *testing.T) {
	v := newMemVault(map[string]string{
		"s.md": "[[x]]\n", "x.md": "x\n", "Y.md": "y\n", "m.md": "[m](x.md)\n",
	})
	readErr := errors.New("disk on fire")
	tests := []struct {
		name     string
		from, to string
		read     func(string) ([]byte, []markdown.Link, error)
		code     string
		is       error
	}{
		{name: "unknown source", from: "nope.md", to: "z.md", code: api.CodeNotFound},
		{name: "existing target", from: "x.md", to: "s.md", code: api.CodeAlreadyExists},
		{name: "target differing only in case", from: "x.md", to: "y.md", code: api.CodeAlreadyExists},
		{name: "hidden target", from: "x.md", to: ".trash/x.md", code: api.CodeInvalidArgument},
		{name: "dot-dot target", from: "x.md", to: "a/../x2.md", code: api.CodeInvalidArgument},
		{name: "empty segment", from: "x.md", to: "a//x2.md", code: api.CodeInvalidArgument},
		{name: "name a wiki-link cannot hold", from: "x.md", to: "x#1.md", code: api.CodeRefused},
		{name: "a caret, which Obsidian reads as a block", from: "x.md", to: "x^1.md", code: api.CodeRefused},
		{name: "two percent signs, which open a comment", from: "x.md", to: "x%%1.md", code: api.CodeRefused},
		{name: "read error", from: "x.md", to: "z.md", read: func(string) ([]byte, []markdown.Link, error) { return nil, nil, readErr }, is: readErr},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			read := tc.read
			if read == nil {
				read = v.read
			}
			plan, err := PlanMove(v.resolver(), v.graph(), tc.from, tc.to, read)
			if err == nil {
				t.Fatalf("want an error, got plan %v", plan)
			}
			if tc.code != "" && api.CodeOf(err) != tc.code {
				t.Errorf("code %s (%v), want %s", api.CodeOf(err), err, tc.code)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
		})
	}

	// A markdown link can hold '#' (encoded); only wiki-links refuse it.
	w := newMemVault(map[string]string{"m.md": "[m](x.md)\n", "x.md": "x\n"})
	moved, _ := runMove(t, w, "x.md", "x#1.md")
	if got, want := string(moved.notes["m.md"]), "[m](x%231.md)\n"; got != want {
		t.Errorf("m.md = %q, want %q", got, want)
	}

	// Moving a note onto itself plans nothing.
	plan, err := PlanMove(v.resolver(), v.graph(), "x.md", "x.md", v.read)
	if err != nil || plan != nil {
		t.Errorf("PlanMove(x.md -> x.md) = %v, %v; want nil, nil", plan, err)
	}
}

func TestPlanMoveStaleLinks(t *testing.T) {
	v := newMemVault(map[string]string{"s.md": "[[x]]\n", "x.md": "x\n"})
	stale := func(p string) ([]byte, []markdown.Link, error) {
		src, links, err := v.read(p)
		return src[:2], links, err // the note shrank after it was parsed
	}
	_, err := PlanMove(v.resolver(), v.graph(), "x.md", "y.md", stale)
	if api.CodeOf(err) != api.CodeInternal {
		t.Errorf("links that do not fit the bytes: err %v, want INTERNAL", err)
	}
}

func TestApplyAndCheckEdits(t *testing.T) {
	src := []byte("ab[[x]]cd[[x]]")
	edits := []Edit{{Start: 4, End: 5, Old: "x", New: "long"}, {Start: 11, End: 12, Old: "x", New: ""}}
	if err := CheckEdits(src, edits); err != nil {
		t.Fatal(err)
	}
	if got, want := string(Apply(src, edits)), "ab[[long]]cd[[]]"; got != want {
		t.Errorf("Apply = %q, want %q", got, want)
	}
	if got := string(Apply(src, nil)); got != string(src) {
		t.Errorf("Apply without edits = %q", got)
	}
	if string(src) != "ab[[x]]cd[[x]]" {
		t.Error("Apply modified its input")
	}
	bad := []struct {
		name  string
		edits []Edit
	}{
		{"overlap", []Edit{{Start: 2, End: 6, Old: "[[x]"}, {Start: 4, End: 5, Old: "x"}}},
		{"outside", []Edit{{Start: 12, End: 20, Old: "x"}}},
		{"changed", []Edit{{Start: 4, End: 5, Old: "y"}}},
		{"reversed", []Edit{{Start: 5, End: 4}}},
	}
	for _, tc := range bad {
		if err := CheckEdits(src, tc.edits); err == nil {
			t.Errorf("%s: CheckEdits accepted %v", tc.name, tc.edits)
		}
	}
}

func TestEncodeDestRoundTrip(t *testing.T) {
	paths := []string{"a b/c.md", "100%.md", "x#y.md", "(a).md", "a)b.md", "ü é.md", "🚀.md", "back\\slash.md", "<a>.md", "tab\there.md"}
	styles := []mdStyle{{}, {angle: true}, {angle: true, pctSpace: true}, {pctNonASCII: true}}
	for _, p := range paths {
		for _, st := range styles {
			dest := encodeDest(p, st)
			if st.angle {
				dest = "<" + dest + ">"
			}
			src := "[t](" + dest + ")"
			links := markdown.Parse("s.md", []byte(src)).Links
			if len(links) != 1 || links[0].Target != p || links[0].Anchor != "" {
				t.Errorf("encodeDest(%q, %+v) = %q parses as %+v", p, st, dest, links)
			}
		}
	}
}

func TestRelPath(t *testing.T) {
	tests := []struct{ dir, p, want string }{
		{"", "a/x.md", "a/x.md"},
		{"a", "a/x.md", "x.md"},
		{"a/b", "a/x.md", "../x.md"},
		{"a", "b/x.md", "../b/x.md"},
		{"a/b/c", "x.md", "../../../x.md"},
		{"a", "a/b/x.md", "b/x.md"},
		{"A", "a/x.md", "../a/x.md"},
	}
	for _, tc := range tests {
		if got := relPath(tc.dir, tc.p); got != tc.want {
			t.Errorf("relPath(%q, %q) = %q, want %q", tc.dir, tc.p, got, tc.want)
		}
	}
}

// genVault builds a random vault whose notes link to each other (and to
// files that do not exist) in every form a move must keep working.
func genVault(rng *rand.Rand) *memVault {
	folders := []string{"", "a", "a/b", "b", "c/d", "99-archive", "My Folder", "Ünï"}
	names := []string{"x", "y", "Note", "note two", "café", "🚀 rocket", "v1.2", "topic", "(paren)"}
	taken := map[string]bool{}
	var paths []string
	for len(paths) < 14+rng.IntN(10) {
		p := pathJoin(folders[rng.IntN(len(folders))], names[rng.IntN(len(names))]+".md")
		if !taken[fold(p)] {
			taken[fold(p)] = true
			paths = append(paths, p)
		}
	}
	attachments := []string{"img.png", "a/img.png", "b/doc.pdf"}
	targets := append(slices.Clone(paths), attachments...)
	targets = append(targets, "gone/missing.md")
	notes := map[string]string{}
	for _, p := range paths {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s\n", baseName(p))
		for range rng.IntN(9) {
			b.WriteString(genLink(rng, p, targets[rng.IntN(len(targets))]))
			b.WriteString(" text\n")
		}
		notes[p] = b.String()
	}
	return newMemVault(notes, attachments...)
}

func pathJoin(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// genLink writes a link from the note at src to the file at dst in a
// random form.
func genLink(rng *rand.Rand, src, dst string) string {
	name := dst
	if hasMdExt(dst) && rng.IntN(3) > 0 {
		name = dst[:len(dst)-3]
	}
	segs := strings.Split(name, "/")
	anchor := []string{"", "", "#H", "#^blk", "#Part two"}[rng.IntN(5)]
	switch rng.IntN(9) {
	case 0, 1: // bare wiki
		alias := ""
		if rng.IntN(3) == 0 {
			alias = "|" + []string{segs[len(segs)-1], "other words"}[rng.IntN(2)]
		}
		return "[[" + segs[len(segs)-1] + anchor + alias + "]]"
	case 2: // path suffix or full path
		k := 1 + rng.IntN(len(segs))
		return "[[" + strings.Join(segs[len(segs)-k:], "/") + anchor + "]]"
	case 3: // embed
		return "![[" + segs[len(segs)-1] + anchor + "]]"
	case 4: // relative wiki
		return "[[./" + relPath(parentDir(src), name) + "]]"
	case 5: // relative markdown, %20
		return "[t](" + encodeDest(relPath(parentDir(src), name), mdStyle{}) + strings.ReplaceAll(anchor, " ", "%20") + ")"
	case 6: // relative markdown, angle brackets
		return "[t](<" + encodeDest(relPath(parentDir(src), name), mdStyle{angle: true}) + ">)"
	case 7: // root-absolute markdown
		return "[t](/" + encodeDest(name, mdStyle{pctNonASCII: true}) + ")"
	}
	return "| [[" + segs[len(segs)-1] + "\\|cell]] | `[[" + name + "]]` [[#H]]"
}

// TestPlanMoveProperty moves random notes of random vaults, one after the
// other, and checks after each move with a fresh resolver that no link
// changed its target.
func TestPlanMoveProperty(t *testing.T) {
	folders := []string{"", "a", "b", "new", "99-archive/a", "My Folder", "c/d/e"}
	names := []string{"x", "y", "Note", "NOTE", "note two", "café", "🚀 rocket", "topic", "fresh", "v1.2"}
	moves, edits := 0, 0
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 7))
		v := genVault(rng)
		for range 8 {
			var notes []string
			for p := range v.notes {
				notes = append(notes, p)
			}
			slices.Sort(notes)
			from := notes[rng.IntN(len(notes))]
			to := pathJoin(folders[rng.IntN(len(folders))], names[rng.IntN(len(names))]+".md")
			if rng.IntN(6) == 0 { // rename changing only the case of the name or the folder
				dir, base := parentDir(from), baseName(from)
				if rng.IntN(2) == 0 || dir == "" {
					base = swapCase(base)
				} else {
					dir = swapCase(dir)
				}
				to = pathJoin(dir, base)
			}
			r := v.resolver()
			if to == from || (r.Has(to) || (&movePlanner{before: r, from: from, to: to, keyTo: FileKey(to)}).clash() != "") {
				continue
			}
			plan, err := PlanMove(r, v.graph(), from, to, v.read)
			if err != nil {
				t.Fatalf("seed %d: PlanMove(%s -> %s): %v", seed, from, to, err)
			}
			w, err := v.applyMove(from, to, plan)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if c := checkMove(v, w, from, to); len(c.failures) > 0 {
				t.Fatalf("seed %d: move %s -> %s:\n%s", seed, from, to, strings.Join(c.failures, "\n"))
			}
			for _, fe := range plan {
				edits += len(fe.Edits)
			}
			moves++
			v = w
		}
	}
	if moves < 200 || edits == 0 {
		t.Fatalf("only %d moves with %d edits were exercised", moves, edits)
	}
	t.Logf("%d moves, %d link edits", moves, edits)
}

// swapCase upper-cases s, or lower-cases it when that changes nothing.
func swapCase(s string) string {
	if u := strings.ToUpper(s); u != s {
		return u
	}
	return strings.ToLower(s)
}

func TestPlanMoveDoesNotChangeInputs(t *testing.T) {
	v := newMemVault(map[string]string{"s.md": "[[x]]\n", "x.md": "[[s]]\n"})
	r, g := v.resolver(), v.graph()
	filesBefore := r.Files()
	statsBefore := g.Stats()
	if _, err := PlanMove(r, g, "x.md", "d/y.md", v.read); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Files(), filesBefore) || g.Stats() != statsBefore || !maps.EqualFunc(v.notes, newMemVault(map[string]string{"s.md": "[[x]]\n", "x.md": "[[s]]\n"}).notes, slices.Equal) {
		t.Error("PlanMove changed the resolver, the graph or the notes")
	}
}

// TestPlanMoveObsidianOrder: the cases a move got wrong against Obsidian's
// own order, from the Obsidian hub. A note moved to a shorter path than a
// same-named one takes over bare links in Obsidian (the shortest path
// wins, not the fewest folders), so those links get a path; and a partial
// path is not written where Obsidian's plain suffix match would also reach
// another file ("People/simsapa" names "Old People/simsapa.md" too).
func TestPlanMoveObsidianOrder(t *testing.T) {
	v := newMemVault(map[string]string{
		"05 - Concepts/LaTeX.md": "# LaTeX\n",
		"02 - Community Expansions/02.05 All Community Expansions/Themes/LaTeX.md": "# LaTeX theme\n",
		"benf.md":                          "Writes [[LaTeX]] and [[LaTeX|LaTeX]].\n",
		"01 - Community/People/simsapa.md": "# a person\n",
		"02 - Community Expansions/All/Plugins/simsapa.md": "# a plugin\n",
		"Uncategorized plugins.md":                         "- [[simsapa|Simsapa]]\n",
	})
	// Before: [[LaTeX]] names the concept note (22 characters against 73).
	// The new path is shorter in folders than the theme's (2 against 3) but
	// longer in characters (78 against 73): Obsidian then resolves
	// [[LaTeX]] to the theme, so the links get a path.
	if got, _ := v.resolver().Resolve("benf.md", "LaTeX"); got != "05 - Concepts/LaTeX.md" {
		t.Fatalf("[[LaTeX]] before = %s", got)
	}
	w, _ := runMove(t, v, "05 - Concepts/LaTeX.md", "04 - Guides, Workflows, & Courses/Mathematics and Scientific Writing/LaTeX.md")
	if got := string(w.notes["benf.md"]); strings.Contains(got, "[[LaTeX") || !strings.Contains(got, "[[Mathematics and Scientific Writing/LaTeX]]") {
		t.Errorf("benf.md after the move:\n%s", got)
	}

	// [[simsapa]] names the person (32 characters against 49); the plugin
	// moved to a shorter path would take it over, so the link gets a path,
	// and not "People/simsapa", which Obsidian's suffix match would also
	// find in "Old People/simsapa.md".
	w, _ = runMove(t, v, "02 - Community Expansions/All/Plugins/simsapa.md", "Old People/simsapa.md")
	got := string(w.notes["Uncategorized plugins.md"])
	if strings.Contains(got, "[[People/simsapa") || !strings.Contains(got, "[[01 - Community/People/simsapa|Simsapa]]") {
		t.Errorf("a partial path Obsidian would also match to Old People/simsapa.md:\n%s", got)
	}
}
