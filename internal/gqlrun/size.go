package gqlrun

import (
	"encoding/json"
	"reflect"
	"time"
)

// The sizes of values as a response budget counts them: close to what they take in JSON, and
// never much less for what the budget exists to stop, long strings and long lists. Objects and
// lists count only their punctuation: their fields and elements count themselves.

// StringPtr is the size of a string or enum that may be null.
func StringPtr[T ~string](s *T) int64 {
	if s == nil {
		return 4
	}
	return int64(len(*s)) + 2
}

// Strings is the size of a list of strings or enums.
func Strings[T ~string](list []T) int64 {
	n := int64(2)
	for _, s := range list {
		n += int64(len(s)) + 3
	}
	return n
}

// Size is the size of any value. It stays a type switch for the common types; reflection is
// left to the types it does not name, such as enums.
func Size(v any) int64 {
	switch v := v.(type) {
	case nil:
		return 4
	case string:
		return int64(len(v)) + 2
	case *string:
		return StringPtr(v)
	case []string:
		return Strings(v)
	case bool, *bool:
		return 5
	case int, int32, int64, *int, *int32, *int64:
		return 20
	case float64, *float64, float32, *float32:
		return 24
	case time.Time, *time.Time:
		return 36
	case json.RawMessage:
		return int64(len(v))
	}
	return reflectedSize(reflect.ValueOf(v))
}

func reflectedSize(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Invalid:
		return 4
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 4
		}
		return reflectedSize(v.Elem())
	case reflect.String:
		return int64(v.Len()) + 2
	case reflect.Slice, reflect.Array:
		n := int64(v.Len()) + 2
		switch v.Type().Elem().Kind() {
		case reflect.Uint8: // bytes, written as one string
			return n + int64(v.Len())
		case reflect.String:
			for i := range v.Len() {
				n += int64(v.Index(i).Len()) + 2
			}
		}
		return n
	case reflect.Bool:
		return 5
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return 20
	case reflect.Float32, reflect.Float64:
		return 24
	}
	return 2
}
