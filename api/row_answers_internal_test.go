package api

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/telcoplatform/platform/models"
)

// TestRowAnswersBounds: at most rowAnswersMax rows are kept, the newest
// always among them; an answer over rowAnswerMaxBytes is not kept and
// drops the row's older one.
func TestRowAnswersBounds(t *testing.T) {
	c := newRowAnswers[struct{}, string]()
	answer := func(size int) *rowAnswer[struct{}, string] {
		return &rowAnswer[struct{}, string]{snap: &models.RowSnapshot[struct{}]{}, enc: preEncoded{raw: bytes.Repeat([]byte("x"), size)}}
	}
	for i := 0; i < rowAnswersMax+10; i++ {
		c.put("id"+strconv.Itoa(i), answer(10))
		if n := len(c.entries); n > rowAnswersMax {
			t.Fatalf("%d entries kept, at most %d", n, rowAnswersMax)
		}
	}
	if c.get("id"+strconv.Itoa(rowAnswersMax+9)) == nil {
		t.Fatal("the newest answer was not kept")
	}
	small := answer(10)
	c.put("big", small)
	if c.get("big") != small {
		t.Fatal("a small answer was not kept")
	}
	c.put("big", answer(rowAnswerMaxBytes+1))
	if got := c.get("big"); got != nil {
		t.Fatalf("an answer of %d bytes was kept (or the older one left)", len(got.enc.raw))
	}
	var none *rowAnswer[struct{}, string]
	if none.snapshot() != nil {
		t.Fatal("no entry has a snapshot")
	}
}
