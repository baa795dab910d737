package kubeclient

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/railcni/rail/daemon/inputfile"
)

// maxKubeconfig bounds the kubeconfig raild reads (embedded certificates
// make one a few KiB).
const maxKubeconfig = 4 << 20

// checkKubeconfigFiles refuses a kubeconfig, or a file its current context
// names (certificate-authority, client certificate and key, tokenFile),
// that is not a regular file: client-go opens them blocking, so a FIFO
// would hang raild at start, deaf to SIGTERM. A file that does not exist is
// left to client-go's own error.
func checkKubeconfigFiles(path string) error {
	data, err := inputfile.Read(path, maxKubeconfig)
	if err != nil {
		return err
	}
	raw, err := clientcmd.Load(data)
	if err != nil {
		return err
	}
	ctx := raw.Contexts[raw.CurrentContext]
	if ctx == nil {
		return nil // client-go names the missing context
	}
	var named []struct{ field, path string }
	add := func(field, p string) {
		if p == "" {
			return
		}
		if !filepath.IsAbs(p) { // relative to the kubeconfig, as client-go resolves it
			p = filepath.Join(filepath.Dir(path), p)
		}
		named = append(named, struct{ field, path string }{field, p})
	}
	if c := raw.Clusters[ctx.Cluster]; c != nil {
		add("certificate-authority", c.CertificateAuthority)
	}
	if u := raw.AuthInfos[ctx.AuthInfo]; u != nil {
		add("client-certificate", u.ClientCertificate)
		add("client-key", u.ClientKey)
		add("tokenFile", u.TokenFile)
	}
	for _, f := range named {
		if err := inputfile.Regular(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", f.field, err)
		}
	}
	return nil
}
