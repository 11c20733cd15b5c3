package vault

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// FindEdit is vault_edit_note's rule for finding old_text in a note, for
// the local vault and for a team server that has only the files API: the
// occurrences of oldText in before, overlapping ones counted; when there is
// none, oldText in the note's line endings (CRLF vs LF); when there is still
// none, oldText in another Unicode normalisation form (see
// matchIgnoringNorm). When n is 1, before[start:end] are the bytes to
// replace and repl is newText in the note's line endings and, for a match
// made through normalisation, in the form of the bytes it replaces.
func FindEdit(before []byte, oldText, newText string) (n, start, end int, repl string) {
	text := string(before)
	n, start = countOverlapping(text, oldText)
	end = start + len(oldText)
	if n == 0 {
		// The agent usually sends LF.
		alt := inEOLOf(oldText, before)
		if alt != oldText {
			if n, start = countOverlapping(text, alt); n > 0 {
				end = start + len(alt)
			}
		}
		if n == 0 {
			if n, start, end = matchIgnoringNorm(text, alt); n == 1 {
				newText = inFormOf(newText, text[start:end])
			}
		}
	}
	return n, start, end, inEOLOf(newText, before)
}

// vault_edit_note's last resort, when old_text occurs in the note neither
// exactly nor with the note's line endings: the same text in another
// Unicode normalisation form. An agent reads a note whose accents are
// decomposed (NFD, as macOS tools and some editors write them), copies a
// phrase, and sends it composed (NFC, as most clients do), or the reverse;
// the two look identical and differ in bytes. The match is made between the
// NFC forms of both, and mapped back to the bytes actually in the note, so
// that the edit replaces those and leaves every other byte as it was.

// nfcChunks calls fn with consecutive pieces of text, [o0, o1), each of
// which normalises to NFC on its own (the pieces join at normalisation
// boundaries, so the NFC of text is the concatenation of the pieces' NFC),
// and with the piece's NFC form; same is true when that form is the piece
// itself. Runs of text already in NFC are given as one piece.
func nfcChunks(text string, fn func(o0, o1 int, nfc string, same bool)) {
	for i := 0; i < len(text); {
		if k := norm.NFC.QuickSpanString(text[i:]); k > 0 {
			fn(i, i+k, text[i:i+k], true)
			i += k
			continue
		}
		k := norm.NFC.NextBoundaryInString(text[i:], true)
		if k <= 0 {
			k = len(text) - i
		}
		seg := text[i : i+k]
		nfc := norm.NFC.String(seg)
		fn(i, i+k, nfc, nfc == seg)
		i += k
	}
}

// normBoundary reports whether p is a normalisation boundary of the NFC
// text nt: a match starting or ending anywhere else would split a letter
// from its accents.
func normBoundary(nt string, p int) bool {
	return p == 0 || p == len(nt) || norm.NFC.FirstBoundaryInString(nt[p:]) == 0
}

// matchIgnoringNorm finds old in text comparing their NFC forms. It
// returns the number of occurrences (overlapping ones counted, as
// countOverlapping does, and only those that begin and end at
// normalisation boundaries) and the byte range of the first in text.
func matchIgnoringNorm(text, old string) (n, start, end int) {
	nold := norm.NFC.String(old)
	var b strings.Builder
	b.Grow(len(text))
	nfcChunks(text, func(_, _ int, nfc string, _ bool) { b.WriteString(nfc) })
	nt := b.String()
	first := -1
	for i := 0; i <= len(nt); {
		j := strings.Index(nt[i:], nold)
		if j < 0 {
			break
		}
		p := i + j
		if normBoundary(nt, p) && normBoundary(nt, p+len(nold)) {
			if first < 0 {
				first = p
			}
			n++
		}
		i = p + 1
	}
	if n == 0 {
		return 0, 0, 0
	}
	start, end = -1, -1
	firstEnd := first + len(nold)
	off := 0 // offset in nt of the current piece
	nfcChunks(text, func(o0, o1 int, nfc string, same bool) {
		for _, q := range []struct {
			at  int
			out *int
		}{{first, &start}, {firstEnd, &end}} {
			if *q.out >= 0 || q.at < off || q.at > off+len(nfc) {
				continue
			}
			switch {
			case same:
				*q.out = o0 + q.at - off
			case q.at == off:
				*q.out = o0
			case q.at == off+len(nfc):
				*q.out = o1
			}
		}
		off += len(nfc)
	})
	if start < 0 || end < start {
		// A boundary inside a piece that normalisation changed: no
		// range of the note's bytes holds exactly the text.
		return 0, 0, 0
	}
	return n, start, end
}

// inFormOf gives text the normalisation form of like, the bytes it
// replaces in a note: NFD when like is decomposed, NFC when it is
// composed; as it is when like is both or neither (no accents, or mixed).
func inFormOf(text, like string) string {
	isNFC, isNFD := norm.NFC.IsNormalString(like), norm.NFD.IsNormalString(like)
	switch {
	case isNFD && !isNFC:
		return norm.NFD.String(text)
	case isNFC && !isNFD:
		return norm.NFC.String(text)
	}
	return text
}
