// Package maketargets finds the `make` targets the project's Markdown pages
// tell a reader to run, so a test can run `make -n` on each: the README and
// docs/ never name a target the Makefile lacks.
package maketargets

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Use is one target a page names: "make Target" at File:Line.
type Use struct {
	Target string
	File   string
	Line   int
}

// targetName is what make is given as a target in the pages (not an option,
// not a VAR=value assignment).
var targetName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// assignment is a VAR=value word before a command.
var assignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// inlineCode matches one code span on a line.
var inlineCode = regexp.MustCompile("`+[^`]+`+")

// Pages returns the Markdown files under root a reader is sent to, skipping
// testdata and hidden directories.
func Pages(root string) ([]string, error) {
	var pages []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (name == "testdata" || strings.HasPrefix(name, ".")) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	return pages, err
}

// Scan returns every make target the page names in code: fenced blocks and
// inline code spans. Prose ("make sure") is not a command and is skipped.
func Scan(path string) ([]Use, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var uses []Use
	fenced := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		code := []string{line}
		if !fenced {
			code = inlineCode.FindAllString(line, -1)
		}
		for _, c := range code {
			for _, t := range Targets(strings.Trim(c, "`")) {
				uses = append(uses, Use{Target: t, File: path, Line: n})
			}
		}
	}
	return uses, sc.Err()
}

// Targets returns the targets of every make command in a piece of shell:
// `sudo make bench`, `FUZZTIME=1m make fuzz`, `make -C dir build test`.
// make counts only where a command starts (after a prompt, sudo or
// VAR=value assignments), so prose in a code block ("every make target")
// is no command. A comment ends the line; ;, &&, || and | end a command.
func Targets(shell string) []string {
	if i := strings.Index(shell, "#"); i >= 0 {
		shell = shell[:i]
	}
	var targets []string
	start, inMake, skipNext := true, false, false
	for _, w := range strings.Fields(shell) {
		switch {
		case w == ";" || w == "&&" || w == "||" || w == "|":
			start, inMake = true, false
		case start && (w == "$" || w == "sudo" || assignment.MatchString(w)):
		case start:
			start, inMake = false, w == "make"
		case !inMake:
		case skipNext:
			skipNext = false
		case w == "-C" || w == "-f":
			skipNext = true // the option's argument
		case targetName.MatchString(w):
			targets = append(targets, w)
		}
	}
	return targets
}
