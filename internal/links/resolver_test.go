package links

import (
	"slices"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
)

// vaultFiles is a small vault exercising every resolution rule.
var vaultFiles = []string{
	"index.md",
	"note.md",
	"a/note.md",
	"a/x.md",
	"a/img.png",
	"a/topic.md",
	"a/sub/deep.md",
	"a/sub/topic.md",
	"b/Other.md",
	"b/note.md",
	"b/topic.md",
	"c/other.md",
	"c/d/topic.md",
	"z/k.md",
	"z/sub/topic.md",
	"img.png",
	"assets/diagram.png",
	"docs/spec.pdf",
	"v1.2.md",
	"unique/only.md",
	"Café.md", // NFC é
	"dup/Case.md",
	"dup/case.md",
	"folder/inner.md",
	"n/src.md",
	"n/deep/t.md",
	"nb/t.md",
	"ab/t2.md",
	".hidden/secret.md",
	"x/.trash/gone.md",
}

func newTestResolver(t *testing.T) *Resolver {
	t.Helper()
	r := NewResolver()
	for _, f := range vaultFiles {
		r.Add(f)
	}
	return r
}

func TestResolve(t *testing.T) {
	r := newTestResolver(t)
	const (
		wiki = markdown.WikiLink
		md   = markdown.MarkdownLink
	)
	tests := []struct {
		name     string
		from     string
		target   string
		kind     markdown.LinkKind
		want     string // "" = unresolved
		wantSame bool   // want == from
	}{
		{name: "unique bare name", from: "index.md", target: "only", want: "unique/only.md"},
		{name: "case-insensitive", from: "index.md", target: "ONLY", want: "unique/only.md"},
		{name: "spaces around target ignored", from: "index.md", target: "  only ", want: "unique/only.md"},
		{name: "embed kind uses wiki rules", from: "index.md", target: "only", kind: markdown.Embed, want: "unique/only.md"},
		{name: "ambiguous bare name from root: root file", from: "index.md", target: "note", want: "note.md"},
		{name: "root-level file beats same folder (Obsidian checks the root path first)", from: "a/x.md", target: "note", want: "note.md"},
		{name: "same folder wins", from: "a/x.md", target: "topic", want: "a/topic.md"},
		{name: "same folder wins, deeper source", from: "a/sub/deep.md", target: "topic", want: "a/sub/topic.md"},
		{name: "same folder wins, other folder", from: "b/Other.md", target: "Topic", want: "b/topic.md"},
		{name: "subfolder of source folder before shallower elsewhere", from: "c/other.md", target: "topic", want: "c/d/topic.md"},
		{name: "shortest then lexical from root", from: "index.md", target: "topic", want: "a/topic.md"},
		{name: "shortest then lexical from unrelated folder", from: "e/f.md", target: "topic", want: "a/topic.md"},
		{name: "folder test stops at segment boundary", from: "n/src.md", target: "t", want: "n/deep/t.md"},
		{name: "path from vault root", from: "c/d/topic.md", target: "b/topic", want: "b/topic.md"},
		{name: "path from vault root with extension", from: "c/d/topic.md", target: "b/topic.md", want: "b/topic.md"},
		{name: "path suffix", from: "index.md", target: "d/topic", want: "c/d/topic.md"},
		{name: "path suffix, shortest then lexical", from: "index.md", target: "sub/topic", want: "a/sub/topic.md"},
		{name: "path suffix, source subtree first", from: "z/k.md", target: "sub/topic", want: "z/sub/topic.md"},
		{name: "path suffix stops at segment boundary", from: "index.md", target: "b/t2", want: ""},
		{name: "relative ./", from: "a/sub/deep.md", target: "./topic", want: "a/sub/topic.md"},
		{name: "relative ./ beats root file", from: "a/x.md", target: "./note", want: "a/note.md"},
		{name: "relative ../", from: "a/sub/deep.md", target: "../topic", want: "a/topic.md"},
		{name: "relative ../../ into another folder", from: "a/sub/deep.md", target: "../../b/topic", want: "b/topic.md"},
		{name: "relative ./ missing", from: "a/x.md", target: "./missing", want: ""},
		{name: "relative ./ to a file elsewhere does not match it", from: "b/Other.md", target: "./only", want: ""},
		{name: "rooted /", from: "a/x.md", target: "/note", want: "note.md"},
		{name: "rooted / into folder", from: "index.md", target: "/a/topic", want: "a/topic.md"},
		{name: "rooted / never disambiguates", from: "a/x.md", target: "/topic", want: ""},
		{name: "attachment with extension at root", from: "a/x.md", target: "img.png", want: "img.png"},
		{name: "attachment by name", from: "b/Other.md", target: "diagram.png", want: "assets/diagram.png"},
		{name: "attachment case-insensitive", from: "b/Other.md", target: "Diagram.PNG", want: "assets/diagram.png"},
		{name: "pdf", from: "index.md", target: "spec.pdf", want: "docs/spec.pdf"},
		{name: "explicit .md", from: "index.md", target: "only.md", want: "unique/only.md"},
		{name: "dotted name falls back to .md", from: "index.md", target: "v1.2", want: "v1.2.md"},
		{name: "no extension means .md, not an attachment", from: "index.md", target: "img", want: ""},
		{name: "folder does not resolve", from: "index.md", target: "folder", want: ""},
		{name: "nested folder does not resolve", from: "index.md", target: "a/sub", want: ""},
		{name: "hidden path does not resolve", from: "index.md", target: ".hidden/secret", want: ""},
		{name: "hidden file by name does not resolve", from: "index.md", target: "secret", want: ""},
		{name: "file under hidden folder does not resolve", from: "index.md", target: "gone", want: ""},
		{name: "missing", from: "index.md", target: "nowhere", want: ""},
		{name: "same-note link", from: "a/x.md", target: "", wantSame: true},
		{name: "same-note link from unknown note", from: "zz.md", target: "", want: ""},
		{name: "NFD target matches NFC file", from: "index.md", target: "Cafe\u0301", want: "Café.md"},
		{name: "case collision picks byte order", from: "index.md", target: "dup/CASE", want: "dup/Case.md"},
		{name: "case collision is deterministic whatever the case written", from: "index.md", target: "dup/case", want: "dup/Case.md"},

		{name: "md link relative to source folder", from: "a/x.md", target: "note.md", kind: md, want: "a/note.md"},
		{name: "md link relative without extension", from: "a/x.md", target: "note", kind: md, want: "a/note.md"},
		{name: "md link relative into subfolder", from: "a/x.md", target: "sub/topic.md", kind: md, want: "a/sub/topic.md"},
		{name: "md link ../", from: "a/x.md", target: "../b/topic.md", kind: md, want: "b/topic.md"},
		{name: "md link root-relative fallback", from: "a/x.md", target: "b/topic.md", kind: md, want: "b/topic.md"},
		{name: "md link /abs", from: "a/x.md", target: "/note.md", kind: md, want: "note.md"},
		{name: "md link attachment in same folder", from: "a/x.md", target: "img.png", kind: md, want: "a/img.png"},
		{name: "md link attachment above", from: "a/x.md", target: "../img.png", kind: md, want: "img.png"},
		{name: "md link name elsewhere", from: "b/Other.md", target: "only.md", kind: md, want: "unique/only.md"},
		{name: "md link missing", from: "a/x.md", target: "../nope.md", kind: md, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := tt.want
			if tt.wantSame {
				want = tt.from
			}
			got, ok := r.ResolveKind(tt.from, tt.target, tt.kind)
			if got != want || ok != (want != "") {
				t.Errorf("ResolveKind(%q, %q, %d) = %q, %v; want %q", tt.from, tt.target, tt.kind, got, ok, want)
			}
			if tt.kind == wiki {
				if g2, _ := r.Resolve(tt.from, tt.target); g2 != got {
					t.Errorf("Resolve = %q, ResolveKind = %q", g2, got)
				}
			}
			l := markdown.Link{Kind: tt.kind, Target: tt.target}
			if g3, _ := r.ResolveLink(tt.from, l); g3 != got {
				t.Errorf("ResolveLink = %q, ResolveKind = %q", g3, got)
			}
		})
	}
}

