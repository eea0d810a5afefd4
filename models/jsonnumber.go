package models

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"

	"gorm.io/gorm/schema"
)

// JSONNumberSerializer is the GORM serializer "jsonnumber": GORM's json
// serializer, except that the numbers of the stored document are read as
// json.Number, so that a document read back encodes exactly as it was
// written. A map of the event log keeps money as it was stored (0.30, not
// 0.3) for the webhooks, streams and event lists that send it on. Readers
// of such a map take numbers with NumberAsInt.
type JSONNumberSerializer struct{}

// Scan decodes the column's JSON into the field, numbers as json.Number.
func (JSONNumberSerializer) Scan(ctx context.Context, field *schema.Field, dst reflect.Value, dbValue any) error {
	fieldValue := reflect.New(field.FieldType)
	if dbValue != nil {
		var raw []byte
		switch v := dbValue.(type) {
		case []byte:
			raw = v
		case string:
			raw = []byte(v)
		default:
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			raw = b
		}
		if len(raw) > 0 {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(fieldValue.Interface()); err != nil {
				return err
			}
		}
	}
	field.ReflectValueOf(ctx, dst).Set(fieldValue.Elem())
	return nil
}

// Value encodes the field as GORM's json serializer does.
func (JSONNumberSerializer) Value(ctx context.Context, field *schema.Field, dst reflect.Value, fieldValue any) (any, error) {
	return schema.JSONSerializer{}.Value(ctx, field, dst, fieldValue)
}

// NumberAsInt returns a number of a decoded JSON document (float64, int or
// json.Number) as an int, and whether v was one.
func NumberAsInt(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case float64:
		return int(n), true
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return int(i), true
		}
		if f, err := n.Float64(); err == nil {
			return int(f), true
		}
	}
	return 0, false
}

func init() {
	// GORM's registry of serializers is its own, read when a model's schema
	// is parsed: registered once, before any model is.
	schema.RegisterSerializer("jsonnumber", JSONNumberSerializer{})
}
