package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vaultmcp/vaultmcp/internal/envvars"
)

// notSettings are variables the command reads that callers set on purpose
// (or that belong to the Go runtime), so the clean environment keeps them.
var notSettings = map[string]bool{"VAULTMCP_CACHE_DIR": true, "GOGC": true, "GOMEMLIMIT": true, "XDG_STATE_HOME": true, "LOCALAPPDATA": true}

// TestEveryVariableIsCleaned: each environment variable the command reads
// (os.Getenv, os.LookupEnv) is on envvars.Settings, the one list the tests
// and the benchmarks clean, or is set on purpose by its callers.
func TestEveryVariableIsCleaned(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	read := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Getenv" && sel.Sel.Name != "LookupEnv" {
				return true
			}
			if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
				name, _ := strconv.Unquote(lit.Value)
				read[name] = true
			}
			return true
		})
	}
	if len(read) == 0 {
		t.Fatal("found no environment variable read")
	}
	for name := range read {
		if !envvars.IsSetting(name) && !notSettings[name] {
			t.Errorf("%s is read by the command but not on envvars.Settings (the list cleaned in tests and bench)", name)
		}
	}
}
