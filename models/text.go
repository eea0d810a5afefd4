package models

// Truncate returns s cut to at most n bytes, on a rune boundary (a cut
// never leaves half a UTF-8 character, which PostgreSQL would refuse).
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
