package cniconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// span is data[start:end] of the file being edited.
type span struct{ start, end int }

// member is one top-level key of a JSON object and where its value lies.
type member struct {
	key   string
	value span
}

// plugin is one element of "plugins": where its bytes lie and its "type".
type plugin struct {
	span
	typ string
}

// document is a CNI config file located byte for byte: its top-level keys
// in file order and, for a list, the elements of "plugins". Edits splice
// bytes at these offsets, so everything else keeps its exact text.
type document struct {
	data    []byte
	members []member
	// hasPlugins is set when the object has a "plugins" key.
	hasPlugins bool
	// open and close are the offsets of the '[' and ']' of "plugins".
	open, close int
	plugins     []plugin
}

// parseDocument locates the top-level members of a JSON object and the
// elements of its "plugins" list. It refuses duplicate keys (encoding/json
// would keep the last, libcni too, but an edit must not guess).
func parseDocument(data []byte) (*document, error) {
	doc := &document{data: data}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := expectDelim(dec, '{', "the file"); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for dec.More() {
		key, err := nextKey(dec)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, fmt.Errorf("key %q appears twice: keep one", key)
		}
		seen[key] = true
		start := skipSeparators(data, int(dec.InputOffset()))
		if key == "plugins" {
			err = doc.parsePlugins(dec)
		} else {
			err = skipValue(dec, key)
		}
		if err != nil {
			return nil, err
		}
		doc.members = append(doc.members, member{key: key, value: span{start, int(dec.InputOffset())}})
	}
	if err := expectDelim(dec, '}', "the file"); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("text after the closing '}' at offset %d: remove it", dec.InputOffset())
	}
	return doc, nil
}

func (doc *document) parsePlugins(dec *json.Decoder) error {
	if err := expectDelim(dec, '[', `"plugins"`); err != nil {
		return err
	}
	doc.hasPlugins = true
	doc.open = int(dec.InputOffset()) - 1
	for i := 0; dec.More(); i++ {
		start := skipSeparators(doc.data, int(dec.InputOffset()))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return fmt.Errorf("plugins[%d]: %w", i, err)
		}
		var head struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			return fmt.Errorf("plugins[%d]: want a JSON object with a string \"type\": %w", i, err)
		}
		doc.plugins = append(doc.plugins, plugin{span: span{start, int(dec.InputOffset())}, typ: head.Type})
	}
	if err := expectDelim(dec, ']', `"plugins"`); err != nil {
		return err
	}
	doc.close = int(dec.InputOffset()) - 1
	return nil
}

// value returns the raw text of a top-level key, or nil.
func (doc *document) value(key string) []byte {
	for _, m := range doc.members {
		if m.key == key {
			return doc.data[m.value.start:m.value.end]
		}
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("%s: not valid JSON: %w", what, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("%s: want %q at offset %d, found %v", what, string(want), dec.InputOffset(), tok)
	}
	return nil
}

func nextKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", fmt.Errorf("not valid JSON: %w", err)
	}
	key, ok := tok.(string)
	if !ok {
		return "", fmt.Errorf("want a key at offset %d, found %v", dec.InputOffset(), tok)
	}
	return key, nil
}

func skipValue(dec *json.Decoder, key string) error {
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return fmt.Errorf("value of %q: %w", key, err)
	}
	return nil
}

// skipSeparators moves past white space, ':' and ',' to the next value.
func skipSeparators(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r', ':', ',':
			i++
		default:
			return i
		}
	}
	return i
}