func TestResolverAddRemoveHas(t *testing.T) {
	r := NewResolver()
	r.Add("a/Note.md")
	r.Add("a/Note.md") // idempotent
	r.Add("")
	r.Add(".obsidian/app.json")
	r.Add("x/.git/config")
	if !r.Has("a/Note.md") {
		t.Fatal("Has(a/Note.md) = false after Add")
	}
	if r.Has("a/note.md") {
		t.Error("Has is case-sensitive, but Has(a/note.md) = true")
	}
	if r.Has(".obsidian/app.json") || r.Has("x/.git/config") {
		t.Error("hidden paths must be ignored by Add")
	}
	if got, want := r.Files(), []string{"a/Note.md"}; !slices.Equal(got, want) {
		t.Errorf("Files() = %q, want %q", got, want)
	}
	if got, _ := r.Resolve("b/y.md", "note"); got != "a/Note.md" {
		t.Errorf("Resolve(note) = %q, want a/Note.md", got)
	}
	r.Add("b/note.md")
	if got, _ := r.Resolve("b/y.md", "note"); got != "b/note.md" {
		t.Errorf("after adding b/note.md, Resolve(note) from b/ = %q, want b/note.md", got)
	}
	r.Remove("b/note.md")
	r.Remove("b/note.md") // idempotent
	r.Remove("never/added.md")
	if got, _ := r.Resolve("b/y.md", "note"); got != "a/Note.md" {
		t.Errorf("after removing b/note.md, Resolve(note) = %q, want a/Note.md", got)
	}
	r.Remove("a/Note.md")
	if got, ok := r.Resolve("b/y.md", "note"); ok || got != "" {
		t.Errorf("after removing everything, Resolve(note) = %q, %v", got, ok)
	}
	if r.Len() != 0 || len(r.byName) != 0 {
		t.Errorf("resolver not empty after removing everything: %d files, %d names", r.Len(), len(r.byName))
	}
}

