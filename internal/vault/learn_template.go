package vault

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Templates. A new note made from _templates/wiki.md (and a new daily note
// from _templates/daily.md) has its template's expressions filled the way
// Obsidian fills them when a person creates the note:
//
//   - the core Templates plugin's placeholders: {{title}}, {{date}} and
//     {{time}}, the last two with a Moment.js format after a colon
//     ({{date:YYYY-MM-DD}}, {{time:HH:mm}}); names are matched without
//     regard to case;
//   - the Templater plugin's commands (<% ... %>) that name the note or the
//     clock: tp.file.title, tp.date.now(format, offset, reference,
//     reference_format) with an offset in days or as an ISO 8601 duration
//     ("P-1M"), tp.date.tomorrow, tp.date.yesterday, tp.date.weekday,
//     tp.file.creation_date and tp.file.last_modified_date (the note is new:
//     both are now), tp.file.folder, tp.file.path(true) (vault-relative),
//     tp.file.cursor (nothing), and moment().format(...); the whitespace
//     controls <%_ _%> (all white space) and <%- -%> (one line break) are
//     applied.
//
// The title is the learning's title (the note's file name is its slug, so
// tp.file.title gives the title the person wrote, not the slug). An
// expression that cannot be evaluated here (a JavaScript command <%* %>, a
// function of another module, a prompt, a malformed call) is removed, and
// the caller warns with the list of what was removed: template syntax is
// never left in a note's frontmatter or title. An unknown {{name}} is kept
// in the body, as Obsidian keeps it, but removed from the frontmatter and
// from heading lines. Month and day names follow the profile language.

// templateVars are what a template's expressions can name.
type templateVars struct {
	title string    // the note's title
	path  string    // the new note's vault path
	now   time.Time // the clock; the note is created now
	lang  string    // "en" or "pt": names of months and days
}

// maxDroppedShown bounds the expressions a warning lists.
const maxDroppedShown = 5

// corePlaceholder is a core Templates placeholder at the start of a string.
//
// (Compiled on first use: a process start does not pay for it.)
var corePlaceholder = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\{\{\s*([A-Za-z][A-Za-z0-9_-]*)\s*(?::([^}\n]*))?\}\}`)
})

// fill fills the expressions of text. frontmatter says text is a
// frontmatter block (an unknown {{name}} is removed there); quoteTitle
// writes the title as a YAML double-quoted string, for a frontmatter whose
// plain value the title would break. It returns the text and the
// expressions removed because they could not be evaluated.
func (v templateVars) fill(text string, frontmatter, quoteTitle bool) (string, []string) {
	var out strings.Builder
	var dropped []string
	title := v.title
	if quoteTitle {
		title = strconv.Quote(v.title)
	}
	for i := 0; i < len(text); {
		j := indexEither(text[i:], "{{", "<%")
		if j < 0 {
			out.WriteString(text[i:])
			break
		}
		out.WriteString(text[i : i+j])
		i += j
		if strings.HasPrefix(text[i:], "{{") {
			m := corePlaceholder().FindStringSubmatch(text[i:])
			if m == nil {
				out.WriteString("{{")
				i += 2
				continue
			}
			i += len(m[0])
			format := strings.TrimSpace(m[2])
			switch strings.ToLower(m[1]) {
			case "title":
				out.WriteString(title)
			case "date":
				out.WriteString(momentFormat(v.now, orDefault(format, "YYYY-MM-DD"), v.lang))
			case "time":
				out.WriteString(momentFormat(v.now, orDefault(format, "HH:mm"), v.lang))
			default:
				if frontmatter || onHeadingLine(out.String()) {
					dropped = append(dropped, m[0])
				} else {
					out.WriteString(m[0])
				}
			}
			continue
		}
		// A Templater command: <% expr %>, with markers after "<%" (* runs
		// JavaScript, + is dynamic, _ and - trim white space before) and
		// before "%>" (_ and - trim after).
		end := strings.Index(text[i+2:], "%>")
		if end < 0 {
			// Unclosed: Templater refuses the template; drop the rest of
			// the line.
			nl := strings.IndexByte(text[i:], '\n')
			if nl < 0 {
				nl = len(text) - i
			}
			dropped = append(dropped, text[i:i+nl])
			i += nl
			continue
		}
		raw := text[i : i+2+end+2]
		inner := text[i+2 : i+2+end]
		i += len(raw)
		exec := false
		for k := 0; k < 2 && inner != ""; k++ {
			switch inner[0] {
			case '_':
				trimmed := strings.TrimRightFunc(out.String(), unicode.IsSpace)
				out.Reset()
				out.WriteString(trimmed)
			case '-':
				s := out.String()
				if t := strings.TrimRight(s, " \t"); strings.HasSuffix(t, "\n") {
					t = strings.TrimSuffix(strings.TrimSuffix(t, "\n"), "\r")
					out.Reset()
					out.WriteString(t)
				}
			case '*':
				exec = true
			case '+':
			default:
				k = 2
				continue
			}
			inner = inner[1:]
		}
		switch {
		case strings.HasSuffix(inner, "_"):
			inner = inner[:len(inner)-1]
			i += len(text[i:]) - len(strings.TrimLeftFunc(text[i:], unicode.IsSpace))
		case strings.HasSuffix(inner, "-"):
			inner = inner[:len(inner)-1]
			if strings.HasPrefix(text[i:], "\r\n") {
				i += 2
			} else if strings.HasPrefix(text[i:], "\n") {
				i++
			}
		}
		if exec {
			if strings.TrimSpace(inner) != "" {
				dropped = append(dropped, raw)
			}
			continue
		}
		val, ok := v.eval(strings.TrimSpace(inner))
		if !ok {
			dropped = append(dropped, raw)
			continue
		}
		if quoteTitle && val == v.title {
			val = title
		}
		out.WriteString(val)
	}
	return out.String(), dropped
}

// droppedList is the warning's list of removed expressions, each on one
// line and shortened, at most maxDroppedShown of them.
func droppedList(dropped []string) string {
	shown := make([]string, 0, min(len(dropped), maxDroppedShown))
	for _, d := range dropped[:min(len(dropped), maxDroppedShown)] {
		d = strings.Join(strings.Fields(d), " ")
		if utf8.RuneCountInString(d) > 60 {
			d = cutRunes(d, 59) + "…"
		}
		shown = append(shown, d)
	}
	list := strings.Join(shown, ", ")
	if n := len(dropped) - len(shown); n > 0 {
		list += " and " + strconv.Itoa(n) + " more"
	}
	return list
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// indexEither is the index of the first of a or b in s, or -1.
func indexEither(s, a, b string) int {
	i, j := strings.Index(s, a), strings.Index(s, b)
	switch {
	case i < 0:
		return j
	case j < 0 || i < j:
		return i
	}
	return j
}

// onHeadingLine reports whether the text written so far ends inside a
// heading line ("#" first on the line).
func onHeadingLine(written string) bool {
	line := written[strings.LastIndexByte(written, '\n')+1:]
	return strings.HasPrefix(strings.TrimLeft(line, " \t"), "#")
}

// eval evaluates one Templater expression; false when it is not one of
// those understood, or its arguments are not.
func (v templateVars) eval(expr string) (string, bool) {
	p := &exprParser{src: expr}
	val, ok := p.value(v)
	p.space()
	if !ok || p.pos != len(p.src) {
		return "", false
	}
	s, ok := val.(string)
	if !ok {
		if f, isNum := val.(float64); isNum {
			return strconv.FormatFloat(f, 'f', -1, 64), true
		}
		return "", false
	}
	return s, true
}

// exprParser reads the small part of JavaScript Templater expressions use:
// dotted names, calls, string, number and boolean literals.
type exprParser struct {
	src string
	pos int
}

func (p *exprParser) space() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\n' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *exprParser) eat(c byte) bool {
	p.space()
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// name reads a dotted name (tp.date.now).
func (p *exprParser) name() string {
	p.space()
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '_' || c == '$' || c == '.' && p.pos > start || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' && p.pos > start {
			p.pos++
			continue
		}
		break
	}
	return p.src[start:p.pos]
}

// literal reads a string, number or boolean literal.
func (p *exprParser) literal() (any, bool) {
	p.space()
	if p.pos >= len(p.src) {
		return nil, false
	}
	switch c := p.src[p.pos]; {
	case c == '"' || c == '\'' || c == '`':
		var b strings.Builder
		for i := p.pos + 1; i < len(p.src); i++ {
			switch p.src[i] {
			case c:
				p.pos = i + 1
				return b.String(), true
			case '\\':
				if i+1 >= len(p.src) {
					return nil, false
				}
				i++
				switch p.src[i] {
				case 'n':
					b.WriteByte('\n')
				case 't':
					b.WriteByte('\t')
				default:
					b.WriteByte(p.src[i])
				}
			case '$':
				if c == '`' && i+1 < len(p.src) && p.src[i+1] == '{' {
					return nil, false // a template literal's ${...}
				}
				b.WriteByte('$')
			default:
				b.WriteByte(p.src[i])
			}
		}
		return nil, false
	case c == '-' || c == '+' || c == '.' || '0' <= c && c <= '9':
		start := p.pos
		p.pos++
		for p.pos < len(p.src) && (p.src[p.pos] == '.' || '0' <= p.src[p.pos] && p.src[p.pos] <= '9') {
			p.pos++
		}
		f, err := strconv.ParseFloat(p.src[start:p.pos], 64)
		return f, err == nil
	}
	return nil, false
}

