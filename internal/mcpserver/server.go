// Package mcpserver exposes a vault (any api.Backend: the local vault or the
// team REST client) as MCP tools. It validates arguments, calls the backend,
// and renders each result twice: as text for the model and as structured
// content (the api result itself; for vault_search a compact form of it that
// does not repeat the quoted lines, search.go), encoded once (wire.go; over
// stdio by a hand-written encoder straight into the frame, encode.go). It
// also offers the notes as resources (resources.go: read, subscribe),
// completion of note paths, and prompts a person picks in a client's menu
// (prompts.go). It knows nothing of files.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Options configure the server.
type Options struct {
	// Lang is the language of every text this package renders: "en"
	// (default) or "pt".
	Lang string
	// ReadOnly leaves the write tools unregistered.
	ReadOnly bool
	// Version is reported to clients in the handshake.
	Version string
	// Logger receives the server's logs; nil discards them.
	Logger *slog.Logger
	// Context is the server's lifetime: the backend's change notifications
	// (resource subscriptions) stop when it is done. nil means the
	// process's lifetime.
	Context context.Context

	// sdkEncoding leaves the tool results to the SDK's encoding (see
	// oneEncoding), for the tests that compare the two.
	sdkEncoding bool
}

// New returns an MCP server whose tools call b. The write tools are
// registered only when b is also an api.Writer and opts.ReadOnly is false;
// the instructions sent to the client follow the tools registered.
func New(b api.Backend, opts Options) *mcp.Server {
	return newServer(b, opts, registry())
}

func newServer(b api.Backend, opts Options, tools []registration) *mcp.Server {
	env := &env{
		backend: b,
		msg:     newMessages(opts.Lang),
		log:     opts.Logger,
		team:    isTeam(b),
	}
	if env.log == nil {
		env.log = slog.New(slog.DiscardHandler)
	}
	version := opts.Version
	if version == "" {
		version = "dev"
	}
	var offered []registration
	names := map[string]bool{}
	known := map[string]bool{}
	for _, t := range tools {
		known[t.name] = true
		if opts.ReadOnly && t.effect != effectRead {
			continue
		}
		if t.available != nil && !t.available(b) {
			continue
		}
		offered = append(offered, t)
		names[t.name] = true
	}
	sopts := &mcp.ServerOptions{
		Instructions:      instructions(env.msg, names),
		Logger:            env.log,
		CompletionHandler: complete(env),
	}
	var subs *subscriptions
	if n, ok := b.(api.ChangeNotifier); ok {
		ctx := opts.Context
		if ctx == nil {
			ctx = context.Background()
		}
		subs = newSubscriptions(ctx, n, env.log)
		sopts.SubscribeHandler, sopts.UnsubscribeHandler = subs.subscribe, subs.unsubscribe
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "vaultmcp", Title: "vaultmcp", Version: version}, sopts)
	if subs != nil {
		subs.server = s
	}
	for _, t := range offered {
		t.add(s, env)
	}
	addNoteResources(s, env)
	addPrompts(s, env, names)
	s.AddReceivingMiddleware(unknownTool(env.msg, offered, known), checkLogLevel())
	if !opts.sdkEncoding {
		s.AddReceivingMiddleware(oneEncoding()) // outermost: added last
	}
	return s
}

// unknownTool answers a call of a tool this server does not offer with an
// isError result naming the tools it does offer (or saying that a write
// tool is left out in read-only mode), as any other failed call: a model
// reads that and corrects itself, where a protocol error is often not even
// shown to it. This is what the MCP conformance suite expects.
func unknownTool(m *messages, offered []registration, known map[string]bool) mcp.Middleware {
	names := make([]string, len(offered))
	for i, t := range offered {
		names[i] = t.name
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || method != "tools/call" || call.Params == nil || slices.Contains(names, call.Params.Name) {
				return next(ctx, method, req)
			}
			name := argName(call.Params.Name)
			err := api.Invalid("name", "%s", m.get(msgErrUnknownTool, `"`+name+`"`, strings.Join(names, ", ")))
			if known[call.Params.Name] {
				err = &api.Error{Code: api.CodeReadOnly, Message: m.get(msgErrToolNotOffered, name)}
			}
			return markComplete(call.Session, errorResult(err)), nil
		}
	}
}

// logLevels are the levels logging/setLevel takes: the syslog severities,
// as the specification names them.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// checkLogLevel refuses a logging/setLevel of any other level with invalid
// params, as the specification asks; the SDK takes any string.
func checkLogLevel() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok && p != nil && method == "logging/setLevel" && !slices.Contains(logLevels, p.Level) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid params: level %q is none of %s", p.Level, joinLevels())}
			}
			return next(ctx, method, req)
		}
	}
}

func joinLevels() string {
	names := make([]string, len(logLevels))
	for i, l := range logLevels {
		names[i] = string(l)
	}
	return strings.Join(names, ", ")
}

// resultTypeProtocol is the first protocol version whose results carry
// resultType: its schema requires the member on every result.
const resultTypeProtocol = "2026-07-28"

