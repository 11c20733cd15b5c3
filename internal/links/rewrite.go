package links

import (
	"cmp"
	"fmt"
	"golang.org/x/text/unicode/norm"
	"slices"
	"strings"
	"unicode"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

// Link rewriting for a move (DESIGN.md section 5, vault_move): every link
// that resolved to a file before the move resolves to the same file after it.
//
// PlanMove is pure: the caller hands it the resolver, the graph and a way to
// read notes, and gets back byte edits to apply. Three kinds of links are
// looked at:
//
//   - links in any note that resolve to the moved file (from);
//   - every link of the moved note itself, which is read from its new folder
//     after the move (relative links and "own folder first" bare names);
//   - links in other notes that depend on the new file name (FileKey(to)):
//     a link that resolved to some other file X and would resolve to the
//     moved note after the move, or that named X unambiguously before and
//     is ambiguous with the moved note after it, is rewritten to stay on X.
//
// A link that is rewritten keeps its author's form:
//
//   - a bare wiki target stays bare when the bare name reaches the file
//     unambiguously (no other file would match it), else the shortest path
//     suffix that does, else the full vault path; a target written as the
//     whole vault path ([[a/b/c]] for a/b/c.md) stays the whole vault path;
//     another path target ([[b/c]]) stays a path (shortest unambiguous suffix
//     of two segments or more, else the full path); "/..." stays
//     root-absolute; "./" and "../" targets stay relative to the note's
//     folder (a relative or whole-path target is rewritten when it would
//     still reach its file, but only by another rule);
//   - a markdown link that resolved relative to its note's folder
//     ("../x/y.md", "y.md") stays relative, recomputed from the note's folder
//     after the move; "/a/b.md" stays root-absolute; a markdown link that
//     resolved by name from elsewhere is treated like a wiki target;
//   - ".md" is written when the author wrote it and left out when not;
//   - markdown destinations are encoded the way they were: the "<...>" form
//     is kept (spaces raw in it unless the author wrote %20), otherwise
//     spaces are written %20, and non-ASCII letters are percent-encoded when
//     the author percent-encoded them; '%', '#', '<', '>', '\' and control
//     characters are always percent-encoded, parentheses when unbalanced;
//   - the anchor (#heading, #^block), the '!' of an embed, a markdown link's
//     title and the "\|" of a wiki-link inside a table are outside the
//     replaced bytes and stay as written;
//   - an alias (wiki-link text after '|', or markdown link text) equal to the
//     old file name, compared case-insensitively, with or without ".md",
//     becomes the new name in the same form; any other alias is kept;
//   - when a path segment changes only in case (Note.md -> note.md), links to
//     the moved file that spell that segment exactly as before are respelled,
//     although they would still resolve.
//
// Links that were broken before the move are left alone (one may resolve to
// the moved note afterwards, as in Obsidian); same-note links ([[#h]]) are
// never touched, and links inside code are not links (the parser skips them).
// Links in frontmatter properties (related: "[[note]]", lists of them) are
// rewritten like wiki-links, inside their quotes: a single quote in the new
// name is doubled in a single-quoted value, and a name with a quote or a
// backslash cannot be written in a double-quoted one (REFUSED).

// Edit replaces Src[Start:End] of one file by New. Old is the text replaced
// and Line the 1-based line of the link the edit belongs to.
type Edit struct {
	Start, End int
	Old, New   string
	Line       int
}

// FileEdits are the edits of one file, in ascending order, non-overlapping.
type FileEdits struct {
	Path  string
	Edits []Edit
}

// MoveError is a move whose link edits cannot be planned. Code is one of
// the stable codes of internal/api (api.CodeOf finds it through wrapping).
type MoveError struct {
	Code string
	Path string // the note whose link is concerned; "" for the move itself
	Line int    // 1-based line of that link; 0 when none
	Msg  string
}

func (e *MoveError) Error() string { return e.Code + ": " + e.Detail() }

// Detail is the message without its code, for a caller that shows the code
// itself (an api.Error would otherwise print it twice).
func (e *MoveError) Detail() string {
	switch {
	case e.Path != "" && e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Msg)
	case e.Path != "":
		return fmt.Sprintf("%s: %s", e.Path, e.Msg)
	}
	return e.Msg
}

