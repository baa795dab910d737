package api

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// KeyError is a JSON key that the target type does not have. Path names it
// from the top ("args.cni.POOL"); Want is the key meant when only the case
// differs.
type KeyError struct {
	Path string
	Want string
}

func (e *KeyError) Error() string {
	if e.Want != "" {
		return fmt.Sprintf("unknown field %q: keys are case-sensitive, write %q", e.Path, e.Want)
	}
	return fmt.Sprintf("unknown field %q", e.Path)
}

// DecodeStrict decodes one JSON object into v, a pointer to a struct, as
// encoding/json does, but refuses what encoding/json lets through: keys
// that match a field only when case is ignored ("MODE", "Sandbox"),
// unknown keys (a *KeyError), a key given twice, and data after the
// object. Nested objects are checked the same way, except below types that
// decode themselves (json.Unmarshaler) and free-form maps of any.
func DecodeStrict(data []byte, v any) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return errors.New("decode target must be a pointer")
	}
	if err := checkKeys(data, t.Elem(), ""); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after the JSON object")
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkKeys walks raw alongside t and fails on the first key t does not
// have, exactly as written.
func checkKeys(raw []byte, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		return checkObject(raw, path, func(key string) (reflect.Type, string, bool) { return structField(t, key) })
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil
		}
		return checkObject(raw, path, func(string) (reflect.Type, string, bool) { return t.Elem(), "", true })
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return nil // a type error: encoding/json reports it with more context
		}
		for i, item := range items {
			if err := checkKeys(item, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObject reads the keys of one object in order; field says, for a
// key, the type below it, or the key meant when only the case differs.
func checkObject(raw []byte, path string, field func(string) (reflect.Type, string, bool)) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil // not an object: encoding/json reports the type error
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return err
		}
		at := joinPath(path, key)
		if seen[key] {
			return fmt.Errorf("field %q is given twice", at)
		}
		seen[key] = true
		t, want, ok := field(key)
		if !ok {
			return &KeyError{Path: at, Want: want}
		}
		if err := checkKeys(value, t, at); err != nil {
			return err
		}
	}
	return nil
}

// structField finds the field whose JSON name is key, exactly, walking
// embedded structs as encoding/json does.
func structField(t reflect.Type, key string) (reflect.Type, string, bool) {
	var caseOnly string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && name == "" {
			inner := f.Type
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				ft, want, ok := structField(inner, key)
				if ok {
					return ft, "", true
				}
				caseOnly = cmp.Or(caseOnly, want)
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		if name == key {
			return f.Type, "", true
		}
		if strings.EqualFold(name, key) {
			caseOnly = name
		}
	}
	return nil, caseOnly, false
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
