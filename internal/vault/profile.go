package vault

import (
	"bytes"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/markdown"
	"github.com/vaultmcp/vaultmcp/internal/vaultfs"
	"github.com/vaultmcp/vaultmcp/internal/vpath"
	"go.yaml.in/yaml/v3"
)

// profile is the language of what the server writes into notes: frontmatter
// keys and section names. Reading accepts both spellings.
type profile struct {
	lang                             string // "en" or "pt"
	typeKey, createdKey, updatedKey  string
	noteType                         string
	notesSection, capturesSection    string
	contextLabel, linksSection       string
	domainsSection, knowledgeIndexTi string
}

var profiles = map[string]profile{
	"en": {lang: "en", typeKey: "type", createdKey: "created", updatedKey: "updated", noteType: "note",
		notesSection: "Notes", capturesSection: "Captures", contextLabel: "Context", linksSection: "Links",
		domainsSection: "Domains", knowledgeIndexTi: "Knowledge index"},
	"pt": {lang: "pt", typeKey: "tipo", createdKey: "criado", updatedKey: "atualizado", noteType: "nota",
		notesSection: "Notas", capturesSection: "Capturas", contextLabel: "Contexto", linksSection: "Links",
		domainsSection: "Domínios", knowledgeIndexTi: "Índice do conhecimento"},
}

func profileFor(lang string) profile {
	if p, ok := profiles[lang]; ok {
		return p
	}
	return profiles["en"]
}

// The vault's own language. With Options.Lang set (VAULT_LANG, --lang) the
// profile is that language's. Without, it is detected from the vault, so
// that a Portuguese vault gets tipo/criado keys and its own Capturas
// section, never type/created or a "## Captures" beside its "## Capturas":
// a bounded sample of notes (the templates, the knowledge index, the maps of
// content, the newest daily notes, then other notes, profileSample in all)
// is read, and each sign of a language counts once per note: frontmatter
// keys (tipo, criado, atualizado against type, created, updated), a
// Portuguese type name (nota, projeto, diário), and "## " section names
// (Capturas, Notas, Domínios, Contexto and the usual sections of daily
// notes, against their English names). The language with more signs wins;
// with none, or as many of each, the profile is English and detection is
// tried again once notes have changed. Once decided, the profile stays for
// the life of the service.

// profileSample bounds the notes read to detect the profile.
const profileSample = 64

// Where the profile comes from.
const (
	profileFromOption   = "set by --lang or VAULT_LANG"
	profileFromDetected = "detected from the vault"
	profileFromDefault  = "the default: nothing in the vault tells its language"
)

// profileChoice is the profile in use and why.
type profileChoice struct {
	p    profile
	from string // one of the profileFrom texts
	why  string // the signs seen, when detected
	gen  int64  // s.gen when it was decided
}

// templateNames are the templates whose keys and sections tell the
// vault's language (read from _templates/, which is never indexed).
var templateNames = []string{"wiki", "daily", "diario", "note", "nota", "moc", "project", "projeto"}

// sectionSigns are "## " section names that tell a language: the profiles'
// own, and those daily notes usually have.
var sectionSigns = map[string]string{
	"capturas": "pt", "notas": "pt", "domínios": "pt", "dominios": "pt", "contexto": "pt", "tarefas": "pt",
	"reuniões": "pt", "reunioes": "pt", "diário": "pt", "aprendizados": "pt", "pendências": "pt", "resumo": "pt",
	"ideias": "pt", "hoje": "pt", "solução": "pt", "objetivo": "pt",
	"captures": "en", "notes": "en", "domains": "en", "context": "en", "tasks": "en", "meetings": "en",
	"journal": "en", "learnings": "en", "summary": "en", "ideas": "en", "today": "en", "log": "en", "solution": "en", "goal": "en",
}

// keySigns are the frontmatter keys that tell a language.
var keySigns = map[string]string{
	"tipo": "pt", "criado": "pt", "atualizado": "pt",
	"type": "en", "created": "en", "updated": "en",
}

func (s *Service) profile() profile { return s.profileChoice().p }

// Profile says which profile the service writes notes in ("en" or "pt") and
// why: set by --lang or VAULT_LANG, or detected from the vault (with the signs seen),
// or English by default.
func (s *Service) Profile() (lang, why string) { return s.profileChoice().said() }