func TestLinkKeysMatchFileKey(t *testing.T) {
	tests := []struct {
		target string
		k1, k2 string
	}{
		{"", "", ""},
		{"Note", "note.md", ""},
		{"a/b/Note", "note.md", ""},
		{"img.PNG", "img.png", "img.png.md"},
		{"v1.2", "v1.2", "v1.2.md"},
		{"note.md", "note.md", "note.md.md"},
		{"  spaced  ", "spaced.md", ""},
	}
	for _, tt := range tests {
		k1, k2 := LinkKeys(tt.target)
		if k1 != tt.k1 || k2 != tt.k2 {
			t.Errorf("LinkKeys(%q) = %q, %q; want %q, %q", tt.target, k1, k2, tt.k1, tt.k2)
		}
		folded := foldTarget(tt.target)
		for _, key := range []string{tt.k1, tt.k2, tt.k1 + ".md", baseName(folded), "other.md", "md", ".md"} {
			want := key != "" && (key == tt.k1 || key == tt.k2)
			if got := dependsOn(folded, key); got != want {
				t.Errorf("dependsOn(%q, %q) = %v, want %v", folded, key, got, want)
			}
		}
	}
	// Every file a target resolves to is keyed under one of the target's keys.
	r := newTestResolver(t)
	for _, from := range vaultFiles {
		for _, target := range []string{"note", "topic", "img.png", "v1.2", "b/topic", "../topic", "/note", "Cafe\u0301", "dup/CASE"} {
			for _, kind := range []markdown.LinkKind{markdown.WikiLink, markdown.MarkdownLink} {
				to, ok := r.ResolveKind(from, target, kind)
				if !ok {
					continue
				}
				k1, k2 := LinkKeys(target)
				if fk := FileKey(to); fk != k1 && fk != k2 {
					t.Errorf("%q from %q resolves to %q keyed %q, not among the link's keys %q, %q", target, from, to, fk, k1, k2)
				}
			}
		}
	}
}

