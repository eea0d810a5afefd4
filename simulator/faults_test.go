package simulator

import (
	"errors"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/telcoplatform/platform/models"
)

func TestFaultStepsKeepsWhatItRead(t *testing.T) {
	f := newFaultSteps(50 * time.Millisecond)
	reads := 0
	read := func(step string, err error) func() (string, error) {
		return func() (string, error) { reads++; return step, err }
	}
	for i := range 3 {
		got, err := f.get(faultLocation, "loc_a", read("configure", nil))
		if err != nil || got != "configure" {
			t.Fatalf("get %d: %q, %v", i, got, err)
		}
	}
	if reads != 1 {
		t.Fatalf("read %d times within the TTL, want 1", reads)
	}
	// Another kind with the same id is another entry; not found is kept as none.
	if got, err := f.get(faultTemplate, "loc_a", read("", gorm.ErrRecordNotFound)); err != nil || got != "" {
		t.Fatalf("template: %q, %v", got, err)
	}
	if reads != 2 {
		t.Fatalf("reads = %d, want 2", reads)
	}
	time.Sleep(60 * time.Millisecond)
	if got, _ := f.get(faultLocation, "loc_a", read("activate", nil)); got != "activate" {
		t.Fatalf("after the TTL: %q, want the value read again", got)
	}
	// A failed read is an internal error and is not kept.
	_, err := f.get(faultLocation, "loc_b", read("", errors.New("database is locked")))
	if models.ErrorCode(err) != models.CodeInternal {
		t.Fatalf("failed read: %v, want INTERNAL_ERROR", err)
	}
	if got, err := f.get(faultLocation, "loc_b", read("validate", nil)); err != nil || got != "validate" {
		t.Fatalf("after a failed read: %q, %v", got, err)
	}
}