// said is the profile's language and why it was chosen, as Profile says them.
func (c *profileChoice) said() (lang, why string) {
	if c.why != "" {
		return c.p.lang, c.from + ": " + c.why
	}
	return c.p.lang, c.from
}

// profileChoice returns the profile, detecting it when it is not set and
// not decided yet (or undecided and the notes have changed since).
func (s *Service) profileChoice() *profileChoice {
	if s.opts.Lang != "" {
		return &profileChoice{p: profileFor(s.opts.Lang), from: profileFromOption}
	}
	c := s.prof.Load()
	if c != nil && (c.from == profileFromDetected || c.gen == s.gen.Load()) {
		return c
	}
	gen := s.gen.Load()
	c = s.detectProfile(s.indexedNotes)
	c.gen = gen
	s.prof.Store(c)
	return c
}

// indexedNotes calls yield with the path of every indexed note.
func (s *Service) indexedNotes(yield func(string) bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for p := range s.notes {
		if !yield(p) {
			return
		}
	}
}

// detectProfile reads the sample of notes (chosen among notes, every note
// path of the vault) and counts the signs of each language.
func (s *Service) detectProfile(notes iter.Seq[string]) *profileChoice {
	votes := map[string]int{}
	signs := map[string]map[string]bool{"en": {}, "pt": {}}
	signed := 0 // notes with a sign
	for _, ns := range s.sampleSigns(s.profileSampleNotes(notes)) {
		for _, sg := range ns {
			votes[sg.lang]++
			signs[sg.lang][sg.sign] = true
		}
		if len(ns) > 0 {
			signed++
		}
	}
	lang := ""
	switch {
	case votes["pt"] > votes["en"]:
		lang = "pt"
	case votes["en"] > votes["pt"]:
		lang = "en"
	default:
		return &profileChoice{p: profiles["en"], from: profileFromDefault}
	}
	why := fmt.Sprintf("%d Portuguese and %d English signs in %d notes (%s)", votes["pt"], votes["en"], signed, signList(signs[lang]))
	return &profileChoice{p: profiles[lang], from: profileFromDetected, why: why}
}

// langSign is one sign of a language seen in a note.
type langSign struct{ lang, sign string }

// signMemo is what one note said, and the size and time it had then.
type signMemo struct {
	size  int64
	mod   time.Time
	signs []langSign
}

// sampleSigns gives the signs of each note in paths. A note read before
// and not changed since (its size and time as the index saw them, or as a
// stat gives them for a note outside the index such as a template) is not
// read again: the language of a vault that shows none is looked for again
// after every change, which is every write, and reading and parsing the
// sample each time cost a write on the hub about 9 ms.
func (s *Service) sampleSigns(paths []string) [][]langSign {
	out := make([][]langSign, len(paths))
	known := make([]vaultfs.FileInfo, len(paths))
	s.mu.RLock()
	for i, p := range paths {
		if n := s.notes[p]; n != nil {
			known[i] = n.file
		}
	}
	s.mu.RUnlock()
	s.signMu.Lock()
	defer s.signMu.Unlock()
	kept := make(map[string]signMemo, len(paths))
	for i, p := range paths {
		fi := known[i]
		if fi.Path == "" {
			st, err := s.fs.Stat(p)
			if err != nil {
				continue
			}
			fi = st
		}
		if m, ok := s.signMemo[p]; ok && m.size == fi.Size && m.mod.Equal(fi.ModTime) {
			out[i] = m.signs
			kept[p] = m
			continue
		}
		data, read, err := s.fs.ReadNote(p)
		if err != nil {
			continue
		}
		s.signReads++
		out[i] = noteSigns(markdown.Parse(p, data))
		// Remembered with what the read saw: a note that changed between
		// the stat (or the index's read) and this read is read again.
		if read.Size == fi.Size && read.ModTime.Equal(fi.ModTime) {
			kept[p] = signMemo{size: read.Size, mod: read.ModTime, signs: out[i]}
		}
	}
	s.signMemo = kept // the current sample's notes only
	return out
}