// value reads and evaluates one expression: a literal, a name, or a call,
// with .format(...) chained on moment().
func (p *exprParser) value(v templateVars) (any, bool) {
	if lit, ok := p.literal(); ok {
		return lit, true
	}
	name := p.name()
	switch name {
	case "":
		return nil, false
	case "true", "false":
		return name == "true", true
	case "tp.file.title":
		return v.title, true
	}
	if !p.eat('(') {
		return nil, false
	}
	var args []any
	if !p.eat(')') {
		for {
			a, ok := p.value(v)
			if !ok {
				return nil, false
			}
			args = append(args, a)
			if p.eat(')') {
				break
			}
			if !p.eat(',') {
				return nil, false
			}
		}
	}
	if name == "moment" {
		if len(args) > 0 {
			return nil, false
		}
		if !p.eat('.') || p.name() != "format" || !p.eat('(') {
			return nil, false
		}
		format := "YYYY-MM-DDTHH:mm:ssZ"
		if !p.eat(')') {
			f, ok := p.value(v)
			s, isStr := f.(string)
			if !ok || !isStr || !p.eat(')') {
				return nil, false
			}
			format = s
		}
		return momentFormat(v.now, format, v.lang), true
	}
	return v.call(name, args)
}

// call evaluates one Templater function.
func (v templateVars) call(name string, args []any) (any, bool) {
	str := func(i int, def string) (string, bool) {
		if i >= len(args) || args[i] == nil {
			return def, true
		}
		s, ok := args[i].(string)
		return s, ok
	}
	format := func(def string) (string, bool) {
		f, ok := str(0, def)
		return orDefault(f, def), ok
	}
	switch name {
	case "tp.date.now":
		f, ok := format("YYYY-MM-DD")
		if !ok || len(args) > 4 {
			return nil, false
		}
		t := v.now
		if len(args) > 2 {
			ref, ok1 := str(2, "")
			refFormat, ok2 := str(3, "")
			if !ok1 || !ok2 {
				return nil, false
			}
			if t, ok = parseMoment(ref, refFormat, v.now.Location()); !ok {
				return nil, false
			}
		}
		if len(args) > 1 {
			if t, ok = offsetBy(t, args[1]); !ok {
				return nil, false
			}
		}
		return momentFormat(t, f, v.lang), true
	case "tp.date.tomorrow", "tp.date.yesterday":
		f, ok := format("YYYY-MM-DD")
		if !ok || len(args) > 1 {
			return nil, false
		}
		days := 1
		if name == "tp.date.yesterday" {
			days = -1
		}
		return momentFormat(v.now.AddDate(0, 0, days), f, v.lang), true
	case "tp.date.weekday":
		f, ok := format("YYYY-MM-DD")
		if !ok || len(args) < 2 || len(args) > 4 {
			return nil, false
		}
		wd, isNum := args[1].(float64)
		if !isNum || wd != math.Trunc(wd) {
			return nil, false
		}
		t := v.now
		if len(args) > 2 {
			ref, ok1 := str(2, "")
			refFormat, ok2 := str(3, "")
			if !ok1 || !ok2 {
				return nil, false
			}
			if t, ok = parseMoment(ref, refFormat, v.now.Location()); !ok {
				return nil, false
			}
		}
		// The locale's week starts on Sunday (en and pt-br): weekday 0 is
		// this week's Sunday, 7 next week's, -7 last week's.
		return momentFormat(t.AddDate(0, 0, int(wd)-int(t.Weekday())), f, v.lang), true
	case "tp.file.creation_date", "tp.file.last_modified_date":
		f, ok := format("YYYY-MM-DD HH:mm")
		if !ok || len(args) > 1 {
			return nil, false
		}
		return momentFormat(v.now, f, v.lang), true
	case "tp.file.cursor":
		return "", len(args) <= 1
	case "tp.file.folder":
		abs := false
		if len(args) > 0 {
			b, ok := args[0].(bool)
			if !ok || len(args) > 1 {
				return nil, false
			}
			abs = b
		}
		dir := ""
		if i := strings.LastIndexByte(v.path, '/'); i >= 0 {
			dir = v.path[:i]
		}
		if !abs {
			dir = dir[strings.LastIndexByte(dir, '/')+1:]
		}
		return dir, v.path != ""
	case "tp.file.path":
		// Only the vault-relative form: the vault's place on the disk is
		// never written anywhere.
		if len(args) != 1 || args[0] != true || v.path == "" {
			return nil, false
		}
		return v.path, true
	}
	return nil, false
}

