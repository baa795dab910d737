package server

import (
	"net/http"

	"github.com/railcni/rail/pkg/api"
)

// PodReports answers `raild doctor --pod`: one pod's RDMA path, checked
// now; ok false when no pod of that name holds rail interfaces here.
type PodReports func(namespace, name string) (report *api.PodReport, ok bool)

func (s *Server) pod(w http.ResponseWriter, r *http.Request) {
	if s.podReports == nil {
		writeError(w, &api.Error{Code: api.CodeNotAvailable, Msg: "pod reports are off",
			Details: "raild runs without its readiness checks (readiness.enabled: false)"})
		return
	}
	ns, name := r.PathValue("namespace"), r.PathValue("name")
	report, ok := s.podReports(ns, name)
	if !ok {
		writeError(w, &api.Error{Code: api.CodeUnknownContainer, Msg: "no rail pod " + ns + "/" + name + " on this node",
			Details: "raild holds no rail interface with a NIC for it: is it on this node (kubectl get pod -o wide), " +
				"and did it get rail interfaces (`raild leases`)?"})
		return
	}
	respond(w, report, nil)
}