// noteSigns lists the signs of a language in one note, each once.
func noteSigns(n *markdown.Note) []langSign {
	var out []langSign
	seen := map[string]bool{}
	vote := func(lang, sign string) {
		if !seen[sign] {
			seen[sign] = true
			out = append(out, langSign{lang, sign})
		}
	}
	for k, v := range n.Frontmatter {
		if lang, ok := keySigns[strings.ToLower(k)]; ok {
			vote(lang, strings.ToLower(k))
		}
		if str, ok := v.(string); ok && (strings.EqualFold(k, "type") || strings.EqualFold(k, "tipo")) {
			switch strings.ToLower(strings.TrimSpace(str)) {
			case "nota", "projeto", "diário", "diario":
				vote("pt", "type "+strings.ToLower(strings.TrimSpace(str)))
			}
		}
	}
	for _, h := range n.Headings {
		if h.Level != 2 {
			continue
		}
		if lang, ok := sectionSigns[strings.ToLower(h.Text)]; ok {
			vote(lang, "section "+h.Text)
		}
	}
	return out
}

// signList names up to 6 signs, sorted.
func signList(set map[string]bool) string {
	list := sortedKeys(set)
	if len(list) > 6 {
		list = append(list[:6], "…")
	}
	return strings.Join(list, ", ")
}

// profileSampleNotes lists the notes to read for detection, at most
// profileSample: templates, the knowledge index, maps of content (by
// path), the newest daily notes, then the other notes by path (those of
// 02-wiki and 03-projects first). It looks at each indexed path once,
// keeping only the first few of each kind: no sort of the whole vault.
func (s *Service) profileSampleNotes(notes iter.Seq[string]) []string {
	var out []string
	for _, name := range templateNames {
		p := "_templates/" + name + ".md"
		if _, err := s.fs.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	const kinds = 4 // maps of content, daily notes, wiki and projects, others
	var firsts [kinds]firstPaths
	limits := [kinds]int{16, 16, profileSample, profileSample}
	hasIndex := false
	for p := range notes {
		switch {
		case p == knowledgeIndex:
			hasIndex = true
		case domainOf(p) != "" && strings.HasSuffix(p, "-moc.md"):
			firsts[0].keep(p, limits[0], false)
		case vpath.Below(p, dailyFolder):
			firsts[1].keep(p, limits[1], true) // the newest: last by name
		case vpath.Below(p, wikiFolder) || vpath.Below(p, projectsFolder):
			firsts[2].keep(p, limits[2], false)
		default:
			firsts[3].keep(p, limits[3], false)
		}
	}
	if hasIndex {
		out = append(out, knowledgeIndex)
	}
	for k := range firsts {
		out = append(out, firsts[k].paths...)
	}
	return out[:min(len(out), profileSample)]
}

// firstPaths keeps the n first paths by name (or the n last, with last)
// of those it is given, the preferred first.
type firstPaths struct{ paths []string }

func (h *firstPaths) keep(p string, n int, last bool) {
	before := func(a, b string) bool { return a < b != last } // a is preferred to b
	if len(h.paths) == n {
		// The least preferred is at the end: replace it if p is better.
		if !before(p, h.paths[n-1]) {
			return
		}
		h.paths = h.paths[:n-1]
	}
	i := sort.Search(len(h.paths), func(i int) bool { return before(p, h.paths[i]) })
	h.paths = slices.Insert(h.paths, i, p)
}

// synonyms of each frontmatter key in the other profile.
var keySynonyms = map[string][]string{
	"type": {"tipo"}, "tipo": {"type"},
	"created": {"criado"}, "criado": {"created"},
	"updated": {"atualizado"}, "atualizado": {"updated"},
}

// hasKey reports whether fm has key in either spelling (case-insensitive).
func hasKey(fm map[string]any, key string) bool {
	for k := range fm {
		if sameKey(k, key) {
			return true
		}
	}
	return false
}

// setKey sets key, replacing an existing spelling of it (either profile).
func setKey(fm map[string]any, key string, v any) {
	for k := range fm {
		if strings.EqualFold(k, key) {
			fm[k] = v
			return
		}
		for _, syn := range keySynonyms[key] {
			if strings.EqualFold(k, syn) {
				fm[k] = v
				return
			}
		}
	}
	fm[key] = v
}

// keyOrder puts the well-known keys first, in this order; others follow
// alphabetically.
var keyOrder = map[string]int{
	"title": 0, "aliases": 1, "type": 2, "tipo": 2, "tags": 3, "status": 4,
	"created": 5, "criado": 5, "updated": 6, "atualizado": 6,
}

// renderFrontmatter writes fm as a YAML block between --- lines, keys in a
// stable, readable order.
func renderFrontmatter(fm map[string]any) (string, error) {
	node := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range sortedKeysOf(fm) {
		val, err := valueNode(k, fm[k])
		if err != nil {
			return "", err
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, val)
	}
	return encodeFrontmatter(node)
}

// sortedKeysOf lists the keys of fm in a stable, readable order: the
// well-known keys first (keyOrder), the others alphabetically.
func sortedKeysOf(fm map[string]any) []string {
	keys := make([]string, 0, len(fm))
	for k := range fm {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		oi, iok := keyOrder[strings.ToLower(keys[i])]
		oj, jok := keyOrder[strings.ToLower(keys[j])]
		switch {
		case iok && jok && oi != oj:
			return oi < oj
		case iok != jok:
			return iok
		}
		return keys[i] < keys[j]
	})
	return keys
}

