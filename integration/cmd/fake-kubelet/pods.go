package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/railcni/rail/daemon/podinfo/podinfotest"
)

// loadPods reads and validates a JSON array of pods. Unknown fields are
// refused so a misspelt key does not silently drop devices.
func loadPods(path string) ([]podinfotest.Pod, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read pods file: %w", err)
	}
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	var pods []podinfotest.Pod
	if err := decoder.Decode(&pods); err != nil {
		return nil, fmt.Errorf("pods file %s: %w; expected a JSON array of "+
			`{"namespace","name","containers":[{"name","devices":{"<resource>":["<id>",...]},`+
			`"claims":[{"namespace","name","devices":[{"driver","pool","device","cdi":[...]}]}]}]}`, path, err)
	}
	if _, err := decoder.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("pods file %s: trailing data after the JSON array", path)
	}
	if err := podinfotest.ValidatePods(pods); err != nil {
		return nil, fmt.Errorf("pods file %s: %w", path, err)
	}
	return pods, nil
}
