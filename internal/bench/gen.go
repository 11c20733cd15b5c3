// Package bench measures vaultmcp: it generates realistic vaults of any size
// and reports cold start, indexing rate, memory, search latency in process and
// over stdio MCP, freshness after an external edit, write and move latency,
// side by side with ripgrep over the same folder. Figures are printed, never
// asserted.
package bench

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
)

// GenOptions configure a generated vault.
type GenOptions struct {
	// Notes is the number of indexed notes to write (the template under
	// _templates/ and the attachments come on top).
	Notes int
	// Seed makes the vault: the same seed and options give the same bytes.
	Seed uint64
	// Vocabulary is the number of distinct words; 0 means 50,000, and less
	// than 10,000 is raised to 10,000.
	Vocabulary int
}

// GenStats describes a generated vault.
type GenStats struct {
	Notes       int   `json:"notes"`
	Domains     int   `json:"domains"`
	MOCs        int   `json:"mocs"`
	Attachments int   `json:"attachments"`
	Links       int   `json:"links"`        // wiki-links, markdown links and embeds written
	BrokenLinks int   `json:"broken_links"` // of which point at no note on purpose
	Bytes       int64 `json:"bytes"`        // of the notes
}

// Note kinds of the numbered layout (DESIGN.md section 2).
type kind uint8

const (
	kindWiki kind = iota
	kindMOC
	kindIndex
	kindRaw
	kindProject
	kindDaily
	kindArchive
)

// spec is one planned note.
type spec struct {
	path   string // vault-relative, with .md
	name   string // file name without .md: what a bare [[link]] says
	title  string
	kind   kind
	domain int
}

// plan is the whole vault before any byte is written.
type plan struct {
	seed      uint64
	vocab     vocabulary
	notes     []spec
	domains   []string
	topics    [][]int // per domain: vocabulary ranks frequent in that domain
	members   [][]int // per domain: notes of the domain
	mocOf     []int   // per domain: index of its MOC
	popular   []int   // notes by link popularity, most popular first
	attach    []string
	tags      []string
	wordS     float64 // Zipf exponent of words
	linkQ     float64 // Zipf-Mandelbrot offset of link targets
	startDate time.Time
}

// Generate writes a vault into dir (which must be empty or absent) and
// returns what it holds. The layout is the numbered one: 00-index,
// 01-raw, 02-wiki/<domain>/ with a MOC per domain, 03-projects, 04-daily,
// 99-archive, _templates and assets/ for embedded images.
func Generate(ctx context.Context, dir string, opts GenOptions) (GenStats, error) {
	if opts.Notes < 1 {
		return GenStats{}, fmt.Errorf("generate: %d notes: need at least 1", opts.Notes)
	}
	if opts.Vocabulary <= 0 {
		opts.Vocabulary = 50000
	}
	opts.Vocabulary = max(opts.Vocabulary, 10000)
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return GenStats{}, fmt.Errorf("generate: %s is not empty", dir)
	}
	p := newPlan(opts)
	dirs := map[string]bool{"_templates": true, "assets": true}
	for _, n := range p.notes {
		dirs[path.Dir(n.path)] = true
	}
	for d := range dirs {
		if err := os.MkdirAll(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return GenStats{}, fmt.Errorf("generate: %w", err)
		}
	}
	tmpl := "---\ntype: wiki\ntags: []\ncreated: {{date}}\n---\n# {{title}}\n\n## Context\n\n## Links\n"
	if err := os.WriteFile(filepath.Join(dir, "_templates", "wiki.md"), []byte(tmpl), 0o644); err != nil {
		return GenStats{}, fmt.Errorf("generate: %w", err)
	}
	for i, a := range p.attach {
		// A tiny PNG-looking file: attachments only need to exist for embeds to resolve.
		data := append([]byte("\x89PNG\r\n\x1a\n"), fmt.Sprintf("bench attachment %d", i)...)
		if err := os.WriteFile(filepath.Join(dir, "assets", a), data, 0o644); err != nil {
			return GenStats{}, fmt.Errorf("generate: %w", err)
		}
	}
	st := GenStats{Notes: len(p.notes), Domains: len(p.domains), MOCs: len(p.domains), Attachments: len(p.attach)}
	var mu sync.Mutex
	var firstErr error
	var wg sync.WaitGroup
	next := make(chan int, 64)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local GenStats
			var b strings.Builder
			for i := range next {
				b.Reset()
				links, broken := p.write(&b, i)
				err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(p.notes[i].path)), []byte(b.String()), 0o644)
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("generate: %w", err)
					}
					mu.Unlock()
					continue
				}
				local.Links += links
				local.BrokenLinks += broken
				local.Bytes += int64(b.Len())
			}
			mu.Lock()
			st.Links += local.Links
			st.BrokenLinks += local.BrokenLinks
			st.Bytes += local.Bytes
			mu.Unlock()
		}()
	}
	for i := range p.notes {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return st, firstErr
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	return st, nil
}

