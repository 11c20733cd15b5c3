package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Tool arguments are decoded here rather than by the SDK's generic AddTool so
// that every bad argument is reported the same way, naming its field
// ("INVALID_ARGUMENT: limit: must be an integer"), in the server's language,
// whatever the client sent.
//
// An input struct declares its arguments with json tags (required unless
// omitempty), a `jsonschema:"..."` description, and for integers optional
// `min:"N"` and `max:"N"` tags (a number, or the name of one of limits):
// the bounds are checked here when the argument is present and published in
// the input schema as minimum and maximum. A description may name limits as
// {Name}, and its own bounds as {min} and {max} (see limits.go).

// argField describes one argument of an input struct.
type argField struct {
	name     string
	index    int
	kind     argKind
	required bool
	min, max *int
}

type argKind int

const (
	kindString argKind = iota
	kindInt
	kindBool
	kindStringList
	kindObject
	kindOther
)

// argSpec is the decoded description of an input struct.
type argSpec struct {
	fields []argField // in declaration order
	byName map[string]*argField
}

var argSpecs sync.Map // reflect.Type -> *argSpec

func argSpecFor(t reflect.Type) *argSpec {
	if s, ok := argSpecs.Load(t); ok {
		return s.(*argSpec)
	}
	s := &argSpec{byName: map[string]*argField{}}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		af := argField{name: name, index: i, kind: kindOf(f.Type), required: true}
		for o := range strings.SplitSeq(opts, ",") {
			if o == "omitempty" || o == "omitzero" {
				af.required = false
			}
		}
		af.min = intTag(f, "min")
		af.max = intTag(f, "max")
		if af.max != nil && af.min == nil {
			panic(fmt.Sprintf("mcpserver: field %s: a max tag needs a min tag", f.Name))
		}
		s.fields = append(s.fields, af)
	}
	for i := range s.fields {
		s.byName[s.fields[i].name] = &s.fields[i]
	}
	actual, _ := argSpecs.LoadOrStore(t, s)
	return actual.(*argSpec)
}

// intTag reads a bound tag; a malformed one is a programming error in this
// package, caught by the tests the first time the tool is registered.
func intTag(f reflect.StructField, key string) *int {
	v, ok := f.Tag.Lookup(key)
	if !ok {
		return nil
	}
	n, err := limit(v)
	if err != nil {
		panic(fmt.Sprintf("mcpserver: field %s: bad %s tag: %v", f.Name, key, err))
	}
	return &n
}

// bounds are the names a field's description may use for its own bounds.
func (f argField) bounds() map[string]int {
	m := map[string]int{}
	if f.min != nil {
		m["min"] = *f.min
	}
	if f.max != nil {
		m["max"] = *f.max
	}
	return m
}

func kindOf(t reflect.Type) argKind {
	switch t.Kind() {
	case reflect.String:
		return kindString
	case reflect.Int:
		return kindInt
	case reflect.Bool:
		return kindBool
	case reflect.Slice:
		if t.Elem().Kind() == reflect.String {
			return kindStringList
		}
	case reflect.Map:
		if t.Key().Kind() == reflect.String {
			return kindObject
		}
	}
	return kindOther
}

// decodeArgs decodes the raw arguments of a tool call into an In, checking
// that they form an object, that no argument is unknown, that required ones
// are present, and that each has the right type and lies within its bounds.
// It returns an *api.Error with code INVALID_ARGUMENT naming the field.
func decodeArgs[In any](m *messages, raw json.RawMessage) (In, error) {
	var in In
	spec := argSpecFor(reflect.TypeFor[In]())
	raw = bytes.TrimSpace(raw)
	var obj map[string]json.RawMessage
	if len(raw) != 0 && !bytes.Equal(raw, []byte("null")) {
		if raw[0] != '{' || json.Unmarshal(raw, &obj) != nil {
			return in, api.Invalid("arguments", "%s", m.get(msgErrNotObject))
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, ok := spec.byName[k]; !ok {
			return in, api.Invalid(argName(k), "%s", m.get(msgErrUnknownArg))
		}
	}
	v := reflect.ValueOf(&in).Elem()
	for _, f := range spec.fields {
		val, present := obj[f.name]
		if present && bytes.Equal(bytes.TrimSpace(val), []byte("null")) {
			present = false
		}
		if !present {
			if f.required {
				return in, api.Invalid(f.name, "%s", m.get(msgErrRequired))
			}
			continue
		}
		if err := json.Unmarshal(val, v.Field(f.index).Addr().Interface()); err != nil {
			n, ok := integral(val)
			if f.kind != kindInt || !ok {
				return in, api.Invalid(f.name, "%s", m.get(wantMessage(f.kind)))
			}
			v.Field(f.index).SetInt(n)
		}
		if f.kind == kindInt {
			n := int(v.Field(f.index).Int())
			if err := checkBounds(m, f, n); err != nil {
				return in, err
			}
		}
	}
	return in, nil
}

// notBlank refuses an empty (or all-blank) string argument, which decodeArgs
// lets through: a required argument need only be present.
func notBlank(m *messages, field, v string) error {
	if strings.TrimSpace(v) == "" {
		return api.Invalid(field, "%s", m.get(msgErrEmpty))
	}
	return nil
}

// integral accepts a JSON number with a fraction or exponent that is still a
// whole number (5.0, 1e2), as JSON Schema's "integer" does.
func integral(val json.RawMessage) (int64, bool) {
	var f float64
	if json.Unmarshal(val, &f) != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, false
	}
	return int64(f), true
}

