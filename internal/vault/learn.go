package vault

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/links"
	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
)

var _ api.Learner = (*Service)(nil)

// vault_learn, one concern a file, each with its tests: learn.go the
// operation (file the insight, its escape routes, propagate),
// learn_validate.go the request, learn_decide.go append or create,
// learn_compose.go a new note and an appended section, learn_template.go
// the templates' expressions, learn_daily.go the daily note; the MOC and
// knowledge-index upkeep is moc.go, the profile (keys and section names)
// profile.go.

// Bounds of a learning (DESIGN.md section 6, plus what keeps a note sane).
const (
	maxSlugLen     = 80  // characters of the file name, before ".md"
	maxDomainRunes = 64  // characters of a domain folder name
	maxTitleRunes  = 200 // a title is a heading and a commit subject
	maxLineRunes   = 200 // project, one tag, one link
	maxLearnItems  = 50  // tags, links
	maxLearnText   = 200_000
	// maxDatedNames bounds the search for a free dated name
	// (<slug>-YYYY-MM-DD.md, then -2, -3, ...).
	maxDatedNames = 100
	// learnSearchLimit is how many results the duplicate decision looks at:
	// the runner-up is the best chunk of any note other than the top one,
	// which the default 6 results may not reach.
	learnSearchLimit = api.MaxSearchLimit
)

// Where templates live (read only; never written).
const (
	wikiTemplate  = "_templates/wiki.md"
	dailyTemplate = "_templates/daily.md"
)

// learning is a validated, normalised vault_learn request.
type learning struct {
	title, insight, context string
	domain, project, slug   string
	tags, links             []string
	confirm                 bool
	content                 []byte // the new note, once composed
}