// domainNames are used first for domains; generated words follow.
var domainNames = strings.Fields(`golang postgres kubernetes networking security frontend observability testing
python rust databases devops git linux performance architecture api-design messaging storage auth ci-cd
tooling editors obsidian writing productivity mobile cloud terraform docker caching search`)

func newPlan(opts GenOptions) *plan {
	r := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	n := opts.Notes
	p := &plan{
		seed:      opts.Seed,
		vocab:     newVocabulary(r, opts.Vocabulary),
		wordS:     1.07,
		linkQ:     math.Max(4, float64(n)/500),
		startDate: time.Date(2021, 1, 4, 0, 0, 0, 0, time.UTC),
	}
	nd := min(max(n/600, 4), 400)
	if n < 40 {
		nd = max(1, n/10)
	}
	seenDomain := map[string]bool{}
	for i := 0; len(p.domains) < nd; i++ {
		var d string
		if i < len(domainNames) {
			d = domainNames[i]
		} else {
			d = p.vocab[300+r.IntN(len(p.vocab)-300)]
		}
		if !seenDomain[d] {
			seenDomain[d] = true
			p.domains = append(p.domains, d)
		}
	}
	// Each domain has its own frequent words: that is what makes a term's
	// document frequency uneven across the vault, as in real notes.
	p.topics = make([][]int, nd)
	for d := range p.topics {
		t := make([]int, 150)
		for i := range t {
			t[i] = 150 + r.IntN(min(8000, len(p.vocab)-150))
		}
		p.topics[d] = t
	}
	for i := 0; i < 300; i++ {
		p.tags = append(p.tags, p.vocab[120+r.IntN(min(5000, len(p.vocab)-120))])
	}
	for i := 0; i < max(1, n/100); i++ {
		p.attach = append(p.attach, fmt.Sprintf("img-%04d.png", i))
	}

	// How many notes of each kind: one index, one MOC a domain, then daily,
	// project, raw and archived notes in fixed shares; the rest is wiki.
	counts := map[kind]int{kindIndex: 1, kindMOC: nd}
	rest := n - 1 - nd
	if rest < 0 {
		// A very small vault: just the index and as many MOCs as fit.
		counts[kindMOC] = max(0, n-1)
		rest = 0
	}
	counts[kindDaily] = rest * 8 / 100
	counts[kindProject] = rest * 7 / 100
	counts[kindRaw] = rest * 5 / 100
	counts[kindArchive] = rest * 5 / 100
	counts[kindWiki] = rest - counts[kindDaily] - counts[kindProject] - counts[kindRaw] - counts[kindArchive]

	// Domain sizes follow a gentle power law: a few big domains, many small.
	weights := make([]float64, nd)
	total := 0.0
	for d := range weights {
		weights[d] = 1 / math.Pow(float64(d+3), 0.7)
		total += weights[d]
	}
	pickDomain := func() int {
		x := r.Float64() * total
		for d, w := range weights {
			if x < w {
				return d
			}
			x -= w
		}
		return nd - 1
	}
	used := make(map[string]bool, n)
	uniqueName := func(base string) string {
		name := base
		for k := 2; used[strings.ToLower(name)]; k++ {
			name = fmt.Sprintf("%s-%d", base, k)
		}
		used[strings.ToLower(name)] = true
		return name
	}
	add := func(s spec) { p.notes = append(p.notes, s) }
	add(spec{path: "00-index/index-knowledge.md", name: uniqueName("index-knowledge"), title: "Knowledge index", kind: kindIndex, domain: -1})
	p.mocOf = make([]int, nd)
	for d := range p.mocOf {
		p.mocOf[d] = -1
	}
	for d := 0; d < counts[kindMOC]; d++ {
		name := uniqueName(p.domains[d] + "-moc")
		p.mocOf[d] = len(p.notes)
		add(spec{path: "02-wiki/" + p.domains[d] + "/" + name + ".md", name: name, title: titleCase(p.domains[d]) + " map", kind: kindMOC, domain: d})
	}
	day := 0
	for _, k := range []kind{kindWiki, kindProject, kindRaw, kindArchive, kindDaily} {
		for i := 0; i < counts[k]; i++ {
			if k == kindDaily {
				date := p.startDate.AddDate(0, 0, day).Format("2006-01-02")
				day++
				add(spec{path: "04-daily/" + date + ".md", name: uniqueName(date), title: date, kind: kindDaily, domain: -1})
				continue
			}
			d := pickDomain()
			title := p.title(r, d)
			name := uniqueName(slug(title))
			var dir string
			switch k {
			case kindWiki:
				dir = "02-wiki/" + p.domains[d]
			case kindProject:
				dir = "03-projects"
			case kindRaw:
				dir = "01-raw"
			case kindArchive:
				dir = "99-archive/" + p.domains[d]
			}
			add(spec{path: dir + "/" + name + ".md", name: name, title: title, kind: k, domain: d})
		}
	}
	p.members = make([][]int, nd)
	for i, s := range p.notes {
		if s.domain >= 0 && s.kind != kindMOC {
			p.members[s.domain] = append(p.members[s.domain], i)
		}
	}
	// Link popularity: a random order of the notes; targets are drawn with
	// a Zipf-Mandelbrot law over it, so a few notes get hundreds of links.
	p.popular = r.Perm(len(p.notes))
	return p
}