// valueNode is the YAML node renderFrontmatter writes for the value v of
// key k.
func valueNode(k string, v any) (*yaml.Node, error) {
	var val yaml.Node
	if str, ok := v.(string); ok && isoDate().MatchString(str) {
		// A date stays a plain YAML date (created: 2026-11-29), as
		// Obsidian writes it, not a quoted string.
		val = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!timestamp", Value: str}
	} else if err := val.Encode(v); err != nil {
		return nil, fmt.Errorf("frontmatter key %q: %w", k, err)
	}
	if seq, ok := v.([]any); ok && len(seq) <= 8 && allScalars(seq) {
		val.Style = yaml.FlowStyle
	}
	if seq, ok := v.([]string); ok && len(seq) <= 8 {
		val.Style = yaml.FlowStyle
	}
	return &val, nil
}

// sameKey reports whether the frontmatter key k is key in either profile's
// spelling (case-insensitive), as hasKey and setKey match them.
func sameKey(k, key string) bool {
	if strings.EqualFold(k, key) {
		return true
	}
	for _, syn := range keySynonyms[key] {
		if strings.EqualFold(k, syn) {
			return true
		}
	}
	return false
}

// keyValue is one frontmatter key and its value.
type keyValue struct {
	key, as string // as: the spelling written when the key is missing
	value   any
}

// mergeFrontmatter sets the keys of set in block, a note's own frontmatter
// (valid YAML, as markdown.SplitFrontmatter returns it), and adds those of
// defaults it has in neither spelling, at its end. Everything else stays
// as its author wrote it: the order of the keys, comments, and the spelling
// of every value. Decoding the block into a map and rendering that would
// rewrite the values as YAML reads them: an identifier 0012 would become the
// number 10 (YAML 1.1 octal), a version 1.10 would become 1.1.
//
// With respell, a key of set found in the other profile's spelling takes
// set's (a template's type: becomes tipo: in a Portuguese vault).
func mergeFrontmatter(block string, set map[string]any, defaults []keyValue, respell bool) (string, error) {
	inner, _ := markdown.FrontmatterContent(block)
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(inner), &doc); err != nil {
		return "", err
	}
	node := &yaml.Node{Kind: yaml.MappingNode}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		node = doc.Content[0]
	}
	find := func(key string) int {
		for i := 0; i+1 < len(node.Content); i += 2 {
			if sameKey(node.Content[i].Value, key) {
				return i
			}
		}
		return -1
	}
	for _, k := range sortedKeysOf(set) { // new keys in renderFrontmatter's order
		val, err := valueNode(k, set[k])
		if err != nil {
			return "", err
		}
		if i := find(k); i >= 0 {
			node.Content[i+1] = val
			if respell {
				node.Content[i].Value = k
			}
			continue
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, val)
	}
	for _, d := range defaults {
		if find(d.key) >= 0 {
			continue
		}
		val, err := valueNode(d.as, d.value)
		if err != nil {
			return "", err
		}
		node.Content = append(node.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: d.as}, val)
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc.Content[0] = node
		return encodeFrontmatter(&doc)
	}
	return encodeFrontmatter(node)
}

// encodeFrontmatter writes node as a YAML block between --- lines.
func encodeFrontmatter(node *yaml.Node) (string, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return "", err
	}
	enc.Close()
	return "---\n" + buf.String() + "---\n", nil
}

// Compiled on first use: a process start does not pay for it.
var isoDate = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`) })

func allScalars(seq []any) bool {
	for _, v := range seq {
		switch v.(type) {
		case string, int, int64, float64, bool, nil:
		default:
			return false
		}
	}
	return true
}
