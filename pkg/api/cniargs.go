package api

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CNIArgs is what Multus forwards as args.cni (the cni-args of a NAD
// selection). GPUs and NICs accept a comma-separated string or a JSON list;
// Rail accepts a number or a numeric string.
type CNIArgs struct {
	Pool string   `json:"pool,omitempty"`
	GPUs List     `json:"gpus,omitempty"`
	NICs List     `json:"nics,omitempty"`
	Rail *FlexInt `json:"rail,omitempty"`
}

// List is a list of strings written as "a,b" or ["a","b"] or [0,1].
type List []string

// UnmarshalJSON accepts a comma-separated string or a list of strings or numbers.
func (l *List) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err == nil {
		list, err := SplitList(s)
		if err != nil {
			return err
		}
		*l = list
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return fmt.Errorf("want a comma-separated string or a list, got %s", data)
	}
	out := make(List, 0, len(items))
	for _, item := range items {
		var str string
		if json.Unmarshal(item, &str) == nil {
			out = append(out, strings.TrimSpace(str))
			continue
		}
		var num json.Number
		if json.Unmarshal(item, &num) != nil {
			return fmt.Errorf("list item %s is neither a string nor a number", item)
		}
		out = append(out, num.String())
	}
	*l = out
	return nil
}

// String joins the list with commas.
func (l List) String() string { return strings.Join(l, ",") }

// SplitList splits a comma-separated list such as the rail.dev/gpus
// annotation or a cni-args string ("0, 1,GPU-x") into trimmed entries. An
// empty or blank value gives none; an empty entry inside the list ("0,,1",
// "0,") is an error naming it.
func SplitList(s string) (List, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make(List, 0, len(parts))
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("list %q: entry %d is empty; write comma-separated entries such as \"0,1\"", s, i+1)
		}
		out = append(out, part)
	}
	return out, nil
}

// FlexInt is an int written as 3 or "3".
type FlexInt int

// UnmarshalJSON accepts a number or a numeric string.
func (f *FlexInt) UnmarshalJSON(data []byte) error {
	var n int
	if err := json.Unmarshal(data, &n); err == nil {
		*f = FlexInt(n)
		return nil
	}
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("want a number, got %s", data)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want a number, got %q", s)
	}
	*f = FlexInt(n)
	return nil
}