// Learn records an insight without asking where it goes (DESIGN.md section
// 6): it searches for the note the insight belongs to, appends a dated
// section there when one stands out as the same subject, else creates
// 02-wiki/<domain>/<slug>.md; then it lists a new note in the domain's map of
// content (creating the map, and its knowledge-index line, for a new domain)
// and logs the capture in today's daily note. Everything is one commit,
// "docs(vault): <title>", which one git revert (vault_undo) takes back.
//
// No failure of a single file loses the insight: a note with the slug's name
// is appended to; a note that cannot be written, or a create path taken by
// something that is not a note (a FIFO, a symbolic link, a folder, a file
// with other hard links), sends the insight to a free dated name, and a
// warning says where it went.
func (s *Service) Learn(ctx context.Context, req api.LearnRequest) (*api.LearnResult, error) {
	m := s.texts(ctx)
	in, err := validateLearn(m, req)
	if err != nil {
		return nil, err
	}
	if s.opts.ReadOnly {
		return nil, &api.Error{Code: api.CodeReadOnly, Message: m.Get(eReadOnly)}
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	domain, known := s.matchDomain(in.domain)
	if !known && !in.confirm {
		msg := m.Get(eFirstDomain, domain)
		if ds := s.domains(); len(ds) > 0 {
			msg = m.Get(eNewDomainLearn, domain, strings.Join(ds, ", "))
		}
		return nil, &api.Error{Code: api.CodeNeedsConfirm, Field: "confirm_new_domain", Message: msg}
	}
	in.domain = domain
	if err := vaultfs.CheckPolicy(in.primary(), vaultfs.Write); err != nil {
		return nil, fieldErr("domain", err)
	}
	lr := &api.LearnResult{Domain: domain, Propagated: []string{}}
	res, err := s.write(ctx, func(ctx context.Context, t *tx) (*api.WriteResult, string, error) {
		err := s.learn(ctx, t, in, lr)
		return &lr.WriteResult, "docs(vault): " + in.title, err
	})
	if err != nil {
		return nil, err
	}
	if res != &lr.WriteResult {
		lr.WriteResult = *res
	}
	return lr, nil
}

// primary is where a new note of this learning goes.
func (in *learning) primary() string {
	return wikiFolder + "/" + in.domain + "/" + in.slug + ".md"
}

// matchDomain returns the existing domain named d (letter case and Unicode
// normalisation ignored, so that "Go" files under an existing "go", a
// "técnica" sent decomposed under the folder "técnica", and a
// case-insensitive or normalising file system never sees two spellings), or
// d itself and false.
func (s *Service) matchDomain(d string) (string, bool) {
	var folded string
	for _, x := range s.domains() {
		if x == d {
			return x, true
		}
		if folded == "" && strings.EqualFold(norm.NFC.String(x), norm.NFC.String(d)) {
			folded = x
		}
	}
	if folded != "" {
		return folded, true
	}
	return d, false
}

// learn runs inside the write: decide, file the insight, propagate.
func (s *Service) learn(ctx context.Context, t *tx, in *learning, lr *api.LearnResult) error {
	// Another server may have just created the note this learning would
	// create: make sure the index has it before deciding.
	s.Refresh(in.primary())
	found, err := s.Search(ctx, api.SearchRequest{Query: in.title + "\n" + in.insight, Limit: learnSearchLimit, Explain: true})
	if err != nil {
		return err
	}
	v := decide(found.Results, learnSearchLimit, in, s.candidateInfo)
	lr.Decision, lr.Reason, lr.Candidate, lr.Ratio = v.code, v.reason, v.candidate, v.ratio

	target, created, err := s.file(t, in, v)
	if err != nil {
		return err
	}
	lr.Path = target
	lr.Mode = api.LearnAppended
	if created {
		lr.Mode = api.LearnCreated
	}
	lr.Action = lr.Mode
	if cur, err := t.current(target); err == nil && cur != nil {
		lr.SHA256 = sha256Hex(cur)
	}

	r := s.resolverWith(target)
	s.warnBrokenLinks(t, r, target, in.links)
	moc := mocPath(in.domain)
	if created {
		line := "- [[" + linkName(r, moc, target) + "]]"
		if sum := summaryOf(in.insight); sum != "" {
			line += " — " + sum
		}
		if err := s.addMOCLine(t, in.domain, line, r, target); err != nil {
			t.warn(wMOCList, moc, s.fs.Redact(err.Error()))
		}
	}
	_, fresh := t.byPath[target]
	daily, err := s.addDailyLine(t, r, target, in, !fresh)
	if err != nil {
		t.warn(wDailyLog, daily, s.fs.Redact(err.Error()))
	}
	for _, p := range []string{moc, knowledgeIndex, daily} {
		if _, ok := t.byPath[p]; ok && p != target {
			lr.Propagated = append(lr.Propagated, p)
		}
	}
	return nil
}

// file writes the insight: appended to the candidate when the decision says
// so, else into a new note, with the escape routes of DESIGN.md section 6
// step 4. It returns the note written and whether it is new.
func (s *Service) file(t *tx, in *learning, v verdict) (string, bool, error) {
	if v.code == api.LearnDuplicate {
		err := s.appendLearning(t, in, v.candidate)
		if err == nil {
			return v.candidate, false, nil
		}
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn(wCandidateFailed, v.candidate, s.reasonOf(err), p)
		return p, true, nil
	}
	primary := in.primary()
	if _, err := s.fs.ResolveNew(primary, vaultfs.Write); err != nil {
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		// A name the guard refuses for a new file (a Windows device
		// name such as con.md) is not taken by anything: it could not
		// be written.
		why := wNotANote
		if ve := (*vaultfs.Error)(nil); errors.As(err, &ve) && ve.Code == vaultfs.CodeInvalidPath {
			why = wCandidateFailed
		}
		t.warn(why, primary, s.reasonOf(err), p)
		return p, true, nil
	}
	cur, err := t.current(primary)
	if other, taken := s.nameTaken(primary); err == nil && cur == nil && taken {
		// A note of that name elsewhere: [[slug]] links name it, and a
		// second one would take some of them over (Obsidian resolves a bare
		// name to one file). The new note gets a name of its own.
		p, err2 := s.createFree(t, in, wikiFolder+"/"+in.domain+"/"+in.slug+"-"+in.domain)
		if err2 != nil {
			return "", false, err2
		}
		t.warn(wNameTakenNew, in.slug, other, p, in.slug)
		return p, true, nil
	}
	switch {
	case err != nil:
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn(wUnreadable, primary, s.reasonOf(err), p)
		return p, true, nil
	case cur != nil && s.structural(t.msg, primary) != "":
		// The slug names the domain's map of content ("Go MOC" in go):
		// a learning is no section of a MOC (the decision refuses one as
		// a duplicate too), so it gets a note of its own.
		p, err := s.createDated(t, in)
		if err != nil {
			return "", false, err
		}
		t.warn(wNameTakenNew, in.slug, primary, p, in.slug)
		return p, true, nil
	case cur != nil:
		err := s.appendLearning(t, in, primary)
		if err == nil {
			// A note that already held the insight was left alone, and
			// appendLearning said so: "appended" would contradict it.
			if _, wrote := t.byPath[primary]; wrote {
				t.warn(wNameTakenAppend, in.slug, primary)
			}
			return primary, false, nil
		}
		p, err2 := s.createDated(t, in)
		if err2 != nil {
			return "", false, err2
		}
		t.warn(wNameTakenFailed, in.slug, primary, s.reasonOf(err), p)
		return p, true, nil
	}
	content := s.newNote(t, in)
	err = t.writeFile(primary, nil, content, vaultfs.Write)
	if err == nil {
		return primary, true, nil
	}
	p, err2 := s.createDated(t, in)
	if err2 != nil {
		return "", false, err2
	}
	if vaultfs.CodeOf(err) == vaultfs.CodeAlreadyExists {
		t.warn(wAppeared, primary, p)
	} else {
		t.warn(wWriteFailed, primary, s.reasonOf(err), p)
	}
	return p, true, nil
}

// reasonOf is the part of a gatekeeper error worth a warning: its reason
// (the path is named by the warning), or the whole redacted message.
func (s *Service) reasonOf(err error) string {
	var ve *vaultfs.Error
	if errors.As(err, &ve) {
		return fmt.Sprintf("%s: %s", ve.Code, s.fs.Redact(ve.Reason))
	}
	return s.fs.Redact(err.Error())
}

// createDated publishes the new note under the first free dated name,
// <slug>-YYYY-MM-DD.md, then <slug>-YYYY-MM-DD-2.md, and so on. A name taken
// by anything (a note, a link, a FIFO, a folder) or that appears while the
// note is written is skipped; any other failure would repeat for every name
// and ends the search.
func (s *Service) createDated(t *tx, in *learning) (string, error) {
	return s.createFree(t, in, wikiFolder+"/"+in.domain+"/"+in.slug+"-"+s.today())
}

// nameTaken reports whether a note other than p bears p's file name (which
// a bare [[name]] link resolves to), and which.
func (s *Service) nameTaken(p string) (string, bool) {
	name := strings.TrimSuffix(path.Base(p), path.Ext(p))
	s.mu.RLock()
	got, ok := s.graph.Resolver().Resolve("", name)
	s.mu.RUnlock()
	return got, ok && got != p
}

// createFree creates the new note at base.md, or the first of base-2.md,
// base-3.md, ... that is free: no file there, and no note elsewhere of the
// same name (see nameTaken).
func (s *Service) createFree(t *tx, in *learning, base string) (string, error) {
	content := s.newNote(t, in)
	var last error
	for i := 1; i <= maxDatedNames; i++ {
		p := base + ".md"
		if i > 1 {
			p = base + "-" + strconv.Itoa(i) + ".md"
		}
		if _, err := s.fs.ResolveNew(p, vaultfs.Write); err != nil {
			last = err
			continue
		}
		if _, taken := s.nameTaken(p); taken {
			continue
		}
		if cur, err := t.current(p); err != nil || cur != nil {
			if err != nil {
				last = err
			}
			continue
		}
		err := t.writeFile(p, nil, content, vaultfs.Write)
		if err == nil {
			return p, nil
		}
		last = err
		switch vaultfs.CodeOf(err) {
		case vaultfs.CodeAlreadyExists, vaultfs.CodeNotANote:
			continue
		}
		break
	}
	code := api.CodeOf(last)
	if last == nil {
		code = api.CodeInternal
	}
	return "", &api.Error{Code: code, Field: "domain", Err: last, Message: t.msg.Get(eNotRecorded,
		wikiFolder+"/"+in.domain, s.reasonOf(last))}
}

// appendLearning adds the learning as a dated section at the end of the note
// at p. A note that already holds the insight (a retried call) is left alone.
func (s *Service) appendLearning(t *tx, in *learning, p string) error {
	if _, err := s.fs.Resolve(p, vaultfs.Write); err != nil {
		return err
	}
	before, err := t.current(p)
	if err != nil {
		return err
	}
	if before == nil {
		return fmt.Errorf("%s: %w", p, errVanished)
	}
	if in.recordedIn(before) {
		t.warn(wAlreadyHeld, p)
		return nil
	}
	text := string(before)
	eol := eolOf(text)
	if fence := markdown.UnclosedFence(text); fence != "" {
		// The note ends inside a code block (its fence never closed): the
		// new section would be code, not a section. Closing the fence
		// changes nothing of how the note reads (it closes at the end).
		if !strings.HasSuffix(text, "\n") {
			text += eol
		}
		text += fence + eol
	}
	// One blank line between the note and the new section.
	switch {
	case text == "", strings.HasSuffix(text, "\n\n"), strings.HasSuffix(text, "\r\n\r\n"):
	case strings.HasSuffix(text, "\n"):
		text += eol
	default:
		text += eol + eol
	}
	after := text + strings.ReplaceAll(in.section(s.profile(), s.today(), p), "\n", eol)
	after = bumpUpdated(after, s.today())
	return t.writeFile(p, before, []byte(after), vaultfs.Write)
}

// resolverWith is a copy of the link resolver that knows p (a note this
// write may have just created).
func (s *Service) resolverWith(p string) *links.Resolver {
	s.mu.RLock()
	r := s.graph.Resolver().Clone()
	s.mu.RUnlock()
	r.Add(p)
	return r
}

// linkName is how a note at from links to target: the bare name when it
// resolves there, else the vault path without the extension.
func linkName(r *links.Resolver, from, target string) string {
	name := strings.TrimSuffix(path.Base(target), path.Ext(target))
	if got, ok := r.Resolve(from, name); ok && got == target {
		return name
	}
	return strings.TrimSuffix(target, path.Ext(target))
}

// warnBrokenLinks warns about links of the learning that lead nowhere (yet).
func (s *Service) warnBrokenLinks(t *tx, r *links.Resolver, from string, ls []string) {
	var broken []string
	for _, l := range ls {
		target, _, _ := strings.Cut(l, "|")
		target, _, _ = strings.Cut(target, "#")
		if _, ok := r.Resolve(from, strings.TrimSpace(target)); !ok {
			broken = append(broken, "[["+l+"]]")
		}
	}
	if len(broken) > 0 {
		t.warn(wNoNoteYet, strings.Join(broken, ", "))
	}
}
