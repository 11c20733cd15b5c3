package api

import "context"

type langKey struct{}

// WithLang returns ctx carrying the language its caller reads (a tag such
// as "pt" or "pt-BR"): a backend words the warnings and refusals of that
// call in it when it can, in its own language otherwise. A team server
// takes it from a request's Accept-Language.
func WithLang(ctx context.Context, lang string) context.Context {
	return context.WithValue(ctx, langKey{}, lang)
}

// LangFrom is the language WithLang put in ctx, "" when none.
func LangFrom(ctx context.Context) string {
	l, _ := ctx.Value(langKey{}).(string)
	return l
}
