package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
	"github.com/vaultmcp/vaultmcp/internal/jsonx"
)

// randomText is a string of printable ASCII with, now and then, what a
// JSON encoder must take care of: quotes, backslashes, every control
// character, HTML characters, U+2028/U+2029, other UTF-8, invalid bytes.
func randomText(r *rand.Rand) string {
	special := []string{`"`, `\`, "<", ">", "&", "\u2028", "\u2029", "é", "日本", "🙂", "\u202e", "\xff", "\xe2\x80", "\x7f", "\ufffd"}
	var b strings.Builder
	for range r.IntN(64) {
		switch r.IntN(10) {
		case 0:
			b.WriteByte(byte(r.IntN(0x20)))
		case 1:
			b.WriteString(special[r.IntN(len(special))])
		default:
			b.WriteByte(byte(0x20 + r.IntN(0x5f)))
		}
	}
	return b.String()
}

// The hand-written string encoder writes exactly the bytes encoding/json
// writes (without HTML escaping), for every byte value at every offset of
// the eight-byte scan and for random texts.
func TestAppendJSONStringAsEncodingJSON(t *testing.T) {
	check := func(s string) {
		t.Helper()
		want, err := jsonx.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonrpcio.AppendString(nil, s); !bytes.Equal(got, want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want)
		}
	}
	plain := "abcdefghijklmnopqrstuvwxyz0123456789"
	for c := 0; c < 256; c++ {
		for pos := 0; pos < 17; pos++ {
			check(plain[:pos] + string([]byte{byte(c)}) + plain[pos:20])
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 20000 {
		check(randomText(r))
	}
}

// Scores are written as encoding/json writes a float64, exponents and
// negative zero included; what it refuses (NaN, infinities) is refused.
func TestAppendFloatAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	values := []float64{0, math.Copysign(0, -1), 1, -1, 7.94, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789e13, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1 + 0.2}
	for range 20000 {
		values = append(values, math.Float64frombits(r.Uint64()), r.Float64()*20, r.NormFloat64()*math.Pow(10, float64(r.IntN(60)-30)))
	}
	for _, f := range values {
		want, err := jsonx.Marshal(f)
		got, ok := appendFloat(nil, f)
		if err != nil {
			if ok {
				t.Errorf("appendFloat(%v) = %s, encoding/json refuses it", f, got)
			}
			continue
		}
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("appendFloat(%v) = %s, encoding/json %s", f, got, want)
		}
	}
}

// randomSearchOutput is a searchOutput with every field now set, now
// empty, now nil.
func randomSearchOutput(r *rand.Rand) *searchOutput {
	list := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		l := make([]string, 1+r.IntN(4))
		for i := range l {
			l[i] = randomText(r)
		}
		return l
	}
	out := &searchOutput{Query: randomText(r), Suggestions: list(), Unindexed: list(), UnindexedTotal: r.IntN(3) * r.IntN(1000), RawMatches: r.IntN(2) == 0}
	if r.IntN(10) > 0 {
		out.Results = make([]searchHit, r.IntN(8))
	}
	for i := range out.Results {
		out.Results[i] = searchHit{
			Path: randomText(r), Line: r.IntN(5000), EndLine: r.IntN(5000) - r.IntN(2), Title: randomText(r),
			Headings: list(), Score: r.NormFloat64() * math.Pow(10, float64(r.IntN(30)-15)),
			ViaGraph: r.IntN(2) == 0, Fuzzy: r.IntN(2) == 0, Truncated: r.IntN(2) == 0,
		}
		if r.IntN(4) == 0 {
			out.Results[i].Explain = &api.HitExplanation{
				Terms:       []api.TermMatch{{Term: randomText(r), Fields: []string{"title", "prose"}, Match: "stem", As: list()}},
				TitlePhrase: list(), GraphFrom: randomText(r), GraphLink: "out",
			}
		}
	}
	return out
}

// vault_search's structured content is written by hand exactly as
// encoding/json writes it.
func TestAppendSearchOutputAsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 3000 {
		out := randomSearchOutput(r)
		want, err := jsonx.Marshal(out)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendSearchOutput(nil, out)
		if !ok || !bytes.Equal(got, want) {
			t.Fatalf("appendSearchOutput:\n%s\nencoding/json:\n%s", got, want)
		}
	}
	out := &searchOutput{Results: []searchHit{{Score: math.NaN()}}}
	if _, ok := appendSearchOutput(nil, out); ok {
		t.Error("a NaN score was written")
	}
}

// capturing is a receiving middleware, outside oneEncoding, that keeps the
// wireResults it returns.
type capturing struct {
	mu      sync.Mutex
	results []*wireResult
}

func (c *capturing) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		c.mu.Lock()
		defer c.mu.Unlock()
		switch w := res.(type) {
		case *wireResult:
			c.results = append(c.results, w)
		case *inPlaceResult:
			c.results = append(c.results, w.wireResult)
		}
		return res, err
	}
}

// Every tool answer of wireCalls (all tools, hostile text, explanations,
// errors, writes with diffs) is written by appendJSON exactly as
// encoding/json writes the same wireResult, with random structured content
// of other tools' types as well.
func TestAppendWireResultAsEncodingJSON(t *testing.T) {
	ctx := context.Background()
	capture := &capturing{}
	s := New(newFakeWriter(), Options{})
	s.AddReceivingMiddleware(capture.middleware)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cs.Close()
		_ = ss.Wait()
	}()
	for _, c := range wireCalls {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args}); err != nil {
			t.Fatal(err)
		}
	}
	capture.mu.Lock()
	results := capture.results
	capture.mu.Unlock()
	if len(results) != len(wireCalls) {
		t.Fatalf("%d results captured, want %d", len(results), len(wireCalls))
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 500 {
		w := newWireResult(&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: randomText(r)}}, IsError: r.IntN(2) == 0})
		switch r.IntN(3) {
		case 0:
			w.StructuredContent = randomSearchOutput(r)
		case 1:
			w.StructuredContent = map[string]any{"path": randomText(r), "n": r.IntN(9), "tags": []string{randomText(r)}}
		}
		results = append(results, w)
	}
	for i, w := range results {
		want, err := jsonx.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := w.appendJSON(nil)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("answer %d: appendJSON\n%s\nencoding/json\n%s", i, got, want)
		}
	}
}

// stdioAnswers makes wireCalls on a server over the stdio transport
// (jsonrpcio, over pipes) through the SDK's client of the given protocol
// version, and returns the results of the frames the server wrote.
func stdioAnswers(t *testing.T, protocol string) []json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- New(newFakeWriter(), Options{}).Run(ctx, &jsonrpcio.Transport{Reader: inR, Writer: outW})
		_ = outW.Close()
	}()
	var mu sync.Mutex
	var frames [][]byte
	tapR, tapW := io.Pipe()
	go func() {
		lines := newLineSplitter(outR)
		for lines.Scan() {
			mu.Lock()
			frames = append(frames, append([]byte(nil), lines.Bytes()...))
			mu.Unlock()
			if _, err := tapW.Write(append(lines.Bytes(), '\n')); err != nil {
				return
			}
		}
		_ = tapW.Close()
	}()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: tapR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: protocol})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range wireCalls {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if len(res.Content) == 0 {
			t.Fatalf("%s: no content", c.tool)
		}
	}
	_ = cs.Close()
	_ = inW.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	var results []json.RawMessage
	for _, f := range frames {
		if bytes.Contains(f, jsonrpcio.Placeholder) {
			t.Fatalf("the placeholder reached the client: %s", f)
		}
		var env struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(f, &env); err != nil {
			t.Fatalf("frame %q: %v", f, err)
		}
		if env.Result["content"] != nil {
			raw, _ := json.Marshal(env.Result)
			results = append(results, raw)
		}
	}
	return results
}

// Over stdio every tool answer is written by the hand-written encoder into
// the frame, and is the same JSON value as the SDK's own encoding, for
// clients of either protocol generation.
func TestStdioAnswersAsSDK(t *testing.T) {
	for _, protocol := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(protocol, func(t *testing.T) {
			got, sdk := stdioAnswers(t, protocol), answers(t, true, protocol)
			if len(got) != len(sdk) {
				t.Fatalf("%d answers over stdio, %d from the SDK", len(got), len(sdk))
			}
			for i, c := range wireCalls {
				var g, s any
				_ = json.Unmarshal(got[i], &g)
				_ = json.Unmarshal(sdk[i], &s)
				if !reflect.DeepEqual(g, s) {
					t.Errorf("%s: over stdio\n%s\nSDK's\n%s", c.tool, got[i], sdk[i])
				}
			}
		})
	}
}

// newLineSplitter reads the lines of r, however long.
func newLineSplitter(r io.Reader) *bufio.Scanner {
	s := bufio.NewScanner(r)
	s.Buffer(nil, 1<<24)
	return s
}