// offsetBy moves t by a Templater offset: a number of days, or an ISO 8601
// duration such as "P1W", "P-1M" or "PT12H".
func offsetBy(t time.Time, off any) (time.Time, bool) {
	switch o := off.(type) {
	case nil:
		return t, true
	case float64:
		return t.AddDate(0, 0, int(math.Round(o))), true
	case string:
		return addISODuration(t, o)
	}
	return t, false
}

// isoDuration reads an ISO 8601 duration with Moment.js's signs: an
// optional "-" before the P (negating the whole) and before each number.
//
// (Compiled on first use: a process start does not pay for it.)
var isoDuration = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([-+])?P(?:([-+]?\d+)Y)?(?:([-+]?\d+)M)?(?:([-+]?\d+)W)?(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)S)?)?$`)
})

func addISODuration(t time.Time, d string) (time.Time, bool) {
	m := isoDuration().FindStringSubmatch(strings.ToUpper(strings.TrimSpace(d)))
	if m == nil || d == "P" || strings.HasSuffix(strings.ToUpper(d), "T") {
		return t, false
	}
	sign := 1
	if m[1] == "-" {
		sign = -1
	}
	n := make([]int, 8)
	for i := 2; i < len(m); i++ {
		if m[i] != "" {
			x, err := strconv.Atoi(m[i])
			if err != nil {
				return t, false
			}
			n[i-2] = sign * x
		}
	}
	t = t.AddDate(n[0], n[1], 7*n[2]+n[3])
	return t.Add(time.Duration(n[4])*time.Hour + time.Duration(n[5])*time.Minute + time.Duration(n[6])*time.Second), true
}

// parseMoment reads s as a date written in the Moment.js format (numeric
// tokens and literal text only); without a format, as an ISO date
// (YYYY-MM-DD, optionally with THH:mm and :ss).
func parseMoment(s, format string, loc *time.Location) (time.Time, bool) {
	if format == "" {
		for _, layout := range []string{"2006-01-02", "2006-01-02T15:04", "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02 15:04:05"} {
			if t, err := time.ParseInLocation(layout, s, loc); err == nil {
				return t, true
			}
		}
		return time.Time{}, false
	}
	year, month, day, hour, minute, sec := -1, 1, 1, 0, 0, 0
	pos := 0
	digits := func(minN, maxN int) (int, bool) {
		start := pos
		for pos < len(s) && pos-start < maxN && '0' <= s[pos] && s[pos] <= '9' {
			pos++
		}
		if pos-start < minN {
			return 0, false
		}
		n, err := strconv.Atoi(s[start:pos])
		return n, err == nil
	}
	for i := 0; i < len(format); {
		if format[i] == '[' {
			if j := strings.IndexByte(format[i:], ']'); j > 0 {
				lit := format[i+1 : i+j]
				if !strings.HasPrefix(s[pos:], lit) {
					return time.Time{}, false
				}
				pos += len(lit)
				i += j + 1
				continue
			}
		}
		tok := ""
		for _, cand := range []string{"YYYY", "YY", "MM", "M", "DD", "D", "HH", "H", "mm", "m", "ss", "s"} {
			if strings.HasPrefix(format[i:], cand) {
				tok = cand
				break
			}
		}
		if tok == "" {
			if pos >= len(s) || s[pos] != format[i] {
				return time.Time{}, false
			}
			pos++
			i++
			continue
		}
		i += len(tok)
		var n int
		var ok bool
		switch tok {
		case "YYYY":
			n, ok = digits(4, 4)
			year = n
		case "YY":
			n, ok = digits(2, 2)
			year = 2000 + n
			if n > 68 {
				year = 1900 + n
			}
		case "MM", "M":
			month, ok = digits(len(tok), 2)
		case "DD", "D":
			day, ok = digits(len(tok), 2)
		case "HH", "H":
			hour, ok = digits(len(tok), 2)
		case "mm", "m":
			minute, ok = digits(len(tok), 2)
		case "ss", "s":
			sec, ok = digits(len(tok), 2)
		}
		if !ok {
			return time.Time{}, false
		}
	}
	if pos != len(s) || year < 0 || month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, loc)
	if t.Day() != day { // 31 February
		return time.Time{}, false
	}
	return t, true
}

// Names by profile language, as Moment.js's en and pt-br locales spell them.
var (
	monthNames = map[string][12]string{
		"en": {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"},
		"pt": {"janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro", "novembro", "dezembro"},
	}
	monthShort = map[string][12]string{
		"en": {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"},
		"pt": {"jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"},
	}
	dayNames = map[string][7]string{
		"en": {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"},
		"pt": {"domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"},
	}
	dayShort = map[string][7]string{
		"en": {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"},
		"pt": {"dom", "seg", "ter", "qua", "qui", "sex", "sáb"},
	}
	dayMin = map[string][7]string{
		"en": {"Su", "Mo", "Tu", "We", "Th", "Fr", "Sa"},
		"pt": {"do", "2ª", "3ª", "4ª", "5ª", "6ª", "sá"},
	}
	// localeFormats are the long date formats (L, LL, LLL, LLLL, LT, LTS);
	// the lowercase ones are derived from them, as Moment.js does.
	localeFormats = map[string]map[string]string{
		"en": {"LT": "h:mm A", "LTS": "h:mm:ss A", "L": "MM/DD/YYYY", "LL": "MMMM D, YYYY", "LLL": "MMMM D, YYYY h:mm A", "LLLL": "dddd, MMMM D, YYYY h:mm A"},
		"pt": {"LT": "HH:mm", "LTS": "HH:mm:ss", "L": "DD/MM/YYYY", "LL": "D [de] MMMM [de] YYYY", "LLL": "D [de] MMMM [de] YYYY [às] HH:mm", "LLLL": "dddd, D [de] MMMM [de] YYYY [às] HH:mm"},
	}
)

// momentTokens are the Moment.js format tokens understood, longest first
// where one is the start of another.
var momentTokens = []string{
	"LLLL", "llll", "LLL", "lll", "LTS", "LL", "ll", "LT", "L", "l",
	"YYYY", "GGGG", "gggg", "YY", "GG", "gg", "Y",
	"MMMM", "MMM", "MM", "M", "Q",
	"DDDD", "DDD", "Do", "DD", "D",
	"dddd", "ddd", "dd", "d", "E", "e",
	"WW", "W", "ww", "w",
	"HH", "H", "hh", "h", "kk", "k", "mm", "m", "ss", "s", "SSS", "SS", "S",
	"A", "a", "ZZ", "Z", "X", "x",
}

// momentFormat formats t with a Moment.js format, in the names of lang ("en"
// or "pt"). Text in [brackets] is literal; other characters are copied.
func momentFormat(t time.Time, format, lang string) string {
	if _, ok := monthNames[lang]; !ok {
		lang = "en"
	}
	var b strings.Builder
	for i := 0; i < len(format); {
		if format[i] == '[' {
			if j := strings.IndexByte(format[i:], ']'); j > 0 {
				b.WriteString(format[i+1 : i+j])
				i += j + 1
				continue
			}
		}
		tok := ""
		for _, cand := range momentTokens {
			if strings.HasPrefix(format[i:], cand) {
				tok = cand
				break
			}
		}
		if tok == "" {
			_, size := utf8.DecodeRuneInString(format[i:])
			b.WriteString(format[i : i+size])
			i += size
			continue
		}
		i += len(tok)
		b.WriteString(momentToken(t, tok, lang))
	}
	return b.String()
}

func pad(n, width int) string {
	s := strconv.Itoa(n)
	for len(s) < width {
		s = "0" + s
	}
	return s
}

// momentToken formats one token.
func momentToken(t time.Time, tok, lang string) string {
	wd := int(t.Weekday())
	switch tok {
	case "LT", "LTS", "L", "LL", "LLL", "LLLL":
		return momentFormat(t, localeFormats[lang][tok], lang)
	case "l", "ll", "lll", "llll":
		long := localeFormats[lang][strings.ToUpper(tok)]
		short := strings.NewReplacer("MMMM", "MMM", "MM", "M", "DD", "D", "dddd", "ddd").Replace(long)
		return momentFormat(t, short, lang)
	case "YYYY":
		return pad(t.Year(), 4)
	case "YY":
		return pad(t.Year()%100, 2)
	case "Y":
		return strconv.Itoa(t.Year())
	case "GGGG", "GG":
		y, _ := t.ISOWeek()
		if tok == "GG" {
			return pad(y%100, 2)
		}
		return pad(y, 4)
	case "gggg", "gg":
		y, _ := localeWeek(t)
		if tok == "gg" {
			return pad(y%100, 2)
		}
		return pad(y, 4)
	case "MMMM":
		return monthNames[lang][t.Month()-1]
	case "MMM":
		return monthShort[lang][t.Month()-1]
	case "MM":
		return pad(int(t.Month()), 2)
	case "M":
		return strconv.Itoa(int(t.Month()))
	case "Q":
		return strconv.Itoa((int(t.Month())-1)/3 + 1)
	case "DDDD":
		return pad(t.YearDay(), 3)
	case "DDD":
		return strconv.Itoa(t.YearDay())
	case "Do":
		return ordinal(t.Day(), lang)
	case "DD":
		return pad(t.Day(), 2)
	case "D":
		return strconv.Itoa(t.Day())
	case "dddd":
		return dayNames[lang][wd]
	case "ddd":
		return dayShort[lang][wd]
	case "dd":
		return dayMin[lang][wd]
	case "d", "e":
		return strconv.Itoa(wd)
	case "E":
		if wd == 0 {
			return "7"
		}
		return strconv.Itoa(wd)
	case "WW", "W":
		_, w := t.ISOWeek()
		if tok == "WW" {
			return pad(w, 2)
		}
		return strconv.Itoa(w)
	case "ww", "w":
		_, w := localeWeek(t)
		if tok == "ww" {
			return pad(w, 2)
		}
		return strconv.Itoa(w)
	case "HH":
		return pad(t.Hour(), 2)
	case "H":
		return strconv.Itoa(t.Hour())
	case "hh", "h":
		h := t.Hour() % 12
		if h == 0 {
			h = 12
		}
		if tok == "hh" {
			return pad(h, 2)
		}
		return strconv.Itoa(h)
	case "kk", "k":
		h := t.Hour()
		if h == 0 {
			h = 24
		}
		if tok == "kk" {
			return pad(h, 2)
		}
		return strconv.Itoa(h)
	case "mm":
		return pad(t.Minute(), 2)
	case "m":
		return strconv.Itoa(t.Minute())
	case "ss":
		return pad(t.Second(), 2)
	case "s":
		return strconv.Itoa(t.Second())
	case "SSS":
		return pad(t.Nanosecond()/1e6, 3)
	case "SS":
		return pad(t.Nanosecond()/1e7, 2)
	case "S":
		return strconv.Itoa(t.Nanosecond() / 1e8)
	case "A":
		return t.Format("PM")
	case "a":
		return t.Format("pm")
	case "ZZ":
		return t.Format("-0700")
	case "Z":
		return t.Format("-07:00")
	case "X":
		return strconv.FormatInt(t.Unix(), 10)
	case "x":
		return strconv.FormatInt(t.UnixMilli(), 10)
	}
	return tok
}

// localeWeek is the week of the year in the en and pt-br locales: weeks
// start on Sunday, and week 1 is the one holding 1 January. It returns the
// year the week belongs to and its number.
func localeWeek(t time.Time) (year, week int) {
	sat := t.AddDate(0, 0, 6-int(t.Weekday())) // the week's last day
	return sat.Year(), (sat.YearDay()-1)/7 + 1
}

// ordinal is the day of the month as Moment.js's Do writes it.
func ordinal(n int, lang string) string {
	if lang == "pt" {
		return strconv.Itoa(n) + "º"
	}
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