// ErrorCode is the stable code (api.CodeOf reads it).
func (e *MoveError) ErrorCode() string { return e.Code }

// PlanMove computes every link edit needed so that moving the file from to
// the path to keeps every link that resolved to a file before the move
// resolving to the same file after it (links to from then resolve to to).
//
// r is the resolver before the move (it knows from, not to); g is the link
// graph over the same files (nil: every note r knows is read). read returns
// the current bytes of a note and its parsed links (markdown.Parse); it is
// called only for notes that need edits, and for the moved note itself. The
// result is sorted by path; the moved note's edits are listed under from and
// apply to its current bytes, whose result the caller writes at to. Nothing
// is written and neither r nor g is changed.
//
// Before returning, the plan is checked: each edited note is parsed again
// and every link in it must resolve to the file it must keep reaching.
// Errors are *MoveError (NOT_FOUND: from is unknown; ALREADY_EXISTS: a file
// at to, or one differing from it only in case, exists; INVALID_ARGUMENT: to
// is not a plain vault path or is hidden; REFUSED: the new name cannot be
// written as a link from some note; INTERNAL: the check failed), or read's
// error wrapped.
func PlanMove(r *Resolver, g *Graph, from, to string, read func(path string) ([]byte, []markdown.Link, error)) ([]FileEdits, error) {
	if err := checkMovePath(to); err != nil {
		return nil, err
	}
	if !r.Has(from) {
		return nil, &MoveError{Code: api.CodeNotFound, Path: from, Msg: "no such file in the vault"}
	}
	if from == to {
		return nil, nil
	}
	p := newMovePlanner(r, from, to)
	if clash := p.clash(); clash != "" {
		return nil, &MoveError{Code: api.CodeAlreadyExists, Path: to, Msg: fmt.Sprintf("the vault already has %s", clash)}
	}
	var out []FileEdits
	for _, s := range p.sources(g) {
		src, links, err := read(s)
		if err != nil {
			return nil, fmt.Errorf("links: planning the move of %s: reading %s: %w", from, s, err)
		}
		edits, err := p.planNote(s, src, links)
		if err != nil {
			return nil, err
		}
		if len(edits) > 0 {
			out = append(out, FileEdits{Path: s, Edits: edits})
		}
	}
	return out, nil
}

// Apply applies edits (ascending, non-overlapping, within src: see
// CheckEdits) to src and returns the new bytes; src is not modified.
func Apply(src []byte, edits []Edit) []byte {
	n := len(src)
	for _, e := range edits {
		n += len(e.New) - (e.End - e.Start)
	}
	out := make([]byte, 0, n)
	prev := 0
	for _, e := range edits {
		out = append(out, src[prev:e.Start]...)
		out = append(out, e.New...)
		prev = e.End
	}
	return append(out, src[prev:]...)
}

// CheckEdits reports whether edits can be applied to src: ascending,
// non-overlapping, within src, and each Old equal to the bytes it replaces
// (so a file that changed since it was planned is caught).
func CheckEdits(src []byte, edits []Edit) error {
	prev := 0
	for i, e := range edits {
		if e.Start < prev || e.End < e.Start || e.End > len(src) {
			return fmt.Errorf("links: edit %d (bytes %d-%d, line %d) is out of order or outside the file", i, e.Start, e.End, e.Line)
		}
		if string(src[e.Start:e.End]) != e.Old {
			return fmt.Errorf("links: edit %d (line %d): the file no longer holds %q there", i, e.Line, e.Old)
		}
		prev = e.End
	}
	return nil
}

// checkMovePath refuses a destination that is not a plain vault path.
func checkMovePath(to string) error {
	bad := func(msg string) error {
		return &MoveError{Code: api.CodeInvalidArgument, Path: to, Msg: msg}
	}
	if to == "" {
		return bad("empty destination")
	}
	for seg := range strings.SplitSeq(to, "/") {
		switch {
		case seg == "" || seg == "." || seg == "..":
			return bad("the destination must be a vault path without empty, '.' or '..' segments")
		case strings.HasPrefix(seg, "."):
			return bad("a hidden destination is not indexed: links to it would break")
		}
	}
	return nil
}

// linkForm is how a link target is written.
type linkForm uint8

