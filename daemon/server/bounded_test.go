package server

import (
	"strings"
	"testing"
)

// TestErrorsQuoteBoundedExcerpts: a huge value a pod or netconf wrote
// comes back quoted in part, never whole (an 8.9 MB answer lost its CNI
// code past the client's read cap).
func TestErrorsQuoteBoundedExcerpts(t *testing.T) {
	f := startServer(t)
	huge := strings.Repeat("7", 1<<20)
	for _, body := range []string{
		allocBody(`"annotations":{"rail.dev/gpus":"` + huge + `"}`),
		allocBody(`"annotations":{"rail.dev/pool":"` + huge + `"}`),
		allocBody(`"cniArgs":{"gpus":"` + huge + `"}`),
		allocBody(`"ifPrefix":"` + huge + `"`),
	} {
		status, answer := f.do(t, "POST", "/v1/allocate", body)
		if status < 400 || len(answer) > 8<<10 || !strings.Contains(string(answer), `"code"`) {
			t.Errorf("answer %d of %d bytes: want a coded error quoting a bounded excerpt", status, len(answer))
		}
	}
}
