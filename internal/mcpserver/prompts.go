package mcpserver

import (
	"context"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
)

// Prompts a person picks in a client's menu, and completion of their
// arguments and of the note template's path.

const (
	promptRecall = "recall"
	promptLearn  = "record_learning"
	// maxCompletions is what one completion answer holds at most (the
	// protocol's limit).
	maxCompletions = 100
	wikiFolder     = "02-wiki"
)

// addPrompts registers the prompts: recall always, record_learning only
// when vault_learn is offered.
func addPrompts(s *mcp.Server, e *env, offered map[string]bool) {
	s.AddPrompt(&mcp.Prompt{
		Name:        promptRecall,
		Title:       e.msg.get(msgPromptRecallTitle),
		Description: e.msg.get(msgPromptRecallDescription),
		Arguments: []*mcp.PromptArgument{{
			Name: "topic", Title: e.msg.get(msgPromptTopicTitle), Description: e.msg.get(msgPromptTopicDescription), Required: true,
		}},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return recallPrompt(ctx, e, req.Params.Arguments)
	})
	if !offered["vault_learn"] {
		return
	}
	s.AddPrompt(&mcp.Prompt{
		Name:        promptLearn,
		Title:       e.msg.get(msgPromptLearnTitle),
		Description: e.msg.get(msgPromptLearnDescription),
		Arguments: []*mcp.PromptArgument{
			{Name: "learning", Title: e.msg.get(msgPromptLearningTitle), Description: e.msg.get(msgPromptLearningDescription), Required: true},
			{Name: "domain", Title: e.msg.get(msgPromptDomainTitle), Description: e.msg.get(msgPromptDomainDescription)},
		},
	}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return learnPrompt(ctx, e, req.Params.Arguments)
	})
}

func promptArg(m *messages, args map[string]string, name string, required bool) (string, error) {
	v := strings.TrimSpace(args[name])
	if v == "" && required {
		return "", protocolError(api.Invalid(name, "%s", m.get(msgErrRequired)))
	}
	return v, nil
}

func userMessage(text string) []*mcp.PromptMessage {
	return []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: text}}}
}

// recallPrompt asks the model what the vault says about a topic, with the
// search already made: its results (quoted, as vault_search shows them)
// follow the request, so the answer can start from them.
func recallPrompt(ctx context.Context, e *env, args map[string]string) (*mcp.GetPromptResult, error) {
	topic, err := promptArg(e.msg, args, "topic", true)
	if err != nil {
		return nil, err
	}
	if r := []rune(topic); len(r) > api.MaxQueryChars {
		topic = string(r[:api.MaxQueryChars])
	}
	var b strings.Builder
	b.WriteString(e.msg.get(msgPromptRecall, escape(topic)))
	b.WriteString("\n\n")
	req := api.SearchRequest{Query: topic}
	if res, err := e.backend.Search(ctx, req); err != nil {
		b.WriteString(e.msg.get(msgPromptSearchFailed, errorLine(err)))
	} else {
		fillNil(res)
		b.WriteString(renderSearch(e.msg, req, res))
	}
	return &mcp.GetPromptResult{Description: e.msg.get(msgPromptRecallTitle), Messages: userMessage(b.String())}, nil
}

// learnPrompt asks the model to record a learning with vault_learn, naming
// the domain given or the existing ones to choose from.
func learnPrompt(ctx context.Context, e *env, args map[string]string) (*mcp.GetPromptResult, error) {
	learning, err := promptArg(e.msg, args, "learning", true)
	if err != nil {
		return nil, err
	}
	domain, _ := promptArg(e.msg, args, "domain", false)
	var where string
	switch ds, derr := domains(ctx, e.backend); {
	case domain != "":
		where = e.msg.get(msgPromptLearnDomain, escape(domain))
	case derr == nil && len(ds) > 0:
		where = e.msg.get(msgPromptLearnDomains, escape(strings.Join(ds, ", ")))
	default:
		where = e.msg.get(msgPromptLearnNoDomain)
	}
	text := e.msg.get(msgPromptLearn, where) + "\n\n" + quoteBlock(learning)
	return &mcp.GetPromptResult{Description: e.msg.get(msgPromptLearnTitle), Messages: userMessage(text)}, nil
}

// quoteBlock quotes what a person typed, line by line, as search results
// quote the vault.
func quoteBlock(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = "> " + escape(l)
	}
	return strings.Join(lines, "\n")
}

// domains lists the domain folders under 02-wiki that hold notes, sorted.
func domains(ctx context.Context, b api.Backend) ([]string, error) {
	res, err := b.List(ctx, api.ListRequest{Folder: wikiFolder})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, n := range res.Notes {
		rest, ok := strings.CutPrefix(n.Path, wikiFolder+"/")
		if d, _, sub := strings.Cut(rest, "/"); ok && sub && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out, nil
}

// complete is the server's CompletionHandler: note paths for the note
// template's path, domains for record_learning's domain, and nothing
// (an empty list, not an error) for anything else.
func complete(e *env) func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		ref, arg := req.Params.Ref, req.Params.Argument
		var values []string
		total := 0
		var err error
		switch {
		case ref.Type == "ref/resource" && strings.HasPrefix(ref.URI, noteScheme) && arg.Name == "path":
			values, total, err = completePaths(ctx, e.backend, arg.Value)
		case ref.Type == "ref/prompt" && ref.Name == promptLearn && arg.Name == "domain":
			var ds []string
			if ds, err = domains(ctx, e.backend); err == nil {
				for _, d := range ds {
					if strings.HasPrefix(strings.ToLower(d), strings.ToLower(arg.Value)) {
						values = append(values, d)
					}
				}
				total = len(values)
				values = values[:min(len(values), maxCompletions)]
			}
		}
		if err != nil {
			return nil, protocolError(err)
		}
		if values == nil {
			values = []string{}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{
			Values: values, Total: total, HasMore: total > len(values),
		}}, nil
	}
}

// completePaths asks a backend that completes paths itself, and filters
// the note list of any other.
func completePaths(ctx context.Context, b api.Backend, prefix string) ([]string, int, error) {
	if pc, ok := b.(api.PathCompleter); ok {
		return pc.CompletePaths(ctx, prefix, maxCompletions)
	}
	res, err := b.List(ctx, api.ListRequest{})
	if err != nil {
		return nil, 0, err
	}
	paths := make([]string, len(res.Notes))
	for i, n := range res.Notes {
		paths[i] = n.Path
	}
	values, total := api.MatchPaths(paths, prefix, maxCompletions)
	return values, total, nil
}
