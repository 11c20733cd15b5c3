// Package vpath compares vault paths: slash-separated, relative to the
// vault's folder, "" being that folder itself. It is the one place that says
// what "under a folder" means; vaultfs cleans and guards the paths it is
// given, this package only compares clean ones.
package vpath

// Below says whether p lies inside the folder dir, at any depth: a path is
// below a folder only at a segment boundary ("notes/a.md" is below "notes",
// "notes2/a.md" is not), a folder is not below itself, and every path but ""
// is below the vault's folder "".
func Below(p, dir string) bool {
	if dir == "" {
		return p != ""
	}
	return len(p) > len(dir) && p[len(dir)] == '/' && p[:len(dir)] == dir
}

// Within says whether p is the folder dir or lies below it.
func Within(p, dir string) bool { return p == dir || Below(p, dir) }