const (
	formBare linkForm = iota // a name: [[note]], [x](note.md) found by name
	formPath                 // a path suffix: [[b/note]] for a/b/note.md
	formFull                 // the whole vault path: [[a/b/note]] ("absolute path in vault")
	formRel                  // relative to the note's folder: ../a/note.md, ./note
	formRoot                 // vault-root absolute: /a/note.md
)

// movePlanner holds the state of one PlanMove: private copies of the
// resolver before and after the move, which it may change briefly to test
// whether a target is ambiguous.
type movePlanner struct {
	before, after *Resolver
	from, to      string
	oldSegs       []string // from, split at '/'
	newSegs       []string // to, split at '/'
	renamed       bool     // the base name changed (aliases may follow)
	recased       bool     // a trailing segment changed only in case (links may be respelled)
	keyFrom       string
	keyTo         string
}

func newMovePlanner(r *Resolver, from, to string) *movePlanner {
	p := &movePlanner{
		before:  r.Clone(),
		from:    from,
		to:      to,
		oldSegs: strings.Split(from, "/"),
		newSegs: strings.Split(to, "/"),
		renamed: baseName(from) != baseName(to),
		keyFrom: FileKey(from),
		keyTo:   FileKey(to),
	}
	p.after = p.before.Clone()
	p.after.remove(from)
	p.after.add(to)
	for i := 1; i <= len(p.oldSegs) && i <= len(p.newSegs); i++ {
		o, n := p.oldSegs[len(p.oldSegs)-i], p.newSegs[len(p.newSegs)-i]
		if fold(o) != fold(n) {
			break
		}
		if o != n {
			p.recased = true
		}
	}
	return p
}

// clash returns a file other than from whose path equals to but for case.
func (p *movePlanner) clash() string {
	fto := fold(p.to)
	for _, c := range p.before.byName[p.keyTo] {
		if c.lower == fto && c.path != p.from {
			return c.path
		}
	}
	return ""
}

// afterPath is where the note at s lives after the move.
func (p *movePlanner) afterPath(s string) string {
	if s == p.from {
		return p.to
	}
	return s
}

