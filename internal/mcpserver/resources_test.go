package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// notesBackend serves notes in pages of page characters, as the vault
// does, reports changes to its subscriber (api.ChangeNotifier) and
// completes paths (api.PathCompleter).
type notesBackend struct {
	*fakeBackend
	page int

	mu       sync.Mutex
	notes    map[string]string
	onPage   func(req api.NoteRequest) // runs before each page when set
	notify   func(string)
	subCtx   context.Context
	prefixes []string
}

func newNotesBackend(notes map[string]string) *notesBackend {
	return &notesBackend{fakeBackend: newFake(), page: 7, notes: notes}
}

func (n *notesBackend) GetNote(_ context.Context, req api.NoteRequest) (*api.Note, error) {
	n.mu.Lock()
	hook := n.onPage
	n.mu.Unlock()
	if hook != nil {
		hook(req)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if strings.Contains(req.Path, "..") {
		return nil, codedErr{"PATH_ESCAPE", "PATH_ESCAPE: " + req.Path + ": climbs out of the vault"}
	}
	text, ok := n.notes[req.Path]
	if !ok {
		return nil, &api.Error{Code: api.CodeNotFound, Message: "no such note"}
	}
	sum := sha256.Sum256([]byte(text))
	r := []rune(text)
	end := min(req.Offset+n.page, len(r))
	out := &api.Note{Path: req.Path, Content: string(r[req.Offset:end]), Offset: req.Offset, TotalChars: len(r), SHA256: hex.EncodeToString(sum[:])}
	if end < len(r) {
		out.NextOffset = end
	}
	return out, nil
}

func (n *notesBackend) Subscribe(ctx context.Context, fn func(string)) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.notify, n.subCtx = fn, ctx
}

func (n *notesBackend) changed(p string) {
	n.mu.Lock()
	fn := n.notify
	n.mu.Unlock()
	fn(p)
}

func (n *notesBackend) CompletePaths(_ context.Context, prefix string, limit int) ([]string, int, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.prefixes = append(n.prefixes, prefix)
	var paths []string
	for p := range n.notes {
		paths = append(paths, p)
	}
	out, total := api.MatchPaths(paths, prefix, limit)
	return out, total, nil
}

func readResource(t *testing.T, cs *mcp.ClientSession, uri string) (string, error) {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != "text/markdown" {
		t.Fatalf("%s: contents %+v", uri, res.Contents)
	}
	return res.Contents[0].Text, nil
}

func rpcCode(err error) int64 {
	var e *jsonrpc.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// TestNoteResources: the notes are resources under vault://note/, read
// whole through the backend's paged GetNote (the gatekeeper's refusals
// come back as errors), with either spelling of the path.
func TestNoteResources(t *testing.T) {
	long := strings.Repeat("Zwölf Boxkämpfer jagen Viktor quer über den Sylter Deich.\n", 5)
	b := newNotesBackend(map[string]string{"02-wiki/go/retry.md": long, "Slow Query.md": "# Slow\n"})
	cs := connect(t, New(b, Options{}), nil)

	tmpls, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil || len(tmpls.ResourceTemplates) != 1 {
		t.Fatalf("templates: %v %v", tmpls, err)
	}
	if tp := tmpls.ResourceTemplates[0]; tp.URITemplate != "vault://note/{+path}" || tp.MIMEType != "text/markdown" || !strings.Contains(tp.Description, "1,000,000 characters") {
		t.Errorf("template %+v", tp)
	}
	for _, uri := range []string{"vault://note/02-wiki/go/retry.md", "vault://note/02-wiki%2Fgo%2Fretry.md"} {
		got, err := readResource(t, cs, uri)
		if err != nil || got != long {
			t.Errorf("%s: %v, %d of %d characters", uri, err, utf8.RuneCountInString(got), utf8.RuneCountInString(long))
		}
	}
	if got, err := readResource(t, cs, "vault://note/Slow%20Query.md"); err != nil || got != "# Slow\n" {
		t.Errorf("escaped space: %q %v", got, err)
	}

	_, err = readResource(t, cs, "vault://note/missing.md")
	if rpcCode(err) != mcp.CodeResourceNotFound {
		t.Errorf("missing note: %v", err)
	}
	_, err = readResource(t, cs, "vault://note/..%2F..%2Fetc%2Fpasswd")
	if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "PATH_ESCAPE: ../../etc/passwd") {
		t.Errorf("escape: %v", err)
	}
	_, err = readResource(t, cs, "vault://note/")
	if rpcCode(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), "uri") {
		t.Errorf("no path: %v", err)
	}

	// A note that changes between two pages is read again from the start.
	pages := 0
	b.mu.Lock()
	b.onPage = func(req api.NoteRequest) {
		if req.Offset > 0 {
			if pages++; pages == 1 {
				b.mu.Lock()
				b.notes["02-wiki/go/retry.md"] = long + "edited\n"
				b.mu.Unlock()
			}
		}
	}
	b.mu.Unlock()
	if got, err := readResource(t, cs, "vault://note/02-wiki/go/retry.md"); err != nil || got != long+"edited\n" {
		t.Errorf("read during an edit: %v, %q", err, got)
	}

	// One that never stops changing is refused after three tries.
	b.mu.Lock()
	b.onPage = func(req api.NoteRequest) {
		b.mu.Lock()
		b.notes["02-wiki/go/retry.md"] += "x"
		b.mu.Unlock()
	}
	b.mu.Unlock()
	if _, err := readResource(t, cs, "vault://note/02-wiki/go/retry.md"); !strings.Contains(err.Error(), "CONFLICT: uri: 02-wiki/go/retry.md kept changing") {
		t.Errorf("ever-changing note: %v", err)
	}

	b.mu.Lock()
	b.onPage = nil
	b.notes["big.md"] = strings.Repeat("x", maxResourceChars+1)
	b.page = maxResourceChars
	b.mu.Unlock()
	if _, err := readResource(t, cs, "vault://note/big.md"); !strings.Contains(err.Error(), "TOO_LARGE: uri: big.md has 1000001 characters") {
		t.Errorf("too large: %v", err)
	}
}

