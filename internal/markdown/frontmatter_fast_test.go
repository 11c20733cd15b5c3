package markdown

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// fastVsYAML runs the fast path on content and, when it accepts, the YAML
// path too, and fails unless both give the same Note. It reports whether the
// fast path accepted; when it declines, the note must be left untouched.
func fastVsYAML(t testing.TB, content string) bool {
	t.Helper()
	fast := &Note{}
	if !fastFrontmatter(fast, content) {
		if !reflect.DeepEqual(fast, &Note{}) {
			t.Errorf("fast path declined %q but changed the note: %#v", content, fast)
		}
		return false
	}
	slow := &Note{}
	decodeYAMLFrontmatter(slow, []byte(content), 2)
	if !reflect.DeepEqual(fast, slow) {
		t.Errorf("fast path and YAML path differ on %q:\n fast: %s\n yaml: %s", content, noteFields(fast), noteFields(slow))
	}
	return true
}

// noteFields shows what the frontmatter decoding writes, with Go types.
func noteFields(n *Note) string {
	keys := make([]string, 0, len(n.Frontmatter))
	for k := range n.Frontmatter {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	fmt.Fprintf(&b, "fm(nil=%t){", n.Frontmatter == nil)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q: %#v, ", k, n.Frontmatter[k])
	}
	fmt.Fprintf(&b, "} type=%q status=%q created=%q updated=%q tags=%#v aliases=%#v diags=%q",
		n.Type, n.Status, n.Created, n.Updated, n.Tags, n.Aliases, n.Diagnostics)
	return b.String()
}

