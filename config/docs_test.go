package config_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestUserDocsStateRulesNotCitations: the README and docs/ are what users
// read, and they do not have the project's internal decision records or the
// requirements document, so the docs state each rule instead of citing
// "DECISIONS 7" or "the specification".
func TestUserDocsStateRulesNotCitations(t *testing.T) {
	files, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../README.md")
	citation := regexp.MustCompile(`DECISIONS|\b[Tt]he spec(ification)?\b|\bspec (section )?\d`)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range citation.FindAllIndex(raw, -1) {
			line := 1
			for _, c := range raw[:m[0]] {
				if c == '\n' {
					line++
				}
			}
			t.Errorf("%s:%d cites %q: state the rule itself", f, line, raw[m[0]:m[1]])
		}
	}
}