// legacyProtocol is the newest protocol version before subscriptions moved
// to subscriptions/listen: the one clients such as the conformance suite
// speak, where resources/subscribe and resources/unsubscribe are requests
// answered at once.
const legacyProtocol = "2025-11-25"

// connectVersion is connect with the protocol version the client asks for.
func connectVersion(t *testing.T, srv *mcp.Server, copts *mcp.ClientOptions, version string) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0.0.1"}, copts)
	cs, err := client.Connect(ctx, ct, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.InitializeResult().ProtocolVersion; version != "" && got != version {
		t.Fatalf("protocol %s, want %s", got, version)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		_ = ss.Wait()
	})
	return cs
}

// TestNoteSubscriptions: a client subscribed to a note hears of the
// changes the backend reports, under every spelling it subscribed with,
// and no more once it unsubscribed; other schemes are accepted.
func TestNoteSubscriptions(t *testing.T) {
	b := newNotesBackend(map[string]string{"a.md": "# A\n", "c.md": "# C\n"})
	updates := make(chan string, 16)
	cs := connectVersion(t, New(b, Options{}), &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
	}, legacyProtocol)
	if caps := cs.InitializeResult().Capabilities; caps.Resources == nil || !caps.Resources.Subscribe || caps.Completions == nil {
		t.Fatalf("capabilities %+v", caps)
	}
	ctx := context.Background()
	sub := func(uri string) error { return cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}) }
	unsub := func(uri string) error { return cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: uri}) }
	for _, uri := range []string{"vault://note/a.md", "vault://note/./x/../a.md", "vault://note/c.md", "test://watched-resource"} {
		if err := sub(uri); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	for _, uri := range []string{"vault://note/", "vault://note/..%2Fa.md", "vault://note/%zz"} {
		if err := sub(uri); rpcCode(err) != jsonrpc.CodeInvalidParams {
			t.Errorf("subscribe %s: %v", uri, err)
		}
	}
	receive := func(want ...string) {
		t.Helper()
		var got []string
		timeout := time.After(10 * time.Second)
		for len(got) < len(want) {
			select {
			case u := <-updates:
				got = append(got, u)
			case <-timeout:
				t.Fatalf("updates %q, want %q", got, want)
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("updates %q, want %q", got, want)
		}
	}
	b.changed("a.md")
	receive("vault://note/a.md", "vault://note/./x/../a.md")
	b.changed("b.md") // nobody subscribed
	b.changed("c.md")
	receive("vault://note/c.md")

	for _, uri := range []string{"vault://note/a.md", "vault://note/./x/../a.md"} {
		if err := unsub(uri); err != nil {
			t.Fatal(err)
		}
	}
	b.changed("a.md")
	b.changed("c.md")
	receive("vault://note/c.md")
	select {
	case u := <-updates:
		t.Errorf("update %s after unsubscribing", u)
	default:
	}

	// A backend that cannot tell of changes offers no subscription.
	plain := connect(t, New(newFake(), Options{}), nil)
	if caps := plain.InitializeResult().Capabilities; caps.Resources == nil || caps.Resources.Subscribe {
		t.Errorf("capabilities without a notifier: %+v", caps.Resources)
	}
}

// TestNoteSubscriptionsListen: a client of the newest protocol, which
// subscribes through subscriptions/listen, hears of changes too.
func TestNoteSubscriptionsListen(t *testing.T) {
	b := newNotesBackend(map[string]string{"a.md": "# A\n"})
	updates := make(chan string, 16)
	cs := connectVersion(t, New(b, Options{}), &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			updates <- req.Params.URI
		},
	}, "")
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "vault://note/a.md"}); err != nil {
		t.Fatal(err)
	}
	// The subscription is set up in the background: report the change
	// until it is heard.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		b.mu.Lock()
		started := b.notify != nil
		b.mu.Unlock()
		if started {
			b.changed("a.md")
		}
		select {
		case u := <-updates:
			if u != "vault://note/a.md" {
				t.Errorf("update %s", u)
			}
			return
		case <-deadline:
			t.Fatal("no update heard")
		case <-tick.C:
		}
	}
}

