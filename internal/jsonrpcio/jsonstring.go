package jsonrpcio

import "unicode/utf8"

// The JSON string encoder of the frames written here (ids) and of the
// results that encode themselves (mcpserver's encoder).

const hexDigits = "0123456789abcdef"

// AppendString appends s as a JSON string exactly as encoding/json (and so
// the SDK's encoder) writes it without HTML escaping: `"` and `\` escaped, control characters
// as \n, \r, \t, \b, \f or \u00XX, U+2028 and U+2029 as \u2028 and \u2029,
// each byte that is not UTF-8 as \ufffd; the rest as it is. Runs of
// printable ASCII are skipped eight bytes at a time.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && jsonSafe8(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		b := s[i]
		if b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// jsonSafe8 reports whether the eight bytes of s are all ASCII that a JSON
// string holds as it is: none with the high bit set, none below 0x20, no
// '"', no '\'.
func jsonSafe8(s string) bool {
	_ = s[7]
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// As in plainASCII8: without high bits in w no borrow crosses a byte.
	less20 := (w - 0x20*ones) &^ w
	quote := ((w ^ '"'*ones) - ones) &^ (w ^ '"'*ones)
	backslash := ((w ^ '\\'*ones) - ones) &^ (w ^ '\\'*ones)
	return (w|less20|quote|backslash)&highs == 0
}