// TestFastFrontmatterAccepts covers every form of the subset: the fast path
// must accept it, give the expected values, and agree with the YAML path.
func TestFastFrontmatterAccepts(t *testing.T) {
	type want struct {
		fm                            map[string]any
		typ, status, created, updated string
		tags, aliases                 []string
	}
	tests := []struct {
		name    string
		content string
		want    want
	}{
		{"empty", "", want{fm: map[string]any{}}},
		{"blank lines", "\n  \n\n", want{fm: map[string]any{}}},
		{"comments only", "# a\n  # b\n", want{fm: map[string]any{}}},
		{"plain words", "title: Retry policy\n", want{fm: map[string]any{"title": "Retry policy"}}},
		{"inner spaces kept", "a: x   y\n", want{fm: map[string]any{"a": "x   y"}}},
		{"trailing spaces dropped", "a: x   \n", want{fm: map[string]any{"a": "x"}}},
		{"trailing comment", "a: x # note\n", want{fm: map[string]any{"a": "x"}}},
		{"hash inside a word", "lang: C# and F#\n", want{fm: map[string]any{"lang": "C# and F#"}}},
		{"url", "source: https://example.com/a?b=c#frag\n", want{fm: map[string]any{"source": "https://example.com/a?b=c#frag"}}},
		{"colon inside a word", "time: 10:30\nratio: a:b\n", want{fm: map[string]any{"time": "10:30", "ratio": "a:b"}}},
		{"quotes and brackets inside plain", "a: it's \"x\" [y] {z}, w\n", want{fm: map[string]any{"a": "it's \"x\" [y] {z}, w"}}},
		{"non-ascii", "título: Olá — 日本\n", want{fm: map[string]any{"título": "Olá — 日本"}}},
		{"key forms", "Date created: x\nsnake_key: y\na.b/c-d: z\n2024: w\n_k: v\n", want{fm: map[string]any{
			"Date created": "x", "snake_key": "y", "a.b/c-d": "z", "2024": "w", "_k": "v"}}},
		{"crlf", "a: x\r\nb:\r\n  - y\r\n", want{fm: map[string]any{"a": "x", "b": []any{"y"}}}},
		{"double quoted", "a: \"x: y # z\"\nb: \"\"\nc: \" sp \" # c\n", want{fm: map[string]any{"a": "x: y # z", "b": "", "c": " sp "}}},
		{"single quoted", "a: 'it''s'\nb: ''\nc: '\"#: '\nd: ''''\n", want{fm: map[string]any{"a": "it's", "b": "", "c": "\"#: ", "d": "'"}}},
		{"quoted numbers stay strings", "a: '3'\nb: \"true\"\nc: '~'\n", want{fm: map[string]any{"a": "3", "b": "true", "c": "~"}}},
		{"bools", "a: true\nb: True\nc: TRUE\nd: false\ne: False\nf: FALSE\n", want{fm: map[string]any{
			"a": true, "b": true, "c": true, "d": false, "e": false, "f": false}}},
		{"yaml 1.1 words are strings", "a: yes\nb: no\nc: on\nd: off\ne: y\nf: N\ng: tRUE\nh: nil\n", want{fm: map[string]any{
			"a": "yes", "b": "no", "c": "on", "d": "off", "e": "y", "f": "N", "g": "tRUE", "h": "nil"}}},
		{"nulls", "a:\nb: ~\nc: null\nd: Null\ne: NULL\nf: # c\ng:   \n", want{fm: map[string]any{
			"a": nil, "b": nil, "c": nil, "d": nil, "e": nil, "f": nil, "g": nil}}},
		{"tilde word", "a: ~x\nb: <x\n", want{fm: map[string]any{"a": "~x", "b": "<x"}}},
		{"ints", "a: 0\nb: 7\nc: 42\nd: -5\ne: -0\nf: 123456789012345678\ng: -123456789012345678\n", want{fm: map[string]any{
			"a": 0, "b": 7, "c": 42, "d": -5, "e": 0, "f": 123456789012345678, "g": -123456789012345678}}},
		{"floats", "a: 1.5\nb: -0.25\nc: 01.50\nd: 2024.5\n", want{fm: map[string]any{"a": 1.5, "b": -0.25, "c": 1.5, "d": 2024.5}}},
		{"numeric-looking strings", "a: 2026-01-02\nb: 2026-01-02 10:00\nc: 2026-01-02T10:00:00Z\nd: 1.2.3\ne: 555-1234\nf: 1 000\ng: 3rd\nh: 12:30:45\ni: 2026-13-45\n", want{fm: map[string]any{
			"a": "2026-01-02", "b": "2026-01-02 10:00", "c": "2026-01-02T10:00:00Z", "d": "1.2.3", "e": "555-1234",
			"f": "1 000", "g": "3rd", "h": "12:30:45", "i": "2026-13-45"}}},
		{"underscores beside a non-numeric character", "a: 3d_embeds\nb: 1_2:30\n", want{fm: map[string]any{"a": "3d_embeds", "b": "1_2:30"}}},
		{"flow sequences", "a: []\nb: [ ]\nc: [x]\nd: [x, y z ,w]\ne: [\"q, r\", 's''t']\nf: [1, -2, 1.5, true, ~, null, 2026-01-02, yes, C#]\ng: [x] # c\n", want{fm: map[string]any{
			"a": []any{}, "b": []any{}, "c": []any{"x"}, "d": []any{"x", "y z", "w"}, "e": []any{"q, r", "s't"},
			"f": []any{1, -2, 1.5, true, nil, nil, "2026-01-02", "yes", "C#"}, "g": []any{"x"}}}},
		{"block sequence indented", "a:\n  - x\n  - 'y'\n  - \"z\"\n  - 3\n  - ~\nb: 1\n", want{fm: map[string]any{
			"a": []any{"x", "y", "z", 3, nil}, "b": 1}}},
		{"block sequence at column 0", "a:\n- x\n- y\nb: 2\n", want{fm: map[string]any{"a": []any{"x", "y"}, "b": 2}}},
		{"block sequence null items", "a:\n  -\n  - \n  - # c\n  - x\n", want{fm: map[string]any{"a": []any{nil, nil, nil, "x"}}}},
		{"block sequence with comments and blanks", "a: # list\n\n  # first\n  - x # c\n\n# between\n  - y\n\nb: z\n", want{fm: map[string]any{
			"a": []any{"x", "y"}, "b": "z"}}},
		{"block sequence wide indent", "a:\n      - x\n      - -3\n", want{fm: map[string]any{"a": []any{"x", -3}}}},
		{"no final newline", "a: x\nb:\n  - y", want{fm: map[string]any{"a": "x", "b": []any{"y"}}}},
		{
			name:    "typed fields",
			content: "type: Wiki\nstatus: Active\ncreated: 2026-01-02\nupdated: 2026-01-03 10:00\ntags: [Go, '#Search', c d]\naliases:\n  - ' Retry '\n  - Backoff\n",
			want: want{
				fm: map[string]any{"type": "Wiki", "status": "Active", "created": "2026-01-02", "updated": "2026-01-03 10:00",
					"tags": []any{"Go", "#Search", "c d"}, "aliases": []any{" Retry ", "Backoff"}},
				typ: "wiki", status: "active", created: "2026-01-02", updated: "2026-01-03 10:00",
				tags: []string{"go", "search", "c", "d"}, aliases: []string{"Retry", "Backoff"},
			},
		},
		{
			name:    "portuguese and string lists",
			content: "tipo: projeto\ncriado: 2026-02-01\natualizado: 2026-02-02\ntag: 'x, #Y z'\nalias: um, dois\n",
			want: want{
				fm:  map[string]any{"tipo": "projeto", "criado": "2026-02-01", "atualizado": "2026-02-02", "tag": "x, #Y z", "alias": "um, dois"},
				typ: "project", created: "2026-02-01", updated: "2026-02-02", tags: []string{"x", "y", "z"}, aliases: []string{"um", "dois"},
			},
		},
		{
			name:    "key case, last one wins, non-scalars",
			content: "Type: nota\nTYPE: Daily\nStatus: [x]\ntags:\n  -\n  - '#'\n  - ok\nTags: 5\naliases: []\ncreated: true\nupdated: 1.50\n",
			want: want{
				fm: map[string]any{"Type": "nota", "TYPE": "Daily", "Status": []any{"x"}, "tags": []any{nil, "#", "ok"},
					"Tags": 5, "aliases": []any{}, "created": true, "updated": 1.5},
				typ: "daily", created: "true", updated: "1.50", tags: []string{"ok", "5"},
			},
		},
		{"null fields", "type: ~\nstatus:\ntags: null\n", want{fm: map[string]any{"type": nil, "status": nil, "tags": nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := &Note{}
			if !fastFrontmatter(n, tt.content) {
				t.Fatalf("fast path declined %q", tt.content)
			}
			w := tt.want
			if !reflect.DeepEqual(n.Frontmatter, w.fm) {
				t.Errorf("frontmatter\n got: %#v\nwant: %#v", n.Frontmatter, w.fm)
			}
			if n.Type != w.typ || n.Status != w.status || n.Created != w.created || n.Updated != w.updated {
				t.Errorf("type/status/created/updated = %q/%q/%q/%q, want %q/%q/%q/%q",
					n.Type, n.Status, n.Created, n.Updated, w.typ, w.status, w.created, w.updated)
			}
			if !slices.Equal(n.Tags, w.tags) || !slices.Equal(n.Aliases, w.aliases) {
				t.Errorf("tags %q aliases %q, want %q %q", n.Tags, n.Aliases, w.tags, w.aliases)
			}
			if len(n.Diagnostics) > 0 {
				t.Errorf("diagnostics %q", n.Diagnostics)
			}
			fastVsYAML(t, tt.content)
		})
	}
}

// TestFastFrontmatterDeclines lists forms outside the subset: the fast path
// must leave them to the YAML library (and leave the note untouched).
func TestFastFrontmatterDeclines(t *testing.T) {
	for _, content := range []string{
		// Structure.
		"a:\n  b: 1\n",           // nested mapping
		"a: {b: 1}\n",            // flow mapping
		"a: [x, [y]]\n",          // nested flow sequence
		"a: [[Note]]\n",          // a wiki-link is a nested sequence in YAML
		"a:\n  - [x]\n",          // flow sequence in a block sequence
		"a:\n  - b: 1\n",         // mapping in a sequence
		"a:\n  - - x\n",          // nested block sequence
		"a: |\n  text\n",         // literal block scalar
		"a: >\n  text\n",         // folded block scalar
		"a: |-\n  text\n",        // chomping indicator
		"a: b\n  c\n",            // multi-line plain scalar
		"a:\n  b\n",              // plain scalar on the next line
		"a:\n  - x\n    y\n",     // multi-line item
		"a:\n  - x\n - y\n",      // items at two indentations
		"a:\n  - x\n    - y\n",   // deeper item
		"a:\n  - x\n- y\n",       // less indented item
		"a: 1\n- x\n",            // sequence entry after a scalar
		"- a\n- b\n",             // sequence document
		"just text\n",            // scalar document
		"  a: 1\n  b: 2\n",       // indented mapping
		"? a\n: b\n",             // explicit key
		"a: x\na: y\n",           // duplicate key
		"a: \"x\ny\"\n",          // multi-line double-quoted
		"a: 'x\ny'\n",            // multi-line single-quoted
		"a: [x,\n  y]\n",         // multi-line flow sequence
		"a: &x 1\n",              // anchor
		"a: &x 1\nb: *x\n",       // alias
		"<<: x\n",                // merge key
		"a: <<\n",                // merge key spelling as a value
		"a: !!str 1\n",           // tag
		"a: !local x\n",          // local tag
		"%YAML 1.2\n---\na: 1\n", // directive
		"--- a\n",                // document marker line
		"a: x\n...\n",            // document end
		// Keys.
		"'a': 1\n",                         // quoted key
		"\"a\": 1\n",                       // double-quoted key
		"a : 1\n",                          // space before the colon
		"a:b\n",                            // no space after the colon
		"a#b: 1\n",                         // '#' in a key
		"a:: 1\n",                          // ':' in a key
		"-a: 1\n",                          // key starting with '-'
		".a: 1\n",                          // key starting with '.'
		strings.Repeat("k", 200) + ": 1\n", // long key
		// Values.
		"a: b: c\n",      // mapping value in a plain scalar
		"a: b:\n",        // plain scalar ending with ':'
		"a: 'x'y\n",      // text after a quoted scalar
		"a: \"x\"#c\n",   // comment not after a space
		"a: [x]y\n",      // text after a flow sequence
		"a: [x]#c\n",     // comment not after a space
		"a: 'x\n",        // unclosed single quote
		"a: \"x\n",       // unclosed double quote
		"a: \"x\\ty\"\n", // escape
		"a: \"\\\"\"\n",  // escaped quote
		"a: [x, ]\n",     // trailing comma
		"a: [x,, y]\n",   // empty item
		"a: [, x]\n",     // empty first item
		"a: [x: y]\n",    // single-pair mapping in a flow sequence
		"a: [x #c]\n",    // comment inside a flow sequence
		"a: [x?y]\n",     // '?' in a flow scalar
		"a: [x{y]\n",     // '{' in a flow scalar
		"a: [-x]\n",      // '-' not before a digit
		"a: -x\n",        // '-' not before a digit
		"a: - x\n",       // sequence entry as a value
		"a: ,x\n", "a: ]x\n", "a: }x\n", "a: @x\n", "a: `x`\n", "a: %x\n", "a: :x\n", "a: ?x\n", "a: *x\n", "a: &x\n", "a: !x\n",
		// Scalar spellings left to the library.
		"a: .inf\n", "a: -.inf\n", "a: .nan\n", "a: .5\n", "a: .x\n", "a: 1e3\n", "a: 1E-5\n", "a: 0x1F\n", "a: 0o17\n",
		"a: 0b101\n", "a: 0b-1\n", "a: 012\n", "a: 00\n", "a: +1\n", "a: +1.5\n", "a: 1_000\n", "a: 1.\n",
		"a: 0b_-1\n", "a: 1_-2\n", "a: 1_2.5\n", "a: 1234567890123456789\n", "a: 99999999999999999999\n", "a: -\n", "a: [0x1F]\n", "a:\n  - 1e3\n",
		"a: " + strings.Repeat("1", 20) + "." + strings.Repeat("5", 20) + "\n", // over 32 bytes
		// Characters.
		"a:\tb\n",            // tab after the colon
		"a:\n\t- x\n",        // tab indentation
		"a: x\tb\n",          // tab inside a value
		"\ta: 1\n",           // tab before a key
		"a: x\ry\n",          // lone CR (a YAML line break)
		"a: x\r",             // lone CR at the end
		"a: \x00\n",          // NUL
		"a: \x07\n",          // control character
		"a: \x7f\n",          // DEL
		"a: \xff\n",          // invalid UTF-8
		"\xef\xbb\xbfa: 1\n", // BOM
		"a: x\u0085y\n",      // NEL
		"a: x\u2028y\n",      // line separator
		"a: x\u2029y\n",      // paragraph separator
		"a: \ufffe\n",        // non-character
	} {
		n := &Note{}
		if fastFrontmatter(n, content) {
			t.Errorf("fast path accepted %q: %s", content, noteFields(n))
		} else if !reflect.DeepEqual(n, &Note{}) {
			t.Errorf("fast path declined %q but changed the note: %#v", content, n)
		}
	}
}

// TestFastFrontmatterScalarSpellings runs every short string over an
// alphabet of numeric, sign, date and indicator characters through both paths
// as a value, a flow item and a block item.
func TestFastFrontmatterScalarSpellings(t *testing.T) {
	const alphabet = "09-+.:eEbxo_ #T'"
	limit := 3
	if !testing.Short() && !raceEnabled {
		limit = 4
	}
	var accepted, total int
	var walk func(prefix string)
	walk = func(prefix string) {
		if prefix != "" {
			for _, form := range []string{"k: %s\n", "k: [%s]\n", "k:\n  - %s\n"} {
				total++
				if fastVsYAML(t, fmt.Sprintf(form, prefix)) {
					accepted++
				}
			}
		}
		if len(prefix) == limit {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			walk(prefix + alphabet[i:i+1])
		}
	}
	walk("")
	t.Logf("fast path accepted %d of %d spellings", accepted, total)
	if accepted == 0 || accepted == total {
		t.Errorf("fast path accepted %d of %d spellings: the test no longer tells anything", accepted, total)
	}
}

// TestFastFrontmatterMatchesYAML runs the differential check on the example
// vault's frontmatter, on the package's test notes and on the tricky inputs
// the fuzz target is seeded with. The example vault's frontmatter is the
// common shape: all of it, bar a deliberately broken block, must take the
// fast path.
func TestFastFrontmatterMatchesYAML(t *testing.T) {
	vault, err := exampleFrontmatter()
	if err != nil {
		t.Fatal(err)
	}
	if len(vault) < 20 {
		t.Fatalf("only %d frontmatter blocks in the example vault", len(vault))
	}
	declined := 0
	for _, c := range vault {
		if !fastVsYAML(t, c) {
			declined++
			t.Logf("declined: %q", c)
		}
	}
	if declined > 1 {
		t.Errorf("fast path declined %d of the example vault's %d frontmatter blocks", declined, len(vault))
	}
	for _, c := range append(testdataFrontmatter(t), trickyFrontmatter...) {
		fastVsYAML(t, c)
	}
}

// TestFastFrontmatterCorpus runs the differential check on every note of
// the vault folder $VAULTMCP_CORPUS (skipped when unset) and logs how many
// frontmatter blocks took the fast path.
func TestFastFrontmatterCorpus(t *testing.T) {
	root := os.Getenv("VAULTMCP_CORPUS")
	if root == "" {
		t.Skip("VAULTMCP_CORPUS is not set (a vault folder)")
	}
	blocks, err := frontmatterBlocks(root)
	if err != nil {
		t.Fatal(err)
	}
	accepted := 0
	for _, b := range blocks {
		if len(b.text) > MaxFrontmatter {
			continue
		}
		if fastVsYAML(t, b.text) {
			accepted++
		} else if testing.Verbose() {
			t.Logf("declined %s", b.path)
		}
	}
	t.Logf("%d of %d frontmatter blocks took the fast path", accepted, len(blocks))
}

// FuzzFrontmatterFastPath checks that for any block the fast path either
// declines or gives exactly what the YAML path gives.
func FuzzFrontmatterFastPath(f *testing.F) {
	vault, err := exampleFrontmatter()
	if err != nil {
		f.Fatal(err)
	}
	for _, c := range vault {
		f.Add([]byte(c))
	}
	for _, c := range testdataFrontmatter(f) {
		f.Add([]byte(c))
	}
	for _, c := range trickyFrontmatter {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, content []byte) {
		if len(content) > MaxFrontmatter {
			return
		}
		fastVsYAML(t, string(content))
	})
}