func (p *plan) title(r *rand.Rand, d int) string {
	n := 2 + r.IntN(4)
	words := make([]string, n)
	for i := range words {
		if r.IntN(2) == 0 {
			words[i] = p.vocab[p.topics[d][r.IntN(len(p.topics[d]))]]
		} else {
			words[i] = p.vocab[120+r.IntN(min(3000, len(p.vocab)-120))]
		}
	}
	return titleCase(strings.Join(words, " "))
}

func titleCase(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(c)
			dash = false
		} else {
			dash = true
		}
	}
	if b.Len() == 0 {
		return "note"
	}
	return b.String()
}

// noteWriter writes one note with its own random stream, so notes can be
// written in parallel and still be the same for a seed.
type noteWriter struct {
	p      *plan
	i      int
	r      *rand.Rand
	words  *rand.Zipf
	links  *rand.Zipf
	b      *strings.Builder
	nLinks int
	broken int
	heads  []string
}

func (p *plan) write(b *strings.Builder, i int) (links, broken int) {
	r := rand.New(rand.NewPCG(p.seed, uint64(i)+1))
	w := &noteWriter{
		p:     p,
		i:     i,
		r:     r,
		words: rand.NewZipf(r, p.wordS, 2.7, uint64(len(p.vocab)-1)),
		links: rand.NewZipf(r, 1.05, p.linkQ, uint64(len(p.notes)-1)),
		b:     b,
	}
	s := p.notes[i]
	switch s.kind {
	case kindIndex:
		w.index()
	case kindMOC:
		w.moc()
	case kindDaily:
		w.daily()
	default:
		w.body()
	}
	return w.nLinks, w.broken
}

var statuses = []string{"draft", "active", "active", "evergreen", "done", "review"}

func (w *noteWriter) frontmatter(typ string, tags []string, status string) {
	s := w.p.notes[w.i]
	created := w.p.startDate.AddDate(0, 0, w.r.IntN(1500)).Format("2006-01-02")
	if s.kind == kindDaily {
		created = s.name
	}
	fmt.Fprintf(w.b, "---\ntype: %s\ntags: [%s]\n", typ, strings.Join(tags, ", "))
	if status != "" {
		fmt.Fprintf(w.b, "status: %s\n", status)
	}
	fmt.Fprintf(w.b, "created: %s\n", created)
	if w.r.IntN(10) == 0 && s.kind == kindWiki {
		fmt.Fprintf(w.b, "aliases: [%s]\n", titleCase(w.word()))
	}
	w.b.WriteString("---\n")
}

func (w *noteWriter) index() {
	w.frontmatter("moc", []string{"index"}, "active")
	w.b.WriteString("# Knowledge index\n\nOne line per domain, each pointing at the domain's map of content.\n\n## Domains\n\n")
	for d, m := range w.p.mocOf {
		if m < 0 {
			continue
		}
		fmt.Fprintf(w.b, "- [[%s]] — %s\n", w.p.notes[m].name, titleCase(w.p.domains[d]))
		w.nLinks++
	}
}