// TestSubscriptionsEndWithTheServer: the backend's subscription ends with
// Options.Context.
func TestSubscriptionsEndWithTheServer(t *testing.T) {
	b := newNotesBackend(map[string]string{"a.md": "# A\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cs := connectVersion(t, New(b, Options{Context: ctx}), nil, legacyProtocol)
	if err := cs.Subscribe(context.Background(), &mcp.SubscribeParams{URI: "vault://note/a.md"}); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	sctx := b.subCtx
	b.mu.Unlock()
	if sctx == nil || sctx.Err() != nil {
		t.Fatal("the backend subscription did not start")
	}
	cancel()
	if sctx.Err() == nil {
		t.Error("the backend subscription outlived the server's context")
	}
}

func completeArg(t *testing.T, cs *mcp.ClientSession, ref *mcp.CompleteReference, name, value string) mcp.CompletionResultDetails {
	t.Helper()
	res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: name, Value: value}})
	if err != nil {
		t.Fatalf("complete %v %s=%q: %v", ref, name, value, err)
	}
	return res.Completion
}

// TestCompletion: the note template's path completes with note paths (the
// backend's own completion, or its note list), record_learning's domain
// with the domains, anything else with an empty list.
func TestCompletion(t *testing.T) {
	note := &mcp.CompleteReference{Type: "ref/resource", URI: noteTemplate}
	b := newNotesBackend(map[string]string{"02-wiki/go/retry-backoff.md": "", "02-wiki/go/context.md": "", "README.md": ""})
	cs := connect(t, New(b, Options{}), nil)
	if got := completeArg(t, cs, note, "path", "02-wiki/go/"); !slices.Equal(got.Values, []string{"02-wiki/go/context.md", "02-wiki/go/retry-backoff.md"}) || got.Total != 2 || got.HasMore {
		t.Errorf("paths: %+v", got)
	}
	if got := completeArg(t, cs, &mcp.CompleteReference{Type: "ref/resource", URI: "vault://note/{path}"}, "path", "retry"); !slices.Equal(got.Values, []string{"02-wiki/go/retry-backoff.md"}) {
		t.Errorf("by name, simple template: %+v", got)
	}
	if !slices.Equal(b.prefixes, []string{"02-wiki/go/", "retry"}) {
		t.Errorf("backend asked for %q", b.prefixes)
	}

	// A backend without its own completion: filtered from List.
	fake := newFake()
	fake.list = &api.ListResult{}
	for i := range 150 {
		fake.list.Notes = append(fake.list.Notes, api.NoteSummary{Path: fmt.Sprintf("02-wiki/ops/n%03d.md", i)})
	}
	fake.list.Notes = append(fake.list.Notes, api.NoteSummary{Path: "02-wiki/go/a.md"})
	cs = connect(t, New(newFakeWriterWith(fake), Options{}), nil)
	got := completeArg(t, cs, note, "path", "02-wiki/ops/")
	if len(got.Values) != 100 || got.Total != 150 || !got.HasMore || got.Values[0] != "02-wiki/ops/n000.md" {
		t.Errorf("from List: %d values, total %d, hasMore %v", len(got.Values), got.Total, got.HasMore)
	}
	learn := &mcp.CompleteReference{Type: "ref/prompt", Name: "record_learning"}
	if got := completeArg(t, cs, learn, "domain", "O"); !slices.Equal(got.Values, []string{"ops"}) {
		t.Errorf("domains: %+v", got)
	}
	if got := completeArg(t, cs, learn, "domain", ""); !slices.Equal(got.Values, []string{"go", "ops"}) {
		t.Errorf("all domains: %+v", got)
	}
	for _, ref := range []*mcp.CompleteReference{{Type: "ref/prompt", Name: "test_prompt_with_arguments"}, {Type: "ref/resource", URI: "test://x/{id}"}} {
		if got := completeArg(t, cs, ref, "arg1", "test"); got.Values == nil || len(got.Values) != 0 {
			t.Errorf("%v: %+v, want an empty list", ref, got)
		}
	}
}

