package k8s

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// imageDesc is what both the Dockerfile's final stage and a built image
// say about the image: where the binaries are and how it starts.
type imageDesc struct {
	Files      []string // executable files, sorted
	Entrypoint []string
	Cmd        []string
	User       string
}

// TestImageMatchesDockerfile builds the image the way the Kubernetes rig
// does (build-image.sh, no Docker) and checks it against the Dockerfile.
func TestImageMatchesDockerfile(t *testing.T) {
	here, repo := sourceDirs()
	want, err := dockerfileFinalStage(filepath.Join(repo, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"raild", "rail", "rail-ipam"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "image.tar")
	cmd := exec.Command(filepath.Join(here, "build-image.sh"), out, "ghcr.io/railcni/rail:test")
	cmd.Env = append(os.Environ(), "RAIL_BIN="+bin)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build-image.sh: %v\n%s", err, msg)
	}
	got, err := readImage(out)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Files, want.Files) || !slices.Equal(got.Entrypoint, want.Entrypoint) ||
		!slices.Equal(got.Cmd, want.Cmd) || got.User != want.User {
		t.Errorf("the built image and the Dockerfile's final stage differ:\nimage      %+v\nDockerfile %+v", got, want)
	}
}

func TestDockerfileFinalStage(t *testing.T) {
	tests := []struct {
		name, text string
		want       imageDesc
		wantErr    string
	}{
		{"two stages, multi-source COPY", `FROM golang AS build
COPY . .
RUN go build
FROM scratch AS runtime
COPY --from=build /out/a /usr/bin/a
COPY --from=build /out/b /out/c /opt/x/
USER 0:0
ENTRYPOINT ["/usr/bin/a"]
CMD ["serve", "--x"]
`, imageDesc{Files: []string{"/opt/x/b", "/opt/x/c", "/usr/bin/a"}, Entrypoint: []string{"/usr/bin/a"},
			Cmd: []string{"serve", "--x"}, User: "0:0"}, ""},
		{"shell-form ENTRYPOINT refused", "FROM scratch\nENTRYPOINT /a\n", imageDesc{}, "exec (JSON) form"},
		{"no FROM", "COPY a /a\n", imageDesc{}, "no FROM"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "Dockerfile")
			if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := dockerfileFinalStage(path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// dockerfileFinalStage reads the last stage's COPY destinations, USER,
// ENTRYPOINT and CMD (exec form only).
func dockerfileFinalStage(file string) (imageDesc, error) {
	f, err := os.Open(file)
	if err != nil {
		return imageDesc{}, err
	}
	defer f.Close()
	var d imageDesc
	seenFrom := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		args := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(sc.Text()), fields[0]))
		switch strings.ToUpper(fields[0]) {
		case "FROM":
			seenFrom, d = true, imageDesc{}
		case "COPY":
			d.Files = append(d.Files, copyDests(fields[1:])...)
		case "USER":
			d.User = args
		case "ENTRYPOINT", "CMD":
			var v []string
			if err := json.Unmarshal([]byte(args), &v); err != nil {
				return imageDesc{}, fmt.Errorf("%s %s: use the exec (JSON) form", fields[0], args)
			}
			if strings.ToUpper(fields[0]) == "CMD" {
				d.Cmd = v
			} else {
				d.Entrypoint = v
			}
		}
	}
	if !seenFrom {
		return imageDesc{}, fmt.Errorf("%s: no FROM", file)
	}
	slices.Sort(d.Files)
	return d, sc.Err()
}

// copyDests returns the image paths a COPY writes (flags skipped).
func copyDests(words []string) []string {
	var srcs []string
	for _, w := range words {
		if !strings.HasPrefix(w, "--") {
			srcs = append(srcs, w)
		}
	}
	if len(srcs) < 2 {
		return nil
	}
	dst := srcs[len(srcs)-1]
	srcs = srcs[:len(srcs)-1]
	if !strings.HasSuffix(dst, "/") && len(srcs) == 1 {
		return []string{dst}
	}
	var out []string
	for _, s := range srcs {
		out = append(out, path.Join(dst, path.Base(s)))
	}
	return out
}

// readImage reads an OCI image layout archive: its config and the regular
// executable files of its layers.
func readImage(archive string) (imageDesc, error) {
	blobs, index, err := readLayout(archive)
	if err != nil {
		return imageDesc{}, err
	}
	var idx struct {
		Manifests []struct{ Digest string } `json:"manifests"`
	}
	var manifest struct {
		Config struct{ Digest string }   `json:"config"`
		Layers []struct{ Digest string } `json:"layers"`
	}
	var config struct {
		Config struct {
			Entrypoint, Cmd []string
			User            string
		} `json:"config"`
	}
	if err := json.Unmarshal(index, &idx); err != nil || len(idx.Manifests) != 1 {
		return imageDesc{}, fmt.Errorf("index.json: want one manifest (%v)", err)
	}
	if err := json.Unmarshal(blobs[idx.Manifests[0].Digest], &manifest); err != nil {
		return imageDesc{}, fmt.Errorf("manifest: %w", err)
	}
	if err := json.Unmarshal(blobs[manifest.Config.Digest], &config); err != nil {
		return imageDesc{}, fmt.Errorf("config: %w", err)
	}
	d := imageDesc{Entrypoint: config.Config.Entrypoint, Cmd: config.Config.Cmd, User: config.Config.User}
	for _, l := range manifest.Layers {
		files, err := executables(blobs[l.Digest])
		if err != nil {
			return imageDesc{}, fmt.Errorf("layer %s: %w", l.Digest, err)
		}
		d.Files = append(d.Files, files...)
	}
	slices.Sort(d.Files)
	return d, nil
}

// readLayout returns the archive's blobs by digest and its index.json.
func readLayout(archive string) (map[string][]byte, []byte, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	blobs := map[string][]byte{}
	var index []byte
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return blobs, index, nil
		}
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, nil, err
		}
		name := path.Clean(h.Name)
		if name == "index.json" {
			index = data
		} else if rest, ok := strings.CutPrefix(name, "blobs/sha256/"); ok {
			blobs["sha256:"+rest] = data
		}
	}
}

// executables lists the regular files with an execute bit in a gzip'd layer.
func executables(layer []byte) ([]string, error) {
	zr, err := gzip.NewReader(strings.NewReader(string(layer)))
	if err != nil {
		return nil, err
	}
	var out []string
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0 {
			out = append(out, "/"+strings.TrimPrefix(path.Clean(h.Name), "/"))
		}
	}
}