// moc lists the domain's notes (up to 600 of them: the big MOCs carry
// hundreds of links) under a few sections.
func (w *noteWriter) moc() {
	s := w.p.notes[w.i]
	w.frontmatter("moc", []string{w.p.domains[s.domain], "moc"}, "active")
	fmt.Fprintf(w.b, "# %s\n\n", s.title)
	w.paragraph(20 + w.r.IntN(40))
	members := w.p.members[s.domain]
	if len(members) > 600 {
		members = members[:600]
	}
	w.b.WriteString("## Notes\n\n")
	for k, m := range members {
		if k > 0 && k%60 == 0 {
			fmt.Fprintf(w.b, "\n### %s\n\n", titleCase(w.topicWord(s.domain)+" "+w.word()))
		}
		t := w.p.notes[m]
		fmt.Fprintf(w.b, "- [[%s]] — %s\n", t.name, w.summary())
		w.nLinks++
	}
}

func (w *noteWriter) summary() string {
	n := 4 + w.r.IntN(8)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = w.word()
	}
	return titleCase(strings.Join(parts, " ")) + "."
}

func (w *noteWriter) daily() {
	s := w.p.notes[w.i]
	w.frontmatter("daily", []string{"daily"}, "")
	fmt.Fprintf(w.b, "# %s\n\n## Captures\n\n", s.name)
	for k := 0; k < 2+w.r.IntN(7); k++ {
		kinds := []string{"learning", "gotcha", "pattern", "decision", "state"}
		fmt.Fprintf(w.b, "- %02d:%02d %s (%s)\n", 8+w.r.IntN(11), w.r.IntN(60), w.link(), kinds[w.r.IntN(len(kinds))])
	}
	w.b.WriteString("\n## Log\n\n")
	for k := 0; k < 1+w.r.IntN(4); k++ {
		w.paragraph(20 + w.r.IntN(80))
	}
}

// noteSize draws a target size: lognormal around 2 KB (most notes 1-4 KB),
// and one note in 25 a long one of 8-50 KB.
func (w *noteWriter) noteSize() int {
	if w.r.IntN(25) == 0 {
		return int(math.Exp(math.Log(8000) + w.r.Float64()*(math.Log(50000)-math.Log(8000))))
	}
	size := math.Exp(math.Log(1700) + 0.55*w.r.NormFloat64())
	return int(min(max(size, 300), 50000))
}