// exampleFrontmatter returns the frontmatter blocks of the repository's
// example vault.
func exampleFrontmatter() ([]string, error) {
	blocks, err := frontmatterBlocks(filepath.Join("..", "..", "examples", "vault"))
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.text
	}
	return out, err
}

type fmBlock struct{ path, text string }

// frontmatterBlocks returns the frontmatter block of every note under root.
func frontmatterBlocks(root string) ([]fmBlock, error) {
	var out []fmBlock
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s := string(b)
		start := 0
		if strings.HasPrefix(s, bom) {
			start = len(bom)
		}
		if cs, ce, _, _, ok := findFrontmatter(s, start); ok {
			out = append(out, fmBlock{p, s[cs:ce]})
		}
		return nil
	})
	return out, err
}

// testdataFrontmatter returns the frontmatter blocks of testdata/*.md that
// are not over MaxFrontmatter.
func testdataFrontmatter(t testing.TB) []string {
	t.Helper()
	blocks, err := frontmatterBlocks("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range blocks {
		if len(b.text) <= MaxFrontmatter {
			out = append(out, b.text)
		}
	}
	return out
}

// trickyFrontmatter are inputs near the edges of the subset.
var trickyFrontmatter = []string{
	"", "\n", " \n", "#\n", "a:\n", "a: \n", "a:  # c\n", "a: ~\n", "a: ''\n", "a: \"\"\n", "a: []\n",
	"a: x\n#c\nb: y\n", "a: x\n  # c\nb: y\n", "a: x\n\n  \nb: y\n", "a:\n\n  - x\n\n  - y\n\nb:\n",
	"a: yes\nb: No\nc: ON\nd: off\ne: y\nf: n\n", "a: True\nb: FALSE\nc: tRue\n", "a: null\nb: Null\nc: NULL\nd: nULL\n",
	"a: 0\nb: -0\nc: 00\nd: 007\ne: 0.0\nf: -0.0\ng: 0.\nh: .0\n", "a: 2026-01-02\nb: 2026-1-2\nc: 2026-01-02t10:00:00z\nd: 2026-01-02 10:00:00.5\n",
	"a: 1e3\nb: 1e+3\nc: 1e-3\nd: 1E3\ne: 1e\n", "a: 0x1F\nb: 0X1f\nc: 0o17\nd: 0O17\ne: 0b11\nf: 0B11\ng: -0b11\nh: -0o7\ni: 0b-1\nj: 0o+7\n",
	"a: 1_000\nb: _1\nc: 1__0\nd: 0x_1\ne: 3d_embeds\nf: 1_2:3\ng: 0b_-1\nh: 1_-2\n", "a: +1\nb: +.inf\nc: -.Inf\nd: .NAN\ne: .nan\nf: .5\ng: 5.\n",
	"a: 9223372036854775807\nb: 9223372036854775808\nc: -9223372036854775808\nd: 18446744073709551616\n",
	"a: 123456789012345678\nb: 1234567890123456789\nc: -123456789012345678\n",
	"a: 1.2.3\nb: 1-2\nc: 1+2\nd: 1.-2\ne: 1e-2-3\nf: --1\ng: -+1\nh: 1..2\n",
	"a: 12:30\nb: 1:2:3\nc: 190:20:30\nd: 1:20.5\n",
	"a: [1, 2.5, -3, true, ~, '', \"\"]\n", "a: [ x , y ]\n", "a: [x,y]\n", "a: [x , 'y' , \"z\"]  # c\n",
	"a: ['x''y', \"x'y\", 'x\"y']\n", "a: [x y, z]\n", "a: [a'b, c\"d]\n", "a: [a#b]\n", "a: [a #b]\n",
	"a: [x]\nb: [y]\n", "a: [x] \n", "a: [-1, -x]\n", "a: [1-2, 2026-01-02]\n",
	"a: 'x' # c\nb: \"y\"  # c\n", "a: 'x'  \n", "a: 'x''\n", "a: '''\n", "a: ''''\n", "a: 'x'''\n",
	"a: \"x'y\"\nb: 'x\"y'\n", "a: \"#\"\nb: '#'\nc: \": \"\n",
	"tags: [a, '#b', c d]\naliases: [X, ' Y ']\n", "tags: 'x, #Y z'\nalias: um, dois\n", "tags:\n  -\n  - '#'\n  - ok\n",
	"Tags: [A]\nType: Wiki\n", "type: ~\nstatus:\ntags: null\n", "type: [x]\nstatus: {a: b}\n",
	"tipo: projeto\ntipo2: nota\n", "type: 5\nstatus: 1.50\ncreated: true\n",
	"a: C#\nb: F# c\nc: x #y\nd: x#y\n", "a: http://x.y:80/p?q=1#f\n", "a: x: y\n", "a: x:\n", "a: x:y\n",
	"a: -1\nb: -x\nc: - x\nd: -\n", "a: ~x\nb: <x\nc: <<\nd: >x\ne: |x\n", "<<: {a: 1}\n",
	"a:\n- x\n- y\nb:\n  - z\n", "a:\n  - x\n  -\n  - # c\n", "a:\n  - x\n  - y\n    z\n", "a:\n  - x\n -y\n",
	"a:\n  - 'x\n  y'\n", "a:\n  - \"x\"\n  - 'y'\n  - z # c\n", "a:\n  - x: 1\n", "a:\n  - [x]\n",
	"a: b\nc:\n  d: e\n", "a: |\n  x\n", "a: >-\n  x\n  y\n", "a: &x [1]\nb: *x\n",
	"a: x\r\nb: y\r\n", "a: x\rb: y\n", "a:\r\n  - x\r\n", "a: 'x'\r\n",
	"a: \u00a0\nb: \u00a0x\u00a0\n", "a: \u3000x\u3000\n", "tags: \u00a0go\n", "a: x\u0085y\n", "a:\u2028b\n",
	"\ufeffa: 1\n", "a: \ufeff\n", "a: \ufffd\n", "a: \U0001F600\n", "\U0001F600: x\n",
	"a  b: x\nc .d: y\né: z\n\u00a0: w\ntrue: 1\nnull: 2\n1.5: 3\n", "a\u00a0: b\nc: d\u00a0#e\nf: [g\u00a0#h]\n", "a: b\n---\nc: d\n", "a: b\n--- x\n", "a: b\n...\n", "--- \na: 1\n",
	"a:\tb\n", "a: x\t\n", "a:\n\t- x\n", "a:\n  - x\t\n", "\t\n", "a: x\n\t\nb: y\n",
	"k" + strings.Repeat("e", 1100) + ": v\n", "a: " + strings.Repeat("v", 2000) + "\n",
	"a: [" + strings.Repeat("x, ", 500) + "y]\n", "a:\n" + strings.Repeat("  - "+strings.Repeat("w", 1100)+"\n", 3),
}
