package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
)

// bigSearch is a search result at the limits: 50 hits quoting 8,000
// characters in all, one hit in ten carrying characters to escape.
func bigSearch() *api.SearchResult {
	res := &api.SearchResult{Query: "how do we deploy the api"}
	line := strings.Repeat("word ", 31) // 155 characters
	for i := range api.MaxSearchLimit {
		snippet := line + "\n"
		if i%10 == 0 {
			snippet += "colour \x1b[31m and override \u202e here\n"
		}
		res.Results = append(res.Results, api.SearchHit{
			Path: fmt.Sprintf("02-wiki/ops/note-%02d.md", i), Line: 10 + i, Title: "Note",
			Headings: []string{"Deploy", "Steps"}, Score: 10 - float64(i)/10, Snippet: snippet,
		})
	}
	return res
}

func BenchmarkRenderSearch(b *testing.B) {
	m := newMessages("en")
	res := bigSearch()
	b.ReportAllocs()
	for b.Loop() {
		_ = renderSearch(m, api.SearchRequest{}, res)
	}
}

// BenchmarkCallSearch is one vault_search over the in-memory transport:
// argument decoding, the (canned) backend, rendering, JSON both ways.
func BenchmarkCallSearch(b *testing.B) {
	fake := newFake()
	fake.search = bigSearch()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(fake, Options{}).Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cs.Close()
		_ = ss.Wait()
	}()
	params := &mcp.CallToolParams{Name: "vault_search", Arguments: map[string]any{"query": "deploy api", "limit": 50}}
	b.ReportAllocs()
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkRenderWrite renders a write whose diff is twice the text bound
// (about 40,000 characters, one line in ten carrying characters to escape).
func BenchmarkRenderWrite(b *testing.B) {
	m := newMessages("en")
	var diff strings.Builder
	for i := 0; diff.Len() < 2*maxDiffText; i++ {
		diff.WriteString("+" + strings.Repeat("word ", 15))
		if i%10 == 0 {
			diff.WriteString("\x1b[31m ``` \u202e")
		}
		diff.WriteString("\n")
	}
	res := &api.WriteResult{Action: api.ActionCreated, Path: "02-wiki/go/big.md", Files: []string{"02-wiki/go/big.md"},
		Committed: true, Version: "3b18e512dba79e4c8300dd08aeb37f8e728b8dad", Diff: diff.String()}
	b.ReportAllocs()
	for b.Loop() {
		_ = renderWrite(m, res, "")
	}
}

// BenchmarkCallSearchWire is one vault_search as a stdio client sees it,
// with no client library: the request frame written to the server's input,
// the answer frame read whole from its output (argument decoding, the
// canned backend, rendering, the JSON encoding, the pipes), over the
// transport `vaultmcp serve` uses (jsonrpcio) and over the SDK's.
func BenchmarkCallSearchWire(b *testing.B) {
	b.Run("jsonrpcio", func(b *testing.B) {
		benchCallSearchWire(b, func(r io.Reader, w io.Writer) mcp.Transport { return &jsonrpcio.Transport{Reader: r, Writer: w} })
	})
	b.Run("sdk", func(b *testing.B) {
		benchCallSearchWire(b, func(r io.Reader, w io.Writer) mcp.Transport {
			return &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}}
		})
	})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func benchCallSearchWire(b *testing.B, transport func(io.Reader, io.Writer) mcp.Transport) {
	fake := newFake()
	fake.search = bigSearch()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- New(fake, Options{}).Run(ctx, transport(inR, outW)) }()
	defer func() {
		inW.Close()
		outR.Close()
		<-done
	}()
	out := bufio.NewReaderSize(outR, 1<<20)
	send := func(frame string) {
		if _, err := io.WriteString(inW, frame+"\n"); err != nil {
			b.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	if _, err := out.ReadSlice('\n'); err != nil {
		b.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	var size int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","params":{"name":"vault_search","arguments":{"query":"deploy api","limit":50}}}`)
		line, err := out.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if !bytes.Contains(line, []byte(`"structuredContent"`)) || bytes.Contains(line, []byte(`"isError":true`)) {
			b.Fatalf("answer %.300s", line)
		}
		size = len(line)
	}
	b.ReportMetric(float64(size), "answer-bytes")
}
