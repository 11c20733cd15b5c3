package mcpserver

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// schemaFinding is one portability problem of a tool schema, as the MCP
// inspector's `--strict` check reports them.
type schemaFinding struct{ tool, path, rule string }

// Keywords under which a schema holds other schemas, as the inspector walks
// them; and those that constrain an instance (a schema with none of them
// accepts anything).
var (
	subschemaKeywords    = []string{"items", "contains", "not", "propertyNames", "if", "then", "else", "additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems", "contentSchema"}
	subschemaListKeyword = []string{"allOf", "anyOf", "oneOf", "prefixItems"}
	subschemaMapKeyword  = []string{"properties", "patternProperties", "dependentSchemas", "dependencies", "$defs", "definitions"}
	booleanAllowed       = []string{"additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"}
	constraining         = []string{"type", "enum", "const", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "maxLength", "minLength", "pattern", "format", "contentMediaType", "contentEncoding", "contentSchema", "maxItems", "minItems", "uniqueItems", "maxContains", "minContains", "maxProperties", "minProperties", "required", "dependentRequired", "allOf", "anyOf", "oneOf", "not", "items", "prefixItems", "contains", "additionalItems", "unevaluatedItems", "properties", "patternProperties", "additionalProperties", "unevaluatedProperties", "propertyNames", "dependentSchemas", "dependencies", "$ref", "$dynamicRef", "$recursiveRef"}
)

// lintSchema applies the rules of the inspector's --strict check (MCP
// inspector 2.12): a `type` that is a list (type-union), a `$ref` to another
// document (remote-ref), a schema that constrains nothing (untyped-schema),
// and a bare true/false where a schema is expected (boolean-schema).
func lintSchema(tool, path, keyword string, node any, out *[]schemaFinding) {
	add := func(rule string) { *out = append(*out, schemaFinding{tool, path, rule}) }
	switch n := node.(type) {
	case bool:
		if !slices.Contains(booleanAllowed, keyword) {
			add("boolean-schema")
		}
		return
	case map[string]any:
		if _, ok := n["type"].([]any); ok {
			add("type-union")
		}
		if ref, ok := n["$ref"].(string); ok && ref != "" && !strings.HasPrefix(ref, "#") {
			add("remote-ref")
		}
		constrains := false
		for k := range n {
			constrains = constrains || slices.Contains(constraining, k)
		}
		_, hasIf := n["if"]
		_, hasThen := n["then"]
		_, hasElse := n["else"]
		constrains = constrains || hasIf && (hasThen || hasElse)
		if !constrains && keyword != "not" {
			add("untyped-schema")
		}
		for _, k := range subschemaMapKeyword {
			m, _ := n[k].(map[string]any)
			for name, sub := range m {
				lintSchema(tool, path+"."+k+"."+name, k, sub, out)
			}
		}
		for _, k := range subschemaListKeyword {
			l, _ := n[k].([]any)
			for i, sub := range l {
				lintSchema(tool, fmt.Sprintf("%s.%s[%d]", path, k, i), k, sub, out)
			}
		}
		for _, k := range subschemaKeywords {
			sub, ok := n[k]
			if !ok {
				continue
			}
			if l, isList := sub.([]any); isList && k == "items" {
				for i, s := range l {
					lintSchema(tool, fmt.Sprintf("%s.%s[%d]", path, k, i), k, s, out)
				}
				continue
			}
			lintSchema(tool, path+"."+k, k, sub, out)
		}
	}
}

// TestSchemaSnapshotIsPortable: the tool schemas every client gets (the
// snapshot TestToolSchemasGolden keeps equal to tools/list) pass the MCP
// inspector's `--strict` portability check with no finding; in particular
// no property is typed ["null", ...].
func TestSchemaSnapshotIsPortable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "tools.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tools []map[string]any
	if err := json.Unmarshal(data, &tools); err != nil {
		t.Fatal(err)
	}
	if len(tools) < 12 {
		t.Fatalf("snapshot lists %d tools", len(tools))
	}
	var findings []schemaFinding
	for _, tl := range tools {
		name, _ := tl["name"].(string)
		for _, which := range []string{"inputSchema", "outputSchema"} {
			if s, ok := tl[which]; ok {
				lintSchema(name, which, "", s, &findings)
			}
		}
	}
	for _, f := range findings {
		t.Errorf("tool %s: %s: %s", f.tool, f.path, f.rule)
	}
}

// TestLintSchemaRules: the check above finds what the inspector finds.
func TestLintSchemaRules(t *testing.T) {
	cases := []struct {
		schema string
		want   []string
	}{
		{`{"type":"object","properties":{"tags":{"type":["null","array"],"items":{"type":"string"}}}}`, []string{"x.properties.tags type-union"}},
		{`{"type":"object","properties":{"a":{"description":"anything"}}}`, []string{"x.properties.a untyped-schema"}},
		{`{"type":"object","properties":{"a":true},"additionalProperties":false}`, []string{"x.properties.a boolean-schema"}},
		{`{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`, []string{"x.properties.a remote-ref"}},
		{`{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"type":"array"}]}},"additionalProperties":{}}`, []string{"x.additionalProperties untyped-schema"}},
		{`{"type":"object","properties":{"a":{"type":"object","additionalProperties":true}}}`, nil},
	}
	for _, c := range cases {
		var s any
		if err := json.Unmarshal([]byte(c.schema), &s); err != nil {
			t.Fatal(err)
		}
		var fs []schemaFinding
		lintSchema("t", "x", "", s, &fs)
		var got []string
		for _, f := range fs {
			got = append(got, f.path+" "+f.rule)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.schema, got, c.want)
		}
	}
}