func wantMessage(k argKind) msgID {
	switch k {
	case kindString:
		return msgErrWantString
	case kindInt:
		return msgErrWantInteger
	case kindBool:
		return msgErrWantBoolean
	case kindStringList:
		return msgErrWantStringList
	case kindObject:
		return msgErrNotObject
	}
	return msgErrWantValue
}

func checkBounds(m *messages, f argField, n int) error {
	switch {
	case f.min == nil:
		return nil
	case f.max != nil && (n < *f.min || n > *f.max):
		return api.Invalid(f.name, "%s", m.get(msgErrRange, *f.min, *f.max))
	case f.max == nil && n < *f.min:
		return api.Invalid(f.name, "%s", m.get(msgErrMin, *f.min))
	}
	return nil
}

// inputSchema is the JSON schema of In as the SDK would infer it, made
// portable (see portable), plus the bounds of its integer arguments, and
// with the numbers of its descriptions filled in.
func inputSchema[In any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[In](nil)
	if err != nil {
		return nil, err
	}
	portable(s)
	spec := argSpecFor(reflect.TypeFor[In]())
	for _, f := range spec.fields {
		p := s.Properties[f.name]
		if p == nil {
			continue
		}
		if f.min != nil {
			p.Minimum = jsonschema.Ptr(float64(*f.min))
		}
		if f.max != nil {
			p.Maximum = jsonschema.Ptr(float64(*f.max))
		}
		p.Description = expand(p.Description, f.bounds())
	}
	return s, nil
}

// outputSchema is the JSON schema of the structured content Out, made
// portable: the content itself never holds a null (see fillNil).
func outputSchema[Out any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[Out](nil)
	if err != nil {
		return nil, err
	}
	portable(s)
	return s, nil
}

// portable rewrites the type unions the schema inference writes for Go
// slices and pointers (["null", "array"], ["null", "boolean"]) as the one
// type, throughout s. Clients that map tool schemas onto a dialect with a
// single type per schema (Gemini's function declarations, an OpenAPI
// subset) reject or mangle a union; the inspector's --strict check warns on
// each. Nothing is lost: an argument left out and an argument sent as null
// are the same to decodeArgs, and the structured content never holds a
// null (an optional field is omitted, a list is [] when empty: fillNil).
func portable(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && slices.Contains(s.Types, "null") {
		t := s.Types[0]
		if t == "null" {
			t = s.Types[1]
		}
		s.Type, s.Types = t, nil
	}
	for _, p := range s.Properties {
		portable(p)
	}
	for _, p := range s.PatternProperties {
		portable(p)
	}
	for _, d := range s.Defs {
		portable(d)
	}
	for _, sub := range [][]*jsonschema.Schema{s.AllOf, s.AnyOf, s.OneOf, s.PrefixItems} {
		for _, p := range sub {
			portable(p)
		}
	}
	for _, p := range []*jsonschema.Schema{s.Items, s.AdditionalProperties, s.AdditionalItems, s.Contains, s.Not} {
		portable(p)
	}
}

// fillNil replaces, in the struct v points to and in every struct it holds,
// each nil slice of a field that is always marshalled (no omitempty) by an
// empty one, so that the structured content has [] where its schema says
// "array", never null. What to visit in each type is worked out once
// (fillPlanFor): a call walks only the fields that can hold such a slice.
func fillNil(v any) {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer && !rv.IsNil() {
		fillNilValue(rv.Elem())
	}
}

func fillNilValue(v reflect.Value) {
	p := fillPlanFor(v.Type())
	if p == nil {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			fillNilValue(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			fillNilValue(v.Index(i))
		}
	case reflect.Struct:
		for _, i := range p.fill {
			if fv := v.Field(i); fv.IsNil() && fv.CanSet() {
				fv.Set(reflect.MakeSlice(fv.Type(), 0, 0))
			}
		}
		for _, i := range p.walk {
			fillNilValue(v.Field(i))
		}
	}
}

// fillPlan is what fillNil does in a value of one type: for a struct, the
// fields to fill (nil slices marshalled as null) and those to walk into; for
// a pointer or a slice, to walk into its elements. A type with nothing to
// fill anywhere inside has no plan.
type fillPlan struct {
	fill, walk []int
}

var fillPlans sync.Map // reflect.Type -> *fillPlan (nil: nothing to do)

func fillPlanFor(t reflect.Type) *fillPlan {
	if p, ok := fillPlans.Load(t); ok {
		return p.(*fillPlan)
	}
	p := makeFillPlan(t, map[reflect.Type]bool{})
	actual, _ := fillPlans.LoadOrStore(t, p)
	return actual.(*fillPlan)
}

// makeFillPlan works out the plan of t; seen holds the types being worked
// out, so that a recursive type is walked (conservatively) rather than
// looping.
func makeFillPlan(t reflect.Type, seen map[reflect.Type]bool) *fillPlan {
	if seen[t] {
		return &fillPlan{}
	}
	seen[t] = true
	defer delete(seen, t)
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice:
		if makeFillPlan(t.Elem(), seen) != nil {
			return &fillPlan{}
		}
	case reflect.Struct:
		p := &fillPlan{}
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			_, opts, _ := strings.Cut(tag, ",")
			omitted := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			if f.Type.Kind() == reflect.Slice && !omitted {
				p.fill = append(p.fill, i)
			}
			if makeFillPlan(f.Type, seen) != nil {
				p.walk = append(p.walk, i)
			}
		}
		if len(p.fill) > 0 || len(p.walk) > 0 {
			return p
		}
	}
	return nil
}

// argName renders an argument name the client made up: escaped, and cut so
// that a huge key cannot flood the error line.
func argName(k string) string {
	const maxRunes = 64
	if r := []rune(k); len(r) > maxRunes {
		k = string(r[:maxRunes]) + "…"
	}
	return escape(k)
}
