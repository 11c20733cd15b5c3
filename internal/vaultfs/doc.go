// Package vaultfs is the gatekeeper of a vault (DESIGN.md section 3): every
// byte read in a vault goes through it, and it is the only package that opens
// vault files. It trusts no path: a path from a client is hostile until proven
// safe, and anything it cannot prove safe is refused (it fails closed) with
// an *Error whose message starts with a stable code.
//
// # Checks, in order
//
// Clean works on the text alone:
//
//  1. empty, longer than MaxPathBytes (1,024 bytes), invalid UTF-8 ->
//     INVALID_PATH. The limits of steps 1 and 7 hold for every access, reads
//     included, so everything Walk gives can be written and moved too; Walk
//     reports a file beyond them and does not enter a folder that could
//     only hold such files;
//  2. NUL, C0/C1 control characters, and invisible or bidirectional
//     characters -> INVALID_PATH. "Invisible" is Unicode category Cf (bidi
//     embeddings and overrides U+202A-202E, isolates U+2066-2069, marks
//     U+200E/U+200F/U+061C, zero-width U+200B-200D, U+2060, U+FEFF, the soft
//     hyphen, tag characters), Zl, Zp, Other_Default_Ignorable_Code_Point
//     (Hangul fillers and the like), U+2800 and noncharacters. Variation
//     selectors are allowed, so emoji names such as "🗂️ hub.md" work; emoji
//     joined with U+200D (ZWJ) are refused, a deliberate trade-off;
//  3. characters that look like a path separator (U+FF0F fullwidth solidus,
//     U+2215 division slash, U+2044 fraction slash, U+FF3C, U+29F8, ...) ->
//     INVALID_PATH. They are never separators to any file system, but a path
//     holding one reads as a folder that is not there, so it can only mislead;
//  4. a leading '/' or '\' (absolute, UNC "\\server\share", "//server") ->
//     PATH_ESCAPE; any ':' (drive letters "C:\x" and "C:x", NTFS alternate
//     data streams "x.md:s") -> PATH_ESCAPE. Look-alikes of ':' such as the
//     fullwidth colon U+FF1A are ordinary characters (Chinese and Japanese
//     titles use them) and stay literal;
//  5. '\' becomes '/'; empty and "." segments are dropped; ".." removes the
//     previous segment and climbing above the vault -> PATH_ESCAPE. Every
//     segment as written is checked, including one a later ".." removes;
//  6. a segment starting with '.' -> HIDDEN_SEGMENT. That includes "...",
//     "...." and ".x": "....//x.md" is not a traversal but a folder named
//     "...." and is refused as hidden;
//  7. a segment longer than MaxSegmentBytes (255 bytes), more than
//     MaxPathSegments (64) segments, or a segment made only of dot look-alikes
//     (U+2024 one dot leader, U+2025 "‥", U+FF0E fullwidth full stop, U+2026,
//     ...) -> INVALID_PATH: "‥/x.md" reads as "../x.md" to a person and to
//     anything that applies NFKC. Dot look-alikes inside a name are literal
//     ("v1．2.md", "Wait… what.md");
//  8. a path that names the vault folder itself ("." or "a/..") ->
//     INVALID_PATH; on Windows, a reserved device name (NUL, CON.md) ->
//     PATH_ESCAPE.
//
// ResolveNew adds, for a write that creates a file or folder under a name
// the client chose, a check of every segment the write would create (the
// existing ones are not judged, so such notes stay usable): a leading or
// trailing white space (for the file name, before its extension too), a
// trailing '.', or any of < > : " | ? * -> INVALID_PATH (see checkNewName).
//
// Percent signs are not decoded: "%2e%2e/x.md" is a folder literally named
// "%2e%2e" inside the vault (decoding belongs to whoever parsed a URL or a
// markdown link, before calling Clean). "~" is not expanded. Unicode is not
// normalised: the name is used as given (macOS file systems match NFC and NFD
// forms themselves).
//
// CheckPolicy then applies the access rules to the clean path: node_modules
// anywhere -> PROTECTED_PATH; _templates anywhere, for Write and Move ->
// PROTECTED_PATH; 99-archive as the first segment, for Write ->
// PROTECTED_PATH (Move may target or leave it); an extension other than .md
// or .markdown, any case -> INVALID_EXTENSION. Folder names are compared
// case-insensitively and without trailing dots and spaces, because Windows and
// macOS would open "_Templates/" or "node_modules./" as the protected folder.
//
// Vault.Resolve finally walks every existing component with Lstat through an
// *os.Root and follows symbolic links by hand, so each is judged (on Linux a
// path with no symbolic link on it is looked at in one openat2 instead, with
// the same answer: fastroot_linux.go):
//
//   - a link whose target is absolute, or whose ".." climbs above the vault ->
//     SYMLINK_ESCAPE (os.Root also treats every absolute target as an escape);
//   - a link that stays inside is followed for reads, and the path it leads
//     to must pass Clean and CheckPolicy itself: "x.md" -> ".git/config" is
//     HIDDEN_SEGMENT, -> "node_modules/a.md" PROTECTED_PATH, -> "a.txt"
//     INVALID_EXTENSION; more than 40 links -> NOT_A_NOTE (a loop);
//   - Read: missing -> NOT_FOUND; a folder, FIFO, socket or device ->
//     NOT_A_NOTE (decided from Lstat: nothing is opened, so a FIFO cannot
//     block). Hard links are readable: a hard link is a file, not a path, and
//     whoever made one could already read the file. Except in read-only mode
//     (Open with ReadOnly(true), the zero-trust mode): there a note with more
//     than one hard link is NOT_A_NOTE, because its other name may be outside
//     the vault, and the count is checked again on the opened file; Walk
//     reports such a note instead of giving it, and every write is READ_ONLY;
//   - Write and Move: a missing file is fine (it will be created); a symbolic
//     link, a file with more than one hard link, a folder, FIFO, socket or
//     device at the target -> NOT_A_NOTE. A symbolic link to a folder inside
//     the vault on the way is allowed, and the real path must pass the rules
//     of the access.
//
// # Check and use (TOCTOU)
//
// A check is worth nothing if the file system changes before the use, so the
// use does not rely on it. ReadNote opens the resolved path through the
// os.Root, which refuses at open time any symbolic link leaving the vault,
// whatever happened since the check; it opens with O_NONBLOCK so a FIFO
// swapped in cannot block; and it compares the opened file (fstat) with the
// one the check saw (os.SameFile), so a file or folder swapped for a link to
// somewhere else inside the vault (a hidden file, say) is refused too. Walk
// opens each folder relative to its parent and compares it the same way.
// Reading again a note Walk listed (ReadWalked, a DirReader) checks only
// that the file opened is the very one Walk saw (device and inode); on
// Linux it opens the note with openat2 beneath the vault's folder refusing
// every symbolic link and "..", or relative to its folder's descriptor with
// O_NOFOLLOW, and anything declined there takes the root's way and its
// checks.
//
// # Messages
//
// An error message is one line, "CODE: path \"p\": reason", where p is the
// clean vault-relative path, or the rejected input with control, invisible
// and bidirectional characters escaped (strconv.Quote) and cut at 200
// characters. The vault's absolute directory never appears: Vault methods
// pass every message through Redact, and the cause kept for Unwrap is the
// bare operating-system error, without a path. Clean and CheckPolicy know no
// vault; a caller that shows their errors to a client passes them through
// Vault.Redact (or calls Vault.Resolve instead).
//
// # Writes
//
// WriteFile, CreateFile, Rename and Remove build on the same foundation.
// Resolve with Write or Move gives the verdict for a target; the internal
// target it computes carries the symlink-free real path and the Lstat of an
// existing file. The folder of that real path is then opened one component
// at a time (Lstat, open relative to the parent, os.SameFile), creating the
// missing ones, so the write happens in the folder that was checked, and the
// target is looked at again (Lstat, one hard link) just before it is
// replaced. Content is written to a hidden temporary file of that folder
// (".vaultmcp-<16 hex>.tmp", created with O_EXCL, fsynced, given the mode of
// the note it replaces or 0644), then renamed over the target (WriteFile) or
// hard-linked to it (CreateFile, which never overwrites), and the folder is
// fsynced. Rename links the note to its new name (a link never replaces
// anything), checks the link landed in the checked folder, and removes the
// old name. A crash leaves the old note intact and at most a hidden
// temporary file, which is never walked and which the next start removes (RemoveTemps).
//
// # Residual risks, written down
//
// On Windows with 8.3 short names enabled, "_TEMPL~1" may name the
// _templates folder without matching it; os.Root still keeps such a path
// inside the vault, so the risk is a write into _templates, not an escape.
package vaultfs