// TestStructuredContentHasNoNull: a result with empty lists is sent with []
// where the (portable) output schema says "array", and validates.
func TestStructuredContentHasNoNull(t *testing.T) {
	fake := newFake()
	fake.search = &api.SearchResult{Query: "nothing"}
	fake.history = &api.HistoryResult{Path: "a.md"}
	fake.backlinks = &api.BacklinksResult{Path: "a.md", Backlinks: []api.Backlink{{Path: "b.md", Title: "B"}}}
	cs := connect(t, New(fake, Options{}), nil)
	tools := toolsByName(t, cs)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"vault_search", map[string]any{"query": "nothing"}, `"results":[]`},
		{"vault_history", map[string]any{"path": "a.md"}, `"versions":[]`},
		{"vault_backlinks", map[string]any{"path": "a.md"}, `"lines":[]`},
	} {
		res := call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, text(t, res))
		}
		b, _ := json.Marshal(res.StructuredContent)
		if strings.Contains(string(b), "null") || !strings.Contains(string(b), c.want) {
			t.Errorf("%s: structured content %s, want %s and no null", c.tool, b, c.want)
		}
		if err := resolveSchema(t, tools[c.tool].OutputSchema).Validate(jsonValue(t, res.StructuredContent)); err != nil {
			t.Errorf("%s: %v", c.tool, err)
		}
	}
}

var numberRun = regexp.MustCompile(`\d[\d,]*\d|\d`)

// TestLimitsWrittenOnce: the numbers of the schemas and descriptions come
// from the api constants: no tool description or argument tag writes one of
// those numbers itself, and the published bounds are the constants'.
func TestLimitsWrittenOnce(t *testing.T) {
	values := map[string]string{}
	for name, n := range limits {
		if n >= 10 {
			values[formatNumber(n)] = name
			values[fmt.Sprint(n)] = name
		}
	}
	check := func(where, text string) {
		for _, num := range numberRun.FindAllString(text, -1) {
			if name, ok := values[num]; ok {
				t.Errorf("%s writes %s itself; say {%s}", where, num, name)
			}
		}
	}
	for _, r := range registry() {
		check(r.name+" description", r.description)
		for i := range r.input.NumField() {
			f := r.input.Field(i)
			check(r.name+"."+f.Name, f.Tag.Get("jsonschema"))
			for _, key := range []string{"min", "max"} {
				if v, ok := f.Tag.Lookup(key); ok && v != "0" && v != "1" {
					if _, named := limits[v]; !named {
						t.Errorf("%s.%s: %s tag %q is a number of its own; name an api limit", r.name, f.Name, key, v)
					}
				}
			}
		}
	}

	cs := connect(t, New(newFakeWriter(), Options{}), nil)
	tools := toolsByName(t, cs)
	for _, c := range []struct {
		tool, arg    string
		max, def     int
		descContains []string
	}{
		{"vault_search", "limit", api.MaxSearchLimit, api.DefaultSearchLimit, nil},
		{"vault_graph", "max_nodes", api.MaxGraphNodes, api.DefaultGraphNodes, nil},
		{"vault_history", "limit", api.MaxHistory, api.DefaultHistory, nil},
	} {
		var schema struct {
			Properties map[string]struct {
				Description string   `json:"description"`
				Minimum     *float64 `json:"minimum"`
				Maximum     *float64 `json:"maximum"`
			} `json:"properties"`
		}
		b, _ := json.Marshal(tools[c.tool].InputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		p := schema.Properties[c.arg]
		if p.Maximum == nil || int(*p.Maximum) != c.max || p.Minimum == nil || *p.Minimum != 1 {
			t.Errorf("%s.%s: bounds %v..%v, want 1..%d", c.tool, c.arg, p.Minimum, p.Maximum, c.max)
		}
		want := fmt.Sprintf("1 to %s (default %s)", formatNumber(c.max), formatNumber(c.def))
		if !strings.Contains(p.Description, want) {
			t.Errorf("%s.%s: description %q lacks %q", c.tool, c.arg, p.Description, want)
		}
	}
	if d := tools["vault_get_note"].Description; !strings.Contains(d, formatNumber(api.NotePageChars)+" characters") {
		t.Errorf("vault_get_note description: %q", d)
	}
	res := call(t, cs, "vault_search", map[string]any{"query": "x", "limit": api.MaxSearchLimit + 1})
	if want := fmt.Sprintf("INVALID_ARGUMENT: limit: must be between 1 and %d", api.MaxSearchLimit); text(t, res) != want {
		t.Errorf("refusal %q, want %q", text(t, res), want)
	}
}

func TestExpand(t *testing.T) {
	if got := expand("{min} to {max}, pages of {NotePageChars}; {\"tags\": []}", map[string]int{"min": 1, "max": 5000}); got != "1 to 5,000, pages of 20,000; {\"tags\": []}" {
		t.Errorf("expand: %q", got)
	}
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1024: "1,024", 1234567: "1,234,567", -1500: "-1,500"} {
		if got := formatNumber(n); got != want {
			t.Errorf("formatNumber(%d) = %q, want %q", n, got, want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("an unknown limit name did not panic")
		}
	}()
	expand("{NoSuchLimit}", nil)
}