// markComplete marks res complete (resultType) for a client of a protocol
// that has result types, as the SDK marks the result of every tool handler
// (by the session's protocol version). A result made in a middleware
// never reaches that marking, and the SDK keeps the field unexported: the
// result's own JSON decoder is the one way to set it.
func markComplete(ss *mcp.ServerSession, res *mcp.CallToolResult) *mcp.CallToolResult {
	if ss == nil {
		return res
	}
	if p := ss.InitializeParams(); p != nil && p.ProtocolVersion < resultTypeProtocol {
		return res
	}
	var marked mcp.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[],"resultType":"complete"}`), &marked); err != nil {
		return res
	}
	marked.Content, marked.IsError = res.Content, res.IsError
	return &marked
}

// instructions tells the agent how to use the tools that are offered: the
// read part always, the write part only when the write tools exist, and
// vault_learn only when a tool of that name is registered.
func instructions(m *messages, offered map[string]bool) string {
	parts := []string{m.get(msgInstructions)}
	switch {
	case offered["vault_learn"]:
		parts = append(parts, m.get(msgInstructionsLearn))
	case offered["vault_write_note"] && offered["vault_edit_note"]:
		parts = append(parts, m.get(msgInstructionsRecord))
	}
	if offered["vault_write_note"] || offered["vault_edit_note"] {
		parts = append(parts, m.get(msgInstructionsReplace))
	}
	if offered["vault_undo"] {
		parts = append(parts, m.get(msgInstructionsUndo))
	}
	if offered["vault_projects"] {
		parts = append(parts, m.get(msgInstructionsTeam))
	}
	return strings.Join(parts, "\n")
}

// env is what every tool handler shares.
type env struct {
	backend api.Backend
	msg     *messages
	log     *slog.Logger
	// team says the backend serves several projects (api.Team): every
	// tool takes the optional project argument (team.go).
	team bool
}

// effect is what a tool does to the vault; it decides the annotations and
// whether the tool exists in read-only mode.
type effect int

const (
	effectRead        effect = iota // reads only; idempotent
	effectWrite                     // adds, changes or moves notes; removes no content
	effectDestructive               // may remove or overwrite content (delete, replace, edit, revert)
)

func (e effect) annotations(title string) *mcp.ToolAnnotations {
	no, yes := false, true
	a := &mcp.ToolAnnotations{Title: title, OpenWorldHint: &no}
	switch e {
	case effectRead:
		a.ReadOnlyHint = true
		a.IdempotentHint = true
		a.DestructiveHint = &no
	case effectWrite:
		a.DestructiveHint = &no
	case effectDestructive:
		a.DestructiveHint = &yes
	}
	return a
}

// registration is one entry of the tool registry.
type registration struct {
	name   string
	effect effect
	// available reports whether the backend can serve the tool; nil means
	// every backend can.
	available func(api.Backend) bool
	add       func(*mcp.Server, *env)
	// input is the argument struct and description the description as
	// written, before its limits are filled in (tests read both).
	input       reflect.Type
	description string
}

// toolSpec declares a tool: In is its argument struct (see args.go), Out the
// api result that becomes its structured content.
type toolSpec[In any, Out any] struct {
	Name        string
	Title       string
	Description string
	Effect      effect
	// Available reports whether the backend can serve the tool (a write
	// tool needs an api.Writer); nil means every backend can. A tool the
	// backend cannot serve is not registered.
	Available func(b api.Backend) bool
	// Validate checks what can be checked without the vault; it returns
	// an api.Invalid error. Optional.
	Validate func(m *messages, in *In) error
	// Call asks the backend.
	Call func(ctx context.Context, b api.Backend, in In) (*Out, error)
	// Render is the text for the model.
	Render func(m *messages, in In, out *Out) string
	// NoProject leaves out the project argument a tool takes in team mode
	// (for the tools about the team server itself).
	NoProject bool
}

// tool turns a spec into a registration. Schemas are inferred from In and
// Out; a spec whose types cannot be described is a programming error and
// panics at registration, which every test run exercises.
func tool[In any, Out any](spec toolSpec[In, Out]) registration {
	return registration{
		name:        spec.Name,
		effect:      spec.Effect,
		available:   spec.Available,
		input:       reflect.TypeFor[In](),
		description: spec.Description,
		add: func(s *mcp.Server, e *env) {
			in, err := inputSchema[In]()
			if err != nil {
				panic(fmt.Sprintf("mcpserver: tool %s: input schema: %v", spec.Name, err))
			}
			out, err := outputSchema[Out]()
			if err != nil {
				panic(fmt.Sprintf("mcpserver: tool %s: output schema: %v", spec.Name, err))
			}
			projectArg := ""
			if e.team && !spec.NoProject {
				projectArg = projectArgOf(in)
				addProjectProperty(in, projectArg)
			}
			s.AddTool(&mcp.Tool{
				Name:         spec.Name,
				Title:        spec.Title,
				Description:  expand(spec.Description, nil),
				InputSchema:  in,
				OutputSchema: out,
				Annotations:  spec.Effect.annotations(spec.Title),
			}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return handle(ctx, e, spec, projectArg, req), nil
			})
		},
	}
}

// handle runs one tool call. It never returns a protocol error and never
// lets a panic out: every failure becomes an isError result with one line.
// projectArg is the name of the team project argument the tool takes ("":
// none).
func handle[In any, Out any](ctx context.Context, e *env, spec toolSpec[In, Out], projectArg string, req *mcp.CallToolRequest) (res *mcp.CallToolResult) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			e.log.Error("tool panicked", "tool", spec.Name, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			res = errorResult(&api.Error{Code: api.CodeInternal, Message: e.msg.get(msgErrPanic, spec.Name)})
		}
	}()

	var raw json.RawMessage
	if req != nil && req.Params != nil {
		raw = req.Params.Arguments
	}
	if projectArg != "" {
		var project string
		var err error
		if raw, project, err = takeProject(e.msg, raw, projectArg); err != nil {
			return errorResult(err)
		}
		ctx = api.WithProject(ctx, project)
	}
	in, err := decodeArgs[In](e.msg, raw)
	if err == nil && spec.Validate != nil {
		err = spec.Validate(e.msg, &in)
	}
	if err != nil {
		e.log.Debug("tool call refused", "tool", spec.Name, "error", err)
		return errorResult(err)
	}

	if req != nil && req.Session != nil && req.Params != nil {
		if token := req.Params.GetProgressToken(); token != nil {
			relay := newProgressRelay(ctx, token, req.Session.NotifyProgress, e.log)
			defer relay.stop()
			ctx = api.WithProgress(ctx, relay.report)
		}
	}

	out, err := spec.Call(ctx, e.backend, in)
	if err == nil && out == nil {
		err = &api.Error{Code: api.CodeInternal, Message: e.msg.get(msgErrNoResult)}
	}
	if err != nil {
		e.log.Info("tool call failed", "tool", spec.Name, "code", api.CodeOf(err), "error", err,
			"duration", time.Since(start))
		if spec.Effect != effectRead && (api.IsUncertain(err) || cutShort(ctx, err)) {
			err = &uncertainError{err: err, note: e.msg.get(msgWriteUncertain)}
		}
		return errorResult(err)
	}
	fillNil(out)
	text := spec.Render(e.msg, in, out)
	if w := written(out); w != nil {
		e.log.Info("vault written", "tool", spec.Name, "action", w.Action, "path", w.Path, "files", len(w.Files),
			"committed", w.Committed, "version", w.Version, "warnings", len(w.Warnings), "duration", time.Since(start))
	} else {
		e.log.Debug("tool call", "tool", spec.Name, "duration", time.Since(start))
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		StructuredContent: out,
	}
}

// written is the write result a tool answered with (a learning's included),
// or nil for a read.
func written(out any) *api.WriteResult {
	switch o := out.(type) {
	case *api.WriteResult:
		return o
	case *api.LearnResult:
		return &o.WriteResult
	}
	return nil
}

// errorResult renders err as the one line of an isError result, which
// always starts with the error's stable code (api.CodeOf): the context a
// wrapping error put before the code is dropped (the log keeps it), and a
// message that does not carry its code gets it prepended.
func errorResult(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: errorLine(err)}},
		IsError: true,
	}
}

// errorLine is the one line that reports err: its stable code first, then
// the message on one line, escaped.
func errorLine(err error) string {
	msg := err.Error()
	code := api.CodeOf(err)
	switch i := strings.Index(msg, code+": "); {
	case i == 0:
	case i > 0:
		msg = msg[i:]
	default:
		msg = code + ": " + msg
	}
	// One line: line breaks (and the indentation after them) become one
	// space; other spacing is kept, as a path in the message may need it.
	lines := strings.FieldsFunc(msg, func(r rune) bool { return r == '\n' || r == '\r' })
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return escape(strings.Join(lines, " "))
}

// cutShort reports whether a failed write ended because its context did
// (cancelled by the client, or past its deadline), so that it may have
// reached the disk or the team server before the cut. A git process killed
// by the context fails without wrapping the context's error, hence the look
// at ctx itself. Only a failure without a definite meaning counts: a
// refusal (BUSY: the write lock was never taken; CONFLICT, NO_MATCH, a bad
// path...) says that nothing was written, whenever it came.
func cutShort(ctx context.Context, err error) bool {
	switch api.CodeOf(err) {
	case api.CodeInternal, api.CodeUnavailable:
	default:
		return false
	}
	return ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// uncertainError is a write that ended without a definite outcome: its
// message tells the agent to look before trying again. The code of the
// wrapped error is kept.
type uncertainError struct {
	err  error
	note string
}

func (u *uncertainError) Error() string {
	msg := strings.TrimSpace(u.err.Error())
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg + " " + u.note
}

func (u *uncertainError) Unwrap() error { return u.err }