// sources returns the notes to read, sorted: the moved note, and those of
// g's notes with a link that needs an edit according to the graph.
func (p *movePlanner) sources(g *Graph) []string {
	set := make(map[string]bool)
	if g == nil {
		for f := range p.before.files {
			if vaultfs.IsNoteName(f) {
				set[f] = true
			}
		}
	} else {
		if vaultfs.IsNoteName(p.from) || g.IsNote(p.from) {
			set[p.from] = true
		}
		g.mu.RLock()
		from := g.toOf(p.from)
		for _, key := range []string{p.keyFrom, p.keyTo} {
			bk := g.setOf(key)
			if bk == nil {
				continue
			}
			g.eachIn(bk, func(n *noteRec) {
				if set[n.path] {
					return
				}
				for i := range n.links {
					l := &n.links[i]
					if l.to != 0 && (l.to == from || dependsOn(l.folded.of(n.text), p.keyTo)) && p.mayEdit(n.path, l.link(n.text)) {
						set[n.path] = true
						return
					}
				}
			})
		}
		g.mu.RUnlock()
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}

// linkPlan is what one link needs.
type linkPlan struct {
	want     string   // the file the link must reach after the move; "" when it is left alone (its text must not change)
	form     linkForm // how its target is written
	retarget bool     // its target text must be recomputed
	toMoved  bool     // it reached the moved file
}

// mayEdit reports whether the link in the note at s may need an edit.
func (p *movePlanner) mayEdit(s string, l markdown.Link) bool {
	lp := p.decide(s, l)
	return lp.want != "" && (lp.retarget || lp.toMoved && (p.renamed || p.recased))
}

// decide works out what the link l written in the note at s needs.
func (p *movePlanner) decide(s string, l markdown.Link) linkPlan {
	t := strings.TrimSpace(l.Target)
	if t == "" {
		return linkPlan{} // same-note link: it follows the note
	}
	if s != p.from {
		// Only links naming a file called like from or to can change: the
		// note stays where it is and no other file appears or goes.
		if ft := foldTarget(t); !dependsOn(ft, p.keyFrom) && !dependsOn(ft, p.keyTo) {
			return linkPlan{}
		}
	}
	before, ok := p.before.ResolveKind(s, t, l.Kind)
	if !ok {
		return linkPlan{} // broken: left alone
	}
	lp := linkPlan{want: before, form: formOf(s, t, l.Kind, before)}
	if before == p.from {
		lp.want, lp.toMoved = p.to, true
	}
	s2 := p.afterPath(s)
	after, _ := p.after.ResolveKind(s2, t, l.Kind)
	switch {
	case after != lp.want:
		lp.retarget = true
	case lp.form == formRel:
		// A relative link must still reach its file relative to its note,
		// and not only because ".." stops at the vault root.
		lp.retarget = !joinedIs(s2, t, lp.want) || clamps(s2, t) && !clamps(s, t)
	case lp.form == formFull:
		lp.retarget = !isFullPath(t, lp.want)
	case lp.form != formRoot:
		// Unambiguous before, ambiguous after (the moved file now matches
		// too): rewrite it so it does not hang on a tie-break.
		ft := foldTarget(t)
		if dependsOn(ft, p.keyTo) || dependsOn(ft, p.keyFrom) {
			lp.retarget = p.unique(p.before, s, t, l.Kind, before) && !p.unique(p.after, s2, t, l.Kind, lp.want)
		}
	}
	return lp
}

// formOf classifies the target t (as written, anchor removed) of a link in
// the note at s that resolves to the file at to.
func formOf(s, t string, kind markdown.LinkKind, to string) linkForm {
	switch {
	case strings.HasPrefix(t, "/"):
		return formRoot
	case strings.HasPrefix(t, "./") || strings.HasPrefix(t, "../"):
		return formRel
	case kind == markdown.MarkdownLink && joinedIs(s, t, to):
		return formRel
	case strings.Contains(t, "/"):
		if isFullPath(t, to) {
			return formFull
		}
		return formPath
	}
	return formBare
}

// isFullPath reports whether t is the whole vault path of the file at p
// (with ".md" or without).
func isFullPath(t, p string) bool {
	ft, fp := foldTarget(t), fold(p)
	return ft == fp || ft+".md" == fp
}

// joinedIs reports whether t joined to the folder of the note at s names
// the file at p (with ".md" added or not), as a relative link resolves.
func joinedIs(s, t, p string) bool {
	j := joinClamped(parentDir(fold(s)), foldTarget(t))
	fp := fold(p)
	return j == fp || j+".md" == fp
}

// clamps reports whether the relative target t, written in the note at s,
// climbs above the vault root (where ".." stops).
func clamps(s, t string) bool {
	depth := strings.Count(s, "/")
	for seg := range strings.SplitSeq(t, "/") {
		switch seg {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// unique reports whether t, written in the note at s and resolving to d in
// res, names d without ambiguity: by an exact path (root-absolute, relative,
// or the whole vault path), or because no other file would match it. res
// is one of the planner's private resolvers: d is taken out and put back.
func (p *movePlanner) unique(res *Resolver, s, t string, kind markdown.LinkKind, d string) bool {
	ft := foldTarget(t)
	if strings.HasPrefix(ft, "/") || isFullPath(t, d) {
		return true
	}
	if (kind == markdown.MarkdownLink || strings.HasPrefix(ft, "./") || strings.HasPrefix(ft, "../")) && joinedIs(s, t, d) {
		return true
	}
	if strings.Contains(ft, "/") && res.rawSuffixOther(strings.TrimPrefix(ft, "./"), d) {
		return false // Obsidian's raw suffix match could reach another file
	}
	if !res.remove(d) {
		return false
	}
	alt, _ := res.resolve(s, t, kind == markdown.MarkdownLink)
	res.add(d)
	return alt == ""
}

// planNote plans the edits of the note at s.
func (p *movePlanner) planNote(s string, src []byte, links []markdown.Link) ([]Edit, error) {
	text := string(src)
	var edits []Edit
	wants := make([]string, len(links))
	for i, l := range links {
		if l.Start < 0 || l.TargetStart < l.Start || l.TargetEnd < l.TargetStart || l.End < l.TargetEnd || l.End > len(text) {
			return nil, &MoveError{Code: api.CodeInternal, Path: s, Line: l.Line, Msg: "link offsets do not fit the note's bytes (were the links parsed from them?)"}
		}
		lp := p.decide(s, l)
		wants[i] = lp.want
		if lp.want == "" {
			continue
		}
		e, ok, err := p.linkEdit(s, text, l, lp)
		if err != nil {
			return nil, err
		}
		if ok {
			edits = append(edits, e)
		}
	}
	if len(edits) == 0 {
		return nil, nil
	}
	slices.SortFunc(edits, func(a, b Edit) int { return cmp.Compare(a.Start, b.Start) })
	for i := 1; i < len(edits); i++ {
		if edits[i].Start < edits[i-1].End {
			return nil, &MoveError{Code: api.CodeInternal, Path: s, Line: edits[i].Line, Msg: "two link edits overlap"}
		}
	}
	if err := p.verify(s, src, edits, links, wants); err != nil {
		return nil, err
	}
	return edits, nil
}

// verify parses the edited note again and checks that each of its links
// reaches the file it must.
func (p *movePlanner) verify(s string, src []byte, edits []Edit, links []markdown.Link, wants []string) error {
	s2 := p.afterPath(s)
	got := markdown.Parse(s2, Apply(src, edits)).Links
	fail := func(line int, format string, args ...any) error {
		return &MoveError{Code: api.CodeInternal, Path: s, Line: line, Msg: "rewriting links would change them: " + fmt.Sprintf(format, args...)}
	}
	if len(got) != len(links) {
		return fail(0, "the note would have %d links instead of %d", len(got), len(links))
	}
	for i, l := range got {
		old := links[i]
		if l.Kind != old.Kind || l.Anchor != old.Anchor {
			return fail(l.Line, "link %d changed its kind or anchor", i+1)
		}
		if wants[i] == "" {
			if l.Target != old.Target {
				return fail(l.Line, "link %d was not to be changed, but now reads %q", i+1, l.Target)
			}
			continue
		}
		if to, _ := p.after.ResolveLink(s2, l); to != wants[i] {
			return fail(l.Line, "%q would reach %q instead of %q", l.Target, to, wants[i])
		}
	}
	return nil
}

// linkEdit builds the edit of one link, if it needs one.
func (p *movePlanner) linkEdit(s, src string, l markdown.Link, lp linkPlan) (Edit, bool, error) {
	md := l.Kind == markdown.MarkdownLink
	t := strings.TrimSpace(l.Target)
	newT := t
	switch {
	case lp.retarget:
		c, err := p.chooseTarget(s, l, t, lp)
		if err != nil {
			return Edit{}, false, err
		}
		newT = c
	case lp.toMoved && p.recased:
		newT = p.recase(t)
	}
	newRaw := src[l.TargetStart:l.TargetEnd]
	if newT != t {
		if md {
			newRaw = encodeDest(newT, mdStyleOf(src, l))
		} else {
			if !wikiWritable(newT) {
				return Edit{}, false, &MoveError{Code: api.CodeRefused, Path: s, Line: l.Line,
					Msg: fmt.Sprintf("%q cannot be written in a wiki-link (it holds one of # | ^ [ ], %%%% or a line break)", newT)}
			}
			newRaw = newT
			if l.InProperty() {
				enc, ok := propertyEncode(newT, l.Quote)
				if !ok {
					return Edit{}, false, &MoveError{Code: api.CodeRefused, Path: s, Line: l.Line,
						Msg: fmt.Sprintf("%q cannot be written in a double-quoted frontmatter property (it holds a quote or a backslash)", newT)}
				}
				newRaw = enc
			}
		}
	}
	start, end, repl := l.TargetStart, l.TargetEnd, newRaw
	if lp.toMoved && p.renamed {
		if as, ae, alias, ok := p.aliasEdit(src, l); ok {
			if md { // the text comes before the destination
				start, repl = as, alias+src[ae:l.TargetStart]+newRaw
			} else { // the alias comes after the target (and anchor, and a table's '\')
				end, repl = ae, newRaw+src[l.TargetEnd:as]+alias
			}
		}
	}
	old := src[start:end]
	if old == repl {
		return Edit{}, false, nil
	}
	return Edit{Start: start, End: end, Old: old, New: repl, Line: l.Line}, true, nil
}

// candidate target text and whether it names its file by an exact path.
type targetText struct {
	text  string
	exact bool
}

// chooseTarget returns the new target (decoded, as the parser would report
// it) for the link l, written t, so that it reaches lp.want from the note's
// place after the move, in the form the author used.
func (p *movePlanner) chooseTarget(s string, l markdown.Link, t string, lp linkPlan) (string, error) {
	s2 := p.afterPath(s)
	names := []string{lp.want}
	// The name without ".md" only for a target written without a note's
	// extension: one written "x.markdown" keeps an extension when the note
	// becomes "y.md" (a markdown link "[a](y)" is not one most renderers
	// follow).
	if hasMdExt(lp.want) && !vaultfs.IsNoteName(t) {
		names = []string{lp.want[:len(lp.want)-3], lp.want}
	}
	for _, name := range names {
		for _, c := range candidateTargets(lp.form, l.Kind != markdown.MarkdownLink, parentDir(s2), t, name) {
			to, ok := p.after.ResolveKind(s2, c.text, l.Kind)
			if !ok || to != lp.want {
				continue
			}
			if c.exact || p.unique(p.after, s2, c.text, l.Kind, lp.want) {
				return c.text, nil
			}
		}
	}
	return "", &MoveError{Code: api.CodeRefused, Path: s, Line: l.Line,
		Msg: fmt.Sprintf("no link text reaches %s from %s", lp.want, s2)}
}

// candidateTargets lists the texts to try, best first, for a link written t
// in the form f in a note of the folder dir, that must name the vault path
// name (".md" already dropped or kept). A relative wiki target always starts
// with "./" or "../" (without, it would be a name); a relative markdown
// destination starts with "./" when the author wrote one.
func candidateTargets(f linkForm, wiki bool, dir, t, name string) []targetText {
	segs := strings.Split(name, "/")
	suffixes := func(minSegs int) []targetText {
		minSegs = min(minSegs, len(segs))
		var out []targetText
		for k := minSegs; k <= len(segs); k++ {
			out = append(out, targetText{text: strings.Join(segs[len(segs)-k:], "/"), exact: k == len(segs)})
		}
		return out
	}
	root := targetText{text: "/" + name, exact: true}
	switch f {
	case formRoot:
		return []targetText{root}
	case formRel:
		rel := relPath(dir, name)
		if (wiki || strings.HasPrefix(t, "./")) && !strings.HasPrefix(rel, "../") {
			rel = "./" + rel
		}
		out := []targetText{{text: rel, exact: true}}
		return append(append(out, suffixes(2)...), root)
	case formFull:
		return []targetText{{text: name, exact: true}, root}
	case formPath:
		return append(suffixes(2), root)
	}
	return append(suffixes(1), root)
}

// relPath is the relative path from the folder dir ("" is the root) to the
// vault path p.
func relPath(dir, p string) string {
	var ds []string
	if dir != "" {
		ds = strings.Split(dir, "/")
	}
	ps := strings.Split(p, "/")
	i := 0
	for i < len(ds) && i < len(ps)-1 && ds[i] == ps[i] {
		i++
	}
	parts := make([]string, 0, len(ds)-i+len(ps)-i)
	for range len(ds) - i {
		parts = append(parts, "..")
	}
	return strings.Join(append(parts, ps[i:]...), "/")
}

// recase respells, in the target t of a link to the moved file, the
// trailing segments that changed only in case and are written exactly as
// before; other segments are kept.
func (p *movePlanner) recase(t string) string {
	ws := strings.Split(t, "/")
	changed := false
	for i := 1; i <= len(ws) && i <= len(p.oldSegs) && i <= len(p.newSegs); i++ {
		w, o, n := ws[len(ws)-i], p.oldSegs[len(p.oldSegs)-i], p.newSegs[len(p.newSegs)-i]
		if fold(o) != fold(n) {
			break
		}
		if i == 1 && w != o && hasMdExt(o) && hasMdExt(n) {
			o, n = o[:len(o)-3], n[:len(n)-3] // the name written without ".md"
		}
		if w != o {
			if fold(w) != fold(o) {
				break
			}
			continue // the author's own spelling: kept
		}
		if o != n {
			ws[len(ws)-i] = n
			changed = true
		}
	}
	if !changed {
		return t
	}
	return strings.Join(ws, "/")
}

// aliasEdit finds the alias (wiki-link text after '|') or the markdown link
// text of l and, when it is the old file name as written (letter case
// included, Unicode normalisation aside; with or without ".md"), returns its
// span and the new name in the same form.
func (p *movePlanner) aliasEdit(src string, l markdown.Link) (start, end int, alias string, ok bool) {
	if !l.HasAlias {
		return 0, 0, "", false
	}
	var rs, re int
	if l.Kind == markdown.MarkdownLink {
		rs = l.Start + 1
		if src[l.Start] == '!' {
			rs++
		}
		re = rs + len(l.Alias)
		if re > l.TargetStart || src[rs:re] != l.Alias {
			return 0, 0, "", false
		}
	} else {
		i := strings.IndexByte(src[l.Start:l.End], '|')
		if i < 0 {
			return 0, 0, "", false
		}
		rs, re = l.Start+i+1, l.End-2
	}
	region := src[rs:re]
	a := strings.TrimSpace(region)
	if a == "" {
		return 0, 0, "", false
	}
	lead := len(region) - len(strings.TrimLeftFunc(region, unicode.IsSpace))
	oldBase, newBase := baseName(p.from), baseName(p.to)
	written := a // the alias as the parser reads it
	if l.Quote == '\'' {
		written = strings.ReplaceAll(a, "''", "'")
	}
	// Only a text spelled as the name, letter case included: "properties"
	// in [[Properties|properties]] is a word of its sentence, which the new
	// name would change.
	var repl string
	switch nfc := norm.NFC.String(written); nfc {
	case norm.NFC.String(oldBase):
		repl = newBase
	case norm.NFC.String(stripMd(oldBase)):
		repl = stripMd(newBase)
	default:
		return 0, 0, "", false
	}
	if l.Kind == markdown.MarkdownLink {
		repl = escapeLinkText(repl)
	} else if !wikiWritable(repl) {
		return 0, 0, "", false
	}
	if l.InProperty() {
		enc, ok := propertyEncode(repl, l.Quote)
		if !ok {
			return 0, 0, "", false
		}
		repl = enc
	}
	if repl == a {
		return 0, 0, "", false
	}
	return rs + lead, rs + lead + len(a), repl, true
}

func hasMdExt(p string) bool {
	return len(p) >= 3 && strings.EqualFold(p[len(p)-3:], ".md")
}

func stripMd(p string) string {
	if hasMdExt(p) {
		return p[:len(p)-3]
	}
	return p
}

// wikiWritable reports whether s can be the target or alias of a wiki-link:
// none of the characters Obsidian says may not work in one ('#', '|', '^',
// '[', ']', and "%%", which opens a comment), nor a line end.
func wikiWritable(s string) bool {
	return !strings.ContainsAny(s, "#|^[]\r\n") && !strings.Contains(s, "%%")
}

// escapeLinkText escapes the characters that would end or break markdown
// link text.
func escapeLinkText(s string) string {
	if !strings.ContainsAny(s, `\[]`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\\' || c == '[' || c == ']' {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mdStyle is how the author encoded a markdown link destination.
type mdStyle struct {
	angle       bool // written <...>
	pctSpace    bool // spaces written %20 (always so outside <...>)
	pctNonASCII bool // bytes >= 0x80 percent-encoded
}

func mdStyleOf(src string, l markdown.Link) mdStyle {
	raw := src[l.TargetStart:l.TargetEnd]
	st := mdStyle{
		angle:    l.TargetStart > 0 && src[l.TargetStart-1] == '<',
		pctSpace: strings.Contains(raw, "%20"),
	}
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] == '%' && isHexDigit(raw[i+2]) && strings.IndexByte("89abcdefABCDEF", raw[i+1]) >= 0 {
			st.pctNonASCII = true
			break
		}
	}
	return st
}

func isHexDigit(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// encodeDest writes the vault path p as a markdown link destination in the
// style st; the parser decodes it back to p.
func encodeDest(p string, st mdStyle) string {
	balanced := st.angle || parensBalanced(p)
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(p) + 8)
	for i := 0; i < len(p); i++ {
		c := p[i]
		var enc bool
		switch {
		case c == ' ':
			enc = !st.angle || st.pctSpace
		case c < 0x20 || c == 0x7f || c == '%' || c == '#' || c == '<' || c == '>' || c == '\\':
			enc = true
		case c == '(' || c == ')':
			enc = !balanced
		case c >= 0x80:
			enc = st.pctNonASCII
		}
		if enc {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func parensBalanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth--; depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}
