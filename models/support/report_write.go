package support

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"
	"time"

	"github.com/telcoplatform/platform/models"
)

// ReportFile writes a report's rows to w in its format as they come: CSV
// with a header line, or one JSON document {report_id, report_type,
// parameters, columns, rows: [{column: value}], ...} whose rows are
// written one by one and whose trailer (row_count, data_freshness) is
// written by Close. Nothing is held but the current row.
type ReportFile struct {
	id    string
	spec  *ReportSpec
	cols  []ReportColumn
	buf   *bufio.Writer
	csv   *csv.Writer
	rows  int64
	start time.Time
}

// NewReportFile starts the report file of report id on w: the CSV header,
// or the JSON document up to its first row.
func NewReportFile(w io.Writer, id string, spec *ReportSpec, generatedAt time.Time) (*ReportFile, error) {
	f := &ReportFile{id: id, spec: spec, cols: ReportColumns(spec), buf: bufio.NewWriterSize(w, 64<<10), start: generatedAt}
	if spec.Format == ReportFormatCSV {
		f.csv = csv.NewWriter(f.buf)
		header := make([]string, len(f.cols))
		for i, c := range f.cols {
			header[i] = c.Name
		}
		return f, f.csv.Write(header)
	}
	head := map[string]any{"report_id": id, "report_type": spec.ReportType, "generated_at": models.Timestamp(generatedAt),
		"parameters": ReportParameters(spec), "columns": f.cols}
	raw, err := json.Marshal(head)
	if err != nil {
		return nil, err
	}
	// Leave the object open: ...,"rows":[
	if _, err := f.buf.Write(raw[:len(raw)-1]); err != nil {
		return nil, err
	}
	_, err = f.buf.WriteString(`,"rows":[`)
	return f, err
}

// WriteRow writes one row.
func (f *ReportFile) WriteRow(values []any) error {
	f.rows++
	if f.csv != nil {
		rec := make([]string, len(values))
		for i, v := range values {
			rec[i] = csvValue(v)
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
		raw, err := json.Marshal(jsonValue(v))
		if err != nil {
			return err
		}
		if _, err := f.buf.Write(raw); err != nil {
			return err
		}
	}
	return f.buf.WriteByte('}')
}

// Close ends the file (the JSON trailer with the row count and the data's
// freshness) and flushes it.
func (f *ReportFile) Close(newest *time.Time) error {
	if f.csv != nil {
		f.csv.Flush()
		if err := f.csv.Error(); err != nil {
			return err
		}
		return f.buf.Flush()
	}
	var fresh any
	if newest != nil {
		fresh = models.Timestamp(*newest)
	}
	tail, err := json.Marshal(map[string]any{"row_count": f.rows, "data_freshness": fresh})
	if err != nil {
		return err
	}
	if _, err := f.buf.WriteString("],"); err != nil {
		return err
	}
	if _, err := f.buf.Write(tail[1:]); err != nil {
		return err
	}
	if err := f.buf.WriteByte('\n'); err != nil {
		return err
	}
	return f.buf.Flush()
}

// csvValue is a value as a CSV field: empty for none, RFC 3339 for times.
func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return models.Timestamp(x)
	}
	return ""
}

// jsonValue is a value as JSON: times as RFC 3339 strings.
func jsonValue(v any) any {
	if t, ok := v.(time.Time); ok {
		return models.Timestamp(t)
	}
	return v
}

// ReportParameters is spec's request as the report shows it: the
// parameters in the request's shape with every default filled in.
func ReportParameters(spec *ReportSpec) map[string]any {
	return map[string]any{
		"date_range": map[string]any{"start": models.Timestamp(spec.Start), "end": models.Timestamp(spec.End)},
		"timezone":   spec.Timezone,
		"filters":    map[string]any{"customer_ids": spec.CustomerIDs, "categories": spec.Categories, "priorities": spec.Priorities},
		"metrics":    spec.Metrics,
		"grouping":   spec.Grouping,
		"format":     spec.Format,
	}
}
