package topology

import (
	"slices"
	"strings"
)

// naturalCompare orders names with their digit runs compared as numbers,
// so mlx5_2 comes before mlx5_10 and uverbs9 before uverbs10. Names equal
// as numbers (mlx5_02, mlx5_2) fall back to byte order, so the order is
// total.
func naturalCompare(a, b string) int {
	if c := naturalRuns(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func naturalRuns(a, b string) int {
	for a != "" && b != "" {
		da, db := isDigit(a[0]), isDigit(b[0])
		switch {
		case da && db:
			na, ra := digitRun(a)
			nb, rb := digitRun(b)
			if c := compareNumbers(na, nb); c != 0 {
				return c
			}
			a, b = ra, rb
		case a[0] != b[0]:
			return int(a[0]) - int(b[0])
		default:
			a, b = a[1:], b[1:]
		}
	}
	return len(a) - len(b)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// digitRun splits s into its leading digits (without leading zeros) and
// the rest.
func digitRun(s string) (string, string) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return strings.TrimLeft(s[:i], "0"), s[i:]
}

// compareNumbers compares two decimal strings without leading zeros.
func compareNumbers(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func sortNatural(names []string) { slices.SortFunc(names, naturalCompare) }

// sortNaturalBy sorts positions by the natural order of their names.
func sortNaturalBy(pos []int, name func(int) string) {
	slices.SortFunc(pos, func(a, b int) int { return naturalCompare(name(a), name(b)) })
}

// sortStableBy sorts positions by less, keeping the order of equal ones.
func sortStableBy(pos []int, less func(a, b int) bool) {
	slices.SortStableFunc(pos, func(a, b int) int {
		switch {
		case less(a, b):
			return -1
		case less(b, a):
			return 1
		}
		return 0
	})
}