// newFakeWriterWith is a writing backend whose read side is f.
func newFakeWriterWith(f *fakeBackend) *fakeWriter {
	w := newFakeWriter()
	w.fakeBackend = f
	return w
}

// TestPrompts: recall and record_learning are listed (record_learning only
// where vault_learn is), and each gives a user message built from its
// arguments; recall carries the search already made.
func TestPrompts(t *testing.T) {
	for _, lang := range []string{"en", "pt"} {
		t.Run(lang, func(t *testing.T) {
			m := newMessages(lang)
			w := newFakeWriter()
			cs := connect(t, New(w, Options{Lang: lang}), nil)
			ctx := context.Background()
			list, err := cs.ListPrompts(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, p := range list.Prompts {
				names = append(names, p.Name)
				if p.Description == "" || p.Title == "" || len(p.Arguments) == 0 || !p.Arguments[0].Required {
					t.Errorf("prompt %+v", p)
				}
			}
			slices.Sort(names)
			if !slices.Equal(names, []string{"recall", "record_learning"}) {
				t.Errorf("prompts %q", names)
			}

			res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "recall", Arguments: map[string]string{"topic": "deploy steps"}})
			if err != nil || len(res.Messages) != 1 || res.Messages[0].Role != "user" {
				t.Fatalf("recall: %v %+v", err, res)
			}
			txt := res.Messages[0].Content.(*mcp.TextContent).Text
			want := m.get(msgPromptRecall, "deploy steps") + "\n\n" + renderSearch(m, api.SearchRequest{Query: "deploy steps"}, w.search)
			if txt != want {
				t.Errorf("recall text:\n%s\nwant\n%s", txt, want)
			}
			if reqs := w.recorded(); len(reqs) != 1 || !reflect.DeepEqual(reqs[0], api.SearchRequest{Query: "deploy steps"}) {
				t.Errorf("backend got %v", reqs)
			}
			if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "recall", Arguments: map[string]string{"topic": "  "}}); !strings.Contains(fmtErr(err), "INVALID_ARGUMENT: topic: ") {
				t.Errorf("recall without a topic: %v", err)
			}

			res, err = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "record_learning", Arguments: map[string]string{"learning": "Retry only idempotent calls.\nSeen in \x1b[2Jbilling."}})
			if err != nil {
				t.Fatal(err)
			}
			txt = res.Messages[0].Content.(*mcp.TextContent).Text
			if !strings.Contains(txt, "vault_learn") || !strings.HasSuffix(txt, "\n\n> Retry only idempotent calls.\n> Seen in \\x1b[2Jbilling.") {
				t.Errorf("record_learning text:\n%s", txt)
			}
			res, _ = cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "record_learning", Arguments: map[string]string{"learning": "x", "domain": "postgres"}})
			if txt := res.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(txt, m.get(msgPromptLearnDomain, "postgres")) {
				t.Errorf("with a domain:\n%s", txt)
			}
		})
	}

	ro := connect(t, New(newFakeWriter(), Options{ReadOnly: true}), nil)
	list, err := ro.ListPrompts(context.Background(), nil)
	if err != nil || len(list.Prompts) != 1 || list.Prompts[0].Name != "recall" {
		t.Errorf("read-only prompts: %v %v", list, err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestUnknownTool: a call of a tool the server does not offer is an isError
// result naming the tools it offers, as the conformance suite expects; a
// write tool left out in read-only mode says so.
func TestUnknownTool(t *testing.T) {
	cs := connect(t, New(newFake(), Options{}), nil)
	res := call(t, cs, "test_error_handling", map[string]any{})
	want := `INVALID_ARGUMENT: name: no tool named "test_error_handling"; the tools of this server are vault_search, vault_get_note, vault_list, vault_backlinks, vault_graph, vault_history`
	if got := text(t, res); !res.IsError || got != want {
		t.Errorf("unknown tool: isError=%v %q, want %q", res.IsError, got, want)
	}
	res = call(t, cs, "evil\x1b[2J", nil)
	if got := text(t, res); !res.IsError || !strings.Contains(got, `"evil\x1b[2J"`) {
		t.Errorf("hostile name: %q", got)
	}
	ro := connect(t, New(newFakeWriter(), Options{ReadOnly: true, Lang: "pt"}), nil)
	res = call(t, ro, "vault_write_note", map[string]any{"path": "a.md", "content": ""})
	if got := text(t, res); !res.IsError || got != "READ_ONLY: vault_write_note não é oferecida: este servidor dá acesso somente de leitura ao cofre" {
		t.Errorf("read-only: %q", got)
	}
}