func TestIsHidden(t *testing.T) {
	for p, want := range map[string]bool{
		"a.md":            false,
		".git/config":     true,
		"a/.obsidian/x":   true,
		"a/b/.x.md.swp":   true,
		"a/b.c/d.md":      false,
		"notes/..weird":   true,
		"node_modules/x":  false,
		"a/.trash":        true,
		"plain/dir/a.png": false,
	} {
		if got := IsHidden(p); got != want {
			t.Errorf("IsHidden(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestResolverClone(t *testing.T) {
	r := newTestResolver(t)
	c := r.Clone()
	c.Remove("unique/only.md")
	c.Add("elsewhere/only.md")
	if got, _ := r.Resolve("index.md", "only"); got != "unique/only.md" {
		t.Errorf("original changed by its clone: %q", got)
	}
	if got, _ := c.Resolve("index.md", "only"); got != "elsewhere/only.md" {
		t.Errorf("clone resolves to %q, want elsewhere/only.md", got)
	}
	if !slices.Equal(r.Files(), func() []string {
		f := slices.Clone(c.Files())
		f = slices.DeleteFunc(f, func(p string) bool { return p == "elsewhere/only.md" })
		f = append(f, "unique/only.md")
		slices.Sort(f)
		return f
	}()) {
		t.Error("clone does not hold the same files as the original")
	}
}

// TestResolveShortestPath: among notes of one name outside the source's
// folder, the shortest path wins, by its length as JavaScript counts it (not
// its number of folders), as Obsidian 1.13.7 was observed to pick; the
// source's own folder still comes first.
func TestResolveShortestPath(t *testing.T) {
	r := NewResolver()
	for _, p := range []string{"a/b/Note.md", "zzzz/Note.md", "b/Note.md", "x/y/Topic.md", "Archive/Topic.md", "q/😀/T.md", "qqq/T.md", "zzzz/deep/src.md"} {
		r.Add(p)
	}
	for _, tc := range []struct{ from, target, want string }{
		{"index.md", "Note", "b/Note.md"},
		{"index.md", "Topic", "x/y/Topic.md"},         // 12 characters, three segments, before 16
		{"zzzz/deep/src.md", "Note", "b/Note.md"},     // an ancestor folder counts for nothing
		{"zzzz/other.md", "Note", "zzzz/Note.md"},     // the source's own folder first
		{"Archive/x.md", "Topic", "Archive/Topic.md"}, // the same
		{"index.md", "T", "qqq/T.md"},                 // an emoji is two UTF-16 units: 8 before 9
	} {
		if got, _ := r.Resolve(tc.from, tc.target); got != tc.want {
			t.Errorf("[[%s]] from %s = %q, want %q", tc.target, tc.from, got, tc.want)
		}
	}
}

// TestResolverEachFolder: the files EachFolder gives, by folder, are those
// of Files, before its first call and through adds and removes after it,
// and in a clone.
func TestResolverEachFolder(t *testing.T) {
	byFolder := func(r *Resolver) map[string][]string {
		out := map[string][]string{}
		r.EachFolder("", func(dir string, files []string) {
			if len(files) == 0 {
				t.Errorf("folder %q listed with no file", dir)
			}
			out[dir] = slices.Sorted(slices.Values(files))
		})
		return out
	}
	want := func(r *Resolver) map[string][]string {
		out := map[string][]string{}
		for _, p := range r.Files() {
			out[parentDir(p)] = append(out[parentDir(p)], p)
		}
		return out
	}
	same := func(step string, r *Resolver) {
		t.Helper()
		got, w := byFolder(r), want(r)
		if len(got) != len(w) {
			t.Errorf("%s: folders %v, want %v", step, got, w)
		}
		for d, files := range w {
			if !slices.Equal(got[d], files) {
				t.Errorf("%s: folder %q: %q, want %q", step, d, got[d], files)
			}
		}
	}
	r := NewResolver()
	for _, p := range vaultFiles {
		r.Add(p)
	}
	r.Add(".obsidian/app.json") // hidden: no folder of it
	same("first call", r)
	r.Add("ab/sibling.md")
	var under []string
	r.EachFolder("a", func(dir string, _ []string) { under = append(under, dir) })
	slices.Sort(under)
	if !slices.Equal(under, []string{"a", "a/sub"}) {
		t.Errorf(`EachFolder("a") gave %q, want a and a/sub (not ab)`, under)
	}
	r.Add("c/d/new.md")
	r.Add("top.md")
	r.Remove("a/sub/deep.md")
	r.Remove("a/sub/topic.md") // the folder's last file
	r.Remove("never/added.md")
	same("after adds and removes", r)
	if _, ok := byFolder(r)["a/sub"]; ok {
		t.Error("a folder whose files were all removed is still listed")
	}
	c := r.Clone()
	c.Add("e/f.md")
	same("clone", c)
	same("original after the clone changed", r)
	for _, p := range r.Files() {
		r.Remove(p)
	}
	same("emptied", r)
}
