package builder

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/telcoplatform/platform/models"
)

// File formats.
const (
	FormatJSON = "json"
	FormatCSV  = "csv"
)

// file writes a report's rows to w as they come: CSV (RFC 4180) with a
// header row of the column names, or one JSON document
// {"report": {id, dataset, generated_at, period, columns, rows: [{column:
// value}], row_count, data_freshness}} whose rows are written one by one
// and whose trailer is written by close. Money is a decimal string,
// timestamps RFC 3339 in the plan's zone.
type file struct {
	cols []Column
	loc  *time.Location
	buf  *bufio.Writer
	csv  *csv.Writer
	rows int64
}

// fileHead is the JSON document's header.
type fileHead struct {
	ID          string       `json:"id"`
	Dataset     string       `json:"dataset"`
	GeneratedAt string       `json:"generated_at"`
	Period      filePeriod   `json:"period"`
	Columns     []fileColumn `json:"columns"`
}

type filePeriod struct {
	From     string `json:"from"`
	To       string `json:"to"`
	Timezone string `json:"timezone"`
}

type fileColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// newFile starts the file of cols on w: the CSV header, or the JSON document up
// to its first row.
func newFile(w io.Writer, id string, plan *Plan, cols []Column, format string, generatedAt time.Time) (*file, error) {
	f := &file{cols: cols, loc: plan.Location, buf: bufio.NewWriterSize(w, 64<<10)}
	if format == FormatCSV {
		f.csv = csv.NewWriter(f.buf)
		header := make([]string, len(f.cols))
		for i, c := range f.cols {
			header[i] = c.Name
		}
		return f, f.csv.Write(header)
	}
	head := fileHead{ID: id, Dataset: plan.Definition.Dataset, GeneratedAt: models.Timestamp(generatedAt),
		Period:  filePeriod{From: f.timestamp(plan.From), To: f.timestamp(plan.To), Timezone: plan.Definition.Timezone},
		Columns: make([]fileColumn, len(f.cols))}
	for i, c := range f.cols {
		head.Columns[i] = fileColumn{Name: c.Name, Type: c.Type}
	}
	raw, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	// Leave the object open: {"report":{...,"rows":[
	if _, err := f.buf.WriteString(`{"report":`); err != nil {
		return nil, err
	}
	if _, err := f.buf.Write(raw[:len(raw)-1]); err != nil {
		return nil, err
	}
	_, err = f.buf.WriteString(`,"rows":[`)
	return f, err
}

// timestamp writes t as RFC 3339 in the plan's zone.
func (f *file) timestamp(t time.Time) string { return t.In(f.loc).Format(time.RFC3339) }

// writeRow writes one row of values in column order.
func (f *file) writeRow(values []any) error {
	f.rows++
	if f.csv != nil {
		rec := make([]string, len(values))
		for i, v := range values {
			rec[i] = f.text(v)
		}
		return f.csv.Write(rec)
	}
	if f.rows > 1 {
		if err := f.buf.WriteByte(','); err != nil {
			return err
		}
	}
	// An object with the columns in order (encoding/json sorts map keys).
	if err := f.buf.WriteByte('{'); err != nil {
		return err
	}
	for i, v := range values {
		if i > 0 {
			_ = f.buf.WriteByte(',')
		}
		name, _ := json.Marshal(f.cols[i].Name)
		_, _ = f.buf.Write(name)
		_ = f.buf.WriteByte(':')
		raw, err := json.Marshal(f.json(v))
		if err != nil {
			return err
		}
		if _, err := f.buf.Write(raw); err != nil {
			return err
		}
	}
	return f.buf.WriteByte('}')
}

// close ends the file (the JSON trailer with the row count and the data's
// freshness) and flushes it.
func (f *file) close(newest *time.Time) error {
	if f.csv != nil {
		f.csv.Flush()
		if err := f.csv.Error(); err != nil {
			return err
		}
		return f.buf.Flush()
	}
	var fresh any
	if newest != nil {
		fresh = f.timestamp(*newest)
	}
	tail, err := json.Marshal(struct {
		RowCount      int64 `json:"row_count"`
		DataFreshness any   `json:"data_freshness"`
	}{f.rows, fresh})
	if err != nil {
		return err
	}
	if _, err := f.buf.WriteString("],"); err != nil {
		return err
	}
	if _, err := f.buf.Write(tail[1 : len(tail)-1]); err != nil {
		return err
	}
	if _, err := f.buf.WriteString("}}\n"); err != nil {
		return err
	}
	return f.buf.Flush()
}

// text is a value as a CSV field: empty for none.
func (f *file) text(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case models.Money:
		return x.String()
	case time.Time:
		return f.timestamp(x)
	}
	return ""
}

// json is a value as JSON: money and times as strings.
func (f *file) json(v any) any {
	switch x := v.(type) {
	case models.Money:
		return x.String()
	case time.Time:
		return f.timestamp(x)
	}
	return v
}
