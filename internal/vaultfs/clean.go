package vaultfs

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits on a path, checked by Clean before any file system work so that a
// hostile input costs little: a path of thousands of folders would otherwise
// make a write create every one of them (and leave them behind when git then
// refuses the path). They hold for every access, reads included, so that
// every path the gatekeeper gives back (Walk) can also be written and moved;
// a file on disk beyond them is reported by Walk instead of indexed. Real
// vaults are far inside them: the Obsidian help vault and the 6,570-note
// community hub are at most 5 segments deep, 137 bytes long, with names of at
// most 99 bytes.
const (
	// MaxPathBytes is the longest path Clean accepts, in bytes as given
	// (before "." and ".." are removed).
	MaxPathBytes = 1024
	// MaxSegmentBytes is the longest single file or folder name, the limit
	// of common file systems (ext4, APFS, NTFS in UTF-16 units).
	MaxSegmentBytes = 255
	// MaxPathSegments is the deepest path Clean accepts: folders plus the
	// file name ("a/b/c.md" has 3).
	MaxPathSegments = 64
)

// Folder names with a policy of their own (DESIGN.md section 2).
const (
	TemplatesFolder   = "_templates"   // never indexed, never written
	ArchiveFolder     = "99-archive"   // read and searched, written only by a move
	NodeModulesFolder = "node_modules" // never indexed, read or written
)

// Access is what a caller means to do with a path.
type Access int

const (
	// Read: read an existing note.
	Read Access = iota
	// Write: create or replace a note (never under 99-archive).
	Write
	// Move: a write done by vault_move, which may target or leave 99-archive.
	Move
)

