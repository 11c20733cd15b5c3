package mcpserver

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// limits are the numbers the tool schemas and descriptions publish, each
// taken from the constant the backend enforces, so that a limit is written
// once. A `min:"..."` or `max:"..."` tag of an input field names an entry
// (or is a plain integer), and a description says {Name} where the number
// goes; {min} and {max} in a field's description are that field's bounds.
// A name that is not here is a programming error, caught when the tool is
// registered (every test run registers them all).
var limits = map[string]int{
	"DefaultSearchLimit": api.DefaultSearchLimit,
	"MaxSearchLimit":     api.MaxSearchLimit,
	"MaxQueryChars":      api.MaxQueryChars,
	"NotePageChars":      api.NotePageChars,
	"DefaultHistory":     api.DefaultHistory,
	"MaxHistory":         api.MaxHistory,
	"DefaultGraphNodes":  api.DefaultGraphNodes,
	"MaxGraphNodes":      api.MaxGraphNodes,
	"MaxResourceChars":   maxResourceChars,
	"MaxCompletions":     maxCompletions,
	"SHA256Hex":          sha256Hex,
	"MaxVersionLen":      maxVersionLen,
}

// limit returns the value of a bound tag: an integer, or a name of limits.
func limit(v string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return n, nil
	}
	if n, ok := limits[v]; ok {
		return n, nil
	}
	return 0, fmt.Errorf("%q is neither an integer nor a name of limits", v)
}

// Compiled on first use: a process start does not pay for it.
var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[A-Za-z][A-Za-z0-9]*\}`) })

// expand replaces every {Name} of text by its number (with thousands
// separators, as the descriptions write numbers); local holds the names
// only this text knows ({min}, {max}). It panics on a name it does not know.
func expand(text string, local map[string]int) string {
	return placeholder().ReplaceAllStringFunc(text, func(p string) string {
		name := p[1 : len(p)-1]
		n, ok := local[name]
		if !ok {
			n, ok = limits[name]
		}
		if !ok {
			panic(fmt.Sprintf("mcpserver: description names an unknown limit %s in %q", p, text))
		}
		return formatNumber(n)
	})
}

// formatNumber writes n as the descriptions do: 50, 1,024, 20,000.
func formatNumber(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
