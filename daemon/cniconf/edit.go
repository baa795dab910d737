package cniconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// splice returns data with data[s.start:s.end] replaced by text.
func splice(data []byte, s span, text []byte) []byte {
	out := make([]byte, 0, len(data)-(s.end-s.start)+len(text))
	out = append(out, data[:s.start]...)
	out = append(out, text...)
	return append(out, data[s.end:]...)
}

// appendPlugin adds entry as the last element of "plugins", laid out like
// the elements before it. Removing it again (removePlugin) gives back the
// input byte for byte.
func appendPlugin(doc *document, entry []byte) ([]byte, error) {
	if !doc.hasPlugins {
		return nil, fmt.Errorf(`no "plugins" list`)
	}
	n := len(doc.plugins)
	if n == 0 {
		return nil, fmt.Errorf(`"plugins" is empty: not a primary network to chain after`)
	}
	last := doc.plugins[n-1]
	gap := doc.data[doc.open+1 : doc.plugins[0].start]
	if n > 1 {
		gap = bytes.Replace(doc.data[doc.plugins[n-2].end:last.start], []byte(","), nil, 1)
	}
	text := append([]byte(","), gap...)
	text = append(text, layout(entry, gap)...)
	return splice(doc.data, span{last.end, last.end}, text), nil
}

// removePlugin deletes plugins[i] together with the separator that joins it
// to its neighbour.
func removePlugin(doc *document, i int) []byte {
	p := doc.plugins[i]
	switch {
	case i > 0:
		return splice(doc.data, span{doc.plugins[i-1].end, p.end}, nil)
	case len(doc.plugins) > 1:
		return splice(doc.data, span{p.start, doc.plugins[1].start}, nil)
	default:
		return splice(doc.data, p.span, nil)
	}
}

// replacePlugin puts entry in place of plugins[i], keeping its position.
func replacePlugin(doc *document, i int, entry []byte) []byte {
	gap := doc.data[doc.open+1 : doc.plugins[0].start]
	if i > 0 {
		gap = doc.data[doc.plugins[i-1].end:doc.plugins[i].start]
	}
	return splice(doc.data, doc.plugins[i].span, layout(entry, gap))
}

// layout indents a compact entry to sit after gap, the white space that
// precedes the list's elements: on one line when they share a line, else
// indented one level deeper than the element, with the file's tabs or spaces.
func layout(entry, gap []byte) []byte {
	nl := bytes.LastIndexByte(gap, '\n')
	if nl < 0 {
		return entry
	}
	prefix := strings.TrimLeft(string(gap[nl+1:]), ",")
	unit := "  "
	if strings.Contains(prefix, "\t") {
		unit = "\t"
	}
	var out bytes.Buffer
	if err := json.Indent(&out, entry, prefix, unit); err != nil {
		return entry
	}
	return out.Bytes()
}

// listFromConf turns a single-plugin .conf into a conflist as libcni's
// ConfListFromConf does (name, cniVersion, the plugin as plugins[0]), but
// keeps the plugin's own bytes verbatim instead of re-encoding them.
func listFromConf(data []byte) ([]byte, error) {
	doc, err := parseDocument(data)
	if err != nil {
		return nil, err
	}
	if doc.hasPlugins {
		return nil, fmt.Errorf(`holds a "plugins" list but is not named *.conflist: the runtime reads it as one plugin; rename it to .conflist`)
	}
	var out bytes.Buffer
	out.WriteString("{\n")
	for _, key := range []string{"cniVersion", "name"} {
		if v := doc.value(key); v != nil {
			fmt.Fprintf(&out, "  %q: %s,\n", key, v)
		}
	}
	out.WriteString("  \"plugins\": [\n")
	// JSON strings hold no raw newline, so indenting every line is safe.
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		out.WriteString("    ")
		out.Write(line)
		out.WriteByte('\n')
	}
	out.WriteString("  ]\n}\n")
	return out.Bytes(), nil
}

// sameJSON reports whether a and b hold the same JSON value, whatever their
// layout and key order.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ca, _ := json.Marshal(va)
	cb, _ := json.Marshal(vb)
	return bytes.Equal(ca, cb)
}