func (a Access) String() string {
	switch a {
	case Read:
		return "read"
	case Write:
		return "write"
	case Move:
		return "move"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// Clean normalises a client path lexically and refuses hostile spellings; see
// the package documentation for the rules and their order. On success the
// result is "dir/a.md" form: segments joined by '/', none empty, "." or "..",
// none hidden, no ':' or '\', and Clean(result) == result.
func Clean(p string) (string, error) {
	if p == "" {
		return "", newErr(CodeInvalidPath, p, "empty path")
	}
	if len(p) > MaxPathBytes {
		return "", newErr(CodeInvalidPath, p, "%d bytes long; a path may be at most %d bytes", len(p), MaxPathBytes)
	}
	if !utf8.ValidString(p) {
		return "", newErr(CodeInvalidPath, p, "not valid UTF-8")
	}
	for _, r := range p {
		if reason := badRune(r); reason != "" {
			return "", newErr(CodeInvalidPath, p, "%s", reason)
		}
	}
	if p[0] == '/' || p[0] == '\\' {
		return "", newErr(CodePathEscape, p, "absolute paths are not allowed; give a path relative to the vault")
	}
	if i := strings.IndexByte(p, ':'); i >= 0 {
		if i == 1 && isASCIILetter(p[0]) {
			return "", newErr(CodePathEscape, p, "drive-letter paths are not allowed; give a path relative to the vault")
		}
		return "", newErr(CodePathEscape, p, "':' is not allowed in a path (drive letters, alternate data streams)")
	}
	// A path already in clean form (the usual case: every path a walk
	// makes, most a client sends) is checked segment by segment and given
	// back as it is; any other is rebuilt from its segments.
	if out, ok, err := cleanAsIs(p); ok || err != nil {
		return out, err
	}
	return cleanRebuild(p)
}

// cleanRebuild is the end of Clean for a path that passed its first checks:
// the path rebuilt from its segments ('\' read as '/', empty and "."
// segments dropped, ".." climbing), each segment checked in order.
func cleanRebuild(p string) (string, error) {
	p = strings.ReplaceAll(p, `\`, "/")
	segs := make([]string, 0, min(strings.Count(p, "/")+1, MaxPathSegments))
	for seg := range strings.SplitSeq(p, "/") {
		switch seg {
		case "", ".":
			continue
		case "..":
			if len(segs) == 0 {
				return "", newErr(CodePathEscape, p, "'..' climbs out of the vault")
			}
			segs = segs[:len(segs)-1]
			continue
		}
		if err := checkSegment(p, seg, len(segs)); err != nil {
			return "", err
		}
		segs = append(segs, seg)
	}
	if len(segs) == 0 {
		return "", newErr(CodeInvalidPath, p, "names the vault folder itself, not a note")
	}
	out := strings.Join(segs, "/")
	return isLocal(p, out)
}

// cleanAsIs checks p when it is already in clean form: no '\', and no
// segment empty, "." or "..". ok is false, with no error, when it is not
// (Clean then rebuilds it); err is a segment's refusal.
func cleanAsIs(p string) (out string, ok bool, err error) {
	if strings.IndexByte(p, '\\') >= 0 {
		return "", false, nil
	}
	// Segments are checked in order, as Clean's loop checks them: a
	// refusal met before any segment that makes the path not clean is the
	// one Clean would give.
	k := 0
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false, nil
		}
		if err := checkSegment(p, seg, k); err != nil {
			return "", false, err
		}
		k++
	}
	out, err = isLocal(p, p)
	return out, true, err
}

// checkSegment refuses the segment seg of p (neither empty, "." nor "..")
// when it may not be a name in a path, kept is how many segments come
// before it.
func checkSegment(p, seg string, kept int) error {
	switch {
	case seg[0] == '.':
		return newErr(CodeHiddenSegment, p, "%s starts with '.': hidden files and folders are off limits", QuotePath(seg))
	case len(seg) > MaxSegmentBytes:
		return newErr(CodeInvalidPath, p, "a file or folder name is %d bytes long; a name may be at most %d bytes", len(seg), MaxSegmentBytes)
	case onlyDotLike(seg):
		return newErr(CodeInvalidPath, p, "%s is made of characters that look like '.' and would read as . or ..", QuotePath(seg))
	case kept == MaxPathSegments:
		return newErr(CodeInvalidPath, p, "nested too deep; a path may have at most %d segments (folders and the file name)", MaxPathSegments)
	}
	return nil
}

// isLocal is Clean's last guard, for the platform: on Windows it refuses
// reserved device names (NUL, CON.md, COM1, ...); elsewhere it cannot fail
// on a path built from checked segments.
func isLocal(p, out string) (string, error) {
	if !filepath.IsLocal(filepath.FromSlash(out)) {
		return "", newErr(CodePathEscape, p, "not a path inside the vault on this system (reserved device name?)")
	}
	return out, nil
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// badRune says why r may not appear in a path, or "" when it may.
func badRune(r rune) string {
	if r >= 0x20 && r < 0x7f {
		return "" // printable ASCII, the common case
	}
	switch {
	case r == 0:
		return "contains a NUL byte"
	case r < 0x20 || r == 0x7f || 0x80 <= r && r <= 0x9f:
		return fmt.Sprintf("contains control character U+%04X", r)
	case unicode.Is(unicode.Noncharacter_Code_Point, r):
		return fmt.Sprintf("contains noncharacter U+%04X", r)
	case isInvisible(r):
		return fmt.Sprintf("contains invisible or bidirectional formatting character U+%04X", r)
	case isSeparatorLike(r):
		return fmt.Sprintf("contains U+%04X (%c), which looks like a path separator", r, r)
	}
	return ""
}

// isInvisible reports characters that change how text displays without being
// seen: Unicode category Cf (bidi controls U+202A-202E, U+2066-2069,
// U+200E/F, U+061C; zero-width U+200B-200D, U+2060, U+FEFF; the soft hyphen;
// tag characters), Zl, Zp, Other_Default_Ignorable_Code_Point (Hangul
// fillers and the like), the blank braille pattern U+2800 and noncharacters.
func isInvisible(r rune) bool {
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Other_Default_Ignorable_Code_Point, unicode.Noncharacter_Code_Point) || r == 0x2800
}

// isSeparatorLike reports characters that look like '/' or '\' (or become one
// under Unicode compatibility normalisation). A path containing one can only
// mislead: it reads as a folder that is not there.
func isSeparatorLike(r rune) bool {
	switch r {
	case 0x2044, // FRACTION SLASH
		0x2215, // DIVISION SLASH
		0x2216, // SET MINUS
		0x2571, // BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT
		0x2572, // BOX DRAWINGS LIGHT DIAGONAL UPPER LEFT TO LOWER RIGHT
		0x27CB, // MATHEMATICAL RISING DIAGONAL
		0x27CD, // MATHEMATICAL FALLING DIAGONAL
		0x29F5, // REVERSE SOLIDUS OPERATOR
		0x29F8, // BIG SOLIDUS
		0x29F9, // BIG REVERSE SOLIDUS
		0xFE68, // SMALL REVERSE SOLIDUS
		0xFF0F, // FULLWIDTH SOLIDUS
		0xFF3C: // FULLWIDTH REVERSE SOLIDUS
		return true
	}
	return false
}

// isDotLike reports '.' and characters that look like it or become dots under
// Unicode compatibility normalisation.
func isDotLike(r rune) bool {
	switch r {
	case '.',
		0x00B7, // MIDDLE DOT
		0x0701, // SYRIAC SUPRALINEAR FULL STOP
		0x0702, // SYRIAC SUBLINEAR FULL STOP
		0x2024, // ONE DOT LEADER
		0x2025, // TWO DOT LEADER
		0x2026, // HORIZONTAL ELLIPSIS
		0x2027, // HYPHENATION POINT
		0x2219, // BULLET OPERATOR
		0x22C5, // DOT OPERATOR
		0x30FB, // KATAKANA MIDDLE DOT
		0xFE52, // SMALL FULL STOP
		0xFF0E, // FULLWIDTH FULL STOP
		0xFF65: // HALFWIDTH KATAKANA MIDDLE DOT
		return true
	}
	return false
}

// onlyDotLike reports a segment made only of dot look-alikes ("‥", "．．").
func onlyDotLike(seg string) bool {
	for _, r := range seg {
		if !isDotLike(r) {
			return false
		}
	}
	return true
}

// windowsReserved are the printable characters Windows refuses in a file or
// folder name (':' and the control characters are refused by Clean in every
// path already).
const windowsReserved = `<>:"|?*`

// checkNewName refuses seg, a file or folder name that a write of p would
// create, when it would not be portable: the vault is synced to Windows and
// macOS, opened in Obsidian and cloned by git, where
//   - a leading or trailing white space makes a name that looks like
//     another's (" d/x.md" and "d/x.md", "x .md" and "x.md") and that
//     Windows strips or refuses; for the file name the stem counts too;
//   - a trailing '.' is stripped by Windows ("a./x.md" is "a/x.md" there);
//   - the characters of windowsReserved cannot be in a name on Windows;
//   - a reserved device name (CON, PRN, AUX, NUL, COM1-9, LPT1-9), with any
//     extension ("con.md", "Nul.tar.md"), is a device there, not a file:
//     the note could not be checked out (Clean refuses it on Windows only,
//     where it cannot be opened; elsewhere an existing one stays readable).
//
// last says seg is the file name.
func checkNewName(p, seg string, last bool) error {
	names := []string{seg}
	if last {
		if stem := strings.TrimSuffix(seg, path.Ext(seg)); stem != seg && stem != "" {
			names = append(names, stem)
		}
	}
	for _, name := range names {
		first, _ := utf8.DecodeRuneInString(name)
		end, _ := utf8.DecodeLastRuneInString(name)
		switch {
		case unicode.IsSpace(first):
			return newErr(CodeInvalidPath, p, "the new name %s starts with a space; it would look like another name (and Windows trims it)", QuotePath(seg))
		case unicode.IsSpace(end) && name != seg:
			return newErr(CodeInvalidPath, p, "the new name %s has a space before its extension; it would look like another name", QuotePath(seg))
		case unicode.IsSpace(end):
			return newErr(CodeInvalidPath, p, "the new name %s ends with a space; it would look like another name (and Windows trims it)", QuotePath(seg))
		}
	}
	if strings.HasSuffix(seg, ".") {
		return newErr(CodeInvalidPath, p, "the new name %s ends with '.', which Windows drops", QuotePath(seg))
	}
	if i := strings.IndexAny(seg, windowsReserved); i >= 0 {
		return newErr(CodeInvalidPath, p, "the new name %s contains %q, which Windows does not allow in a file or folder name (none of %s)", QuotePath(seg), seg[i], windowsReserved)
	}
	if isDeviceName(seg) {
		return newErr(CodeInvalidPath, p, "the new name %s is a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9, with any extension): the file could not be checked out there", QuotePath(seg))
	}
	return nil
}

// isDeviceName reports whether Windows takes the name seg for a device:
// its part before the first '.', trailing spaces dropped, is one of the
// reserved names in any letter case (COM and LPT with a digit 1-9, or the
// superscripts 1-3 Windows also reserves).
func isDeviceName(seg string) bool {
	base, _, _ := strings.Cut(seg, ".")
	base = strings.ToUpper(strings.TrimRight(base, " "))
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) < 4 || (base[:3] != "COM" && base[:3] != "LPT") {
		return false
	}
	switch base[3:] {
	case "1", "2", "3", "4", "5", "6", "7", "8", "9", "\u00b9", "\u00b2", "\u00b3":
		return true
	}
	return false
}

// policyName is how a segment is compared with the protected folder names:
// case-insensitively and without trailing dots and spaces, because Windows and
// macOS file systems treat "_Templates", "_templates." and "_templates " as
// the folder "_templates".
func policyName(seg string) string {
	return strings.ToLower(strings.TrimRight(seg, ". "))
}

// CheckPolicy applies the access rules of DESIGN.md section 3 to a path that
// Clean already returned (anything else is refused with Clean's error or
// INVALID_PATH):
//   - node_modules anywhere -> PROTECTED_PATH, for every access;
//   - _templates anywhere, for Write and Move -> PROTECTED_PATH;
//   - 99-archive as the first segment, for Write -> PROTECTED_PATH (Move may
//     target or leave it; Read is allowed);
//   - an extension other than .md or .markdown (any case) -> INVALID_EXTENSION.
//
// Folder names are compared as the strictest file system would (see
// policyName): "_Templates/x.md" is protected too.
func CheckPolicy(rel string, acc Access) error {
	return checkPolicy(rel, acc, true)
}

func checkPolicy(rel string, acc Access, requireNote bool) error {
	c, err := Clean(rel)
	if err != nil {
		return err
	}
	if c != rel {
		return newErr(CodeInvalidPath, rel, "not a clean vault path (expected %s)", QuotePath(c))
	}
	if acc != Read && acc != Write && acc != Move {
		return newErr(CodeProtectedPath, rel, "unknown access mode %v", acc)
	}
	segs := strings.Split(rel, "/")
	for _, s := range segs {
		switch policyName(s) {
		case NodeModulesFolder:
			return newErr(CodeProtectedPath, rel, "node_modules is off limits")
		case TemplatesFolder:
			if acc != Read {
				return newErr(CodeProtectedPath, rel, "_templates is never written")
			}
		}
	}
	if acc == Write && len(segs) > 1 && policyName(segs[0]) == ArchiveFolder {
		return newErr(CodeProtectedPath, rel, "99-archive is written only by vault_move")
	}
	if requireNote && !IsNoteName(rel) {
		ext := path.Ext(rel)
		if ext == "" {
			return newErr(CodeInvalidExtension, rel, "no extension; notes end in .md or .markdown")
		}
		return newErr(CodeInvalidExtension, rel, "extension %s is not a note's; notes end in .md or .markdown", QuotePath(ext))
	}
	return nil
}

// IsNoteName reports whether a file name (or path) ends in .md or .markdown,
// in any letter case.
func IsNoteName(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return ext == ".md" || ext == ".markdown"
}

// IsIgnored reports paths that are never indexed: any segment starting with
// '.', and any node_modules or _templates segment (compared as policyName
// does). It splits on '/' only and does not clean its input.
func IsIgnored(rel string) bool {
	for s := range strings.SplitSeq(rel, "/") {
		if ignoredSegment(s) {
			return true
		}
	}
	return false
}

func ignoredSegment(s string) bool {
	if strings.HasPrefix(s, ".") {
		return true
	}
	n := policyName(s)
	return n == NodeModulesFolder || n == TemplatesFolder
}

// IsArchived reports whether a clean path lies under the top-level
// 99-archive folder (search weight 0.4, written only by a move).
func IsArchived(rel string) bool {
	first, _, found := strings.Cut(rel, "/")
	return found && policyName(first) == ArchiveFolder
}