func (w *noteWriter) body() {
	s := w.p.notes[w.i]
	typ := map[kind]string{kindWiki: "wiki", kindProject: "project", kindRaw: "note", kindArchive: "wiki"}[s.kind]
	status := statuses[w.r.IntN(len(statuses))]
	if s.kind == kindRaw {
		status = "inbox"
	}
	if s.kind == kindArchive {
		status = "archived"
	}
	tags := []string{w.p.domains[s.domain]}
	for k := 0; k < w.r.IntN(4); k++ {
		t := w.p.tags[int(w.words.Uint64())%len(w.p.tags)]
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	w.frontmatter(typ, tags, status)
	target := w.noteSize()
	start := w.b.Len()
	fmt.Fprintf(w.b, "# %s\n\n", s.title)
	w.paragraph(30 + w.r.IntN(60))
	for w.b.Len()-start < target {
		level := "##"
		if len(w.heads) > 0 && w.r.IntN(3) == 0 {
			level = "###"
		}
		h := titleCase(w.topicWord(s.domain) + " " + w.word())
		if w.r.IntN(2) == 0 {
			h += " " + w.word()
		}
		w.heads = append(w.heads, h)
		fmt.Fprintf(w.b, "%s %s\n\n", level, h)
		for k := 0; k < 1+w.r.IntN(3); k++ {
			w.paragraph(40 + w.r.IntN(90))
		}
		switch x := w.r.IntN(20); {
		case x < 5:
			w.code()
		case x < 8:
			w.list()
		case x < 9:
			w.embed()
		}
	}
	if m := w.p.mocOf[s.domain]; m >= 0 && w.r.IntN(10) == 0 {
		fmt.Fprintf(w.b, "Up: [[%s]]\n", w.p.notes[m].name)
		w.nLinks++
	}
}

func (w *noteWriter) word() string { return w.p.vocab[w.words.Uint64()] }

func (w *noteWriter) topicWord(d int) string {
	t := w.p.topics[d]
	return w.p.vocab[t[w.r.IntN(len(t))]]
}

// paragraph writes about n words in sentences, with links (about one in
// 60 words), an inline tag now and then, and inline code.
func (w *noteWriter) paragraph(n int) {
	s := w.p.notes[w.i]
	sentence := 0
	for k := 0; k < n; k++ {
		if k > 0 {
			w.b.WriteByte(' ')
		}
		var word string
		switch {
		case w.r.IntN(60) == 0:
			w.b.WriteString(w.link())
			continue
		case w.r.IntN(150) == 0:
			word = "`" + w.word() + "()`"
		case s.domain >= 0 && w.r.IntN(4) == 0:
			word = w.topicWord(s.domain)
		default:
			word = w.word()
		}
		if sentence == 0 {
			word = titleCase(word)
		}
		w.b.WriteString(word)
		sentence++
		if sentence > 6 && w.r.IntN(10) == 0 || k == n-1 {
			w.b.WriteByte('.')
			sentence = 0
		} else if w.r.IntN(25) == 0 {
			w.b.WriteByte(',')
		}
	}
	if w.r.IntN(8) == 0 {
		fmt.Fprintf(w.b, " #%s", w.p.tags[w.r.IntN(len(w.p.tags))])
	}
	w.b.WriteString("\n\n")
}

// link writes a link to another note: a popular one (Zipf-Mandelbrot over
// the popularity order) or one of the same domain; mostly bare wiki-links,
// some with an alias or a heading, some markdown links, a few broken.
func (w *noteWriter) link() string {
	w.nLinks++
	s := w.p.notes[w.i]
	if w.r.IntN(40) == 0 {
		w.broken++
		return "[[" + slug(w.word()+" "+w.word()+" missing") + "]]"
	}
	var t int
	if s.domain >= 0 && len(w.p.members[s.domain]) > 1 && w.r.IntN(5) < 2 {
		m := w.p.members[s.domain]
		t = m[w.r.IntN(len(m))]
	} else {
		t = w.p.popular[w.links.Uint64()]
	}
	if t == w.i {
		t = w.p.popular[(w.i+1)%len(w.p.popular)]
	}
	target := w.p.notes[t]
	switch x := w.r.IntN(100); {
	case x < 10:
		return fmt.Sprintf("[[%s|%s]]", target.name, strings.ToLower(target.title))
	case x < 16:
		return fmt.Sprintf("[[%s#%s]]", target.name, target.title)
	case x < 21:
		return fmt.Sprintf("[%s](%s)", strings.ToLower(target.title), relPath(path.Dir(s.path), target.path))
	default:
		return "[[" + target.name + "]]"
	}
}

// relPath is the path of target relative to the folder from.
func relPath(from, target string) string {
	if from == "." {
		return target
	}
	fs := strings.Split(from, "/")
	ts := strings.Split(target, "/")
	i := 0
	for i < len(fs) && i < len(ts)-1 && fs[i] == ts[i] {
		i++
	}
	return strings.Repeat("../", len(fs)-i) + strings.Join(ts[i:], "/")
}

var langs = []string{"go", "python", "bash", "sql", "yaml", "typescript"}

func (w *noteWriter) code() {
	lang := langs[w.r.IntN(len(langs))]
	fmt.Fprintf(w.b, "```%s\n", lang)
	for k := 0; k < 3+w.r.IntN(13); k++ {
		ident := w.word() + titleCase(w.word())
		switch w.r.IntN(4) {
		case 0:
			fmt.Fprintf(w.b, "func %s(ctx context.Context, %s string) error {\n", ident, w.word())
		case 1:
			fmt.Fprintf(w.b, "\t%s := %s.%s(%d)\n", w.word(), w.word(), titleCase(ident), w.r.IntN(1000))
		case 2:
			fmt.Fprintf(w.b, "# %s %s %s [[not-a-link]]\n", w.word(), w.word(), w.word())
		default:
			fmt.Fprintf(w.b, "\treturn %s(%s)\n", ident, w.word())
		}
	}
	w.b.WriteString("```\n\n")
}

func (w *noteWriter) list() {
	for k := 0; k < 2+w.r.IntN(5); k++ {
		w.b.WriteString("- ")
		if w.r.IntN(3) == 0 {
			w.b.WriteString(w.link() + " ")
		}
		w.b.WriteString(w.summary())
		w.b.WriteByte('\n')
	}
	w.b.WriteByte('\n')
}

func (w *noteWriter) embed() {
	w.nLinks++
	if w.r.IntN(2) == 0 {
		fmt.Fprintf(w.b, "![[%s]]\n\n", w.p.attach[w.r.IntN(len(w.p.attach))])
		return
	}
	t := w.p.popular[w.links.Uint64()]
	if t == w.i {
		t = w.p.popular[(w.i+1)%len(w.p.popular)]
	}
	fmt.Fprintf(w.b, "![[%s]]\n\n", w.p.notes[t].name)
}
