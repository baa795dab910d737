// Package bad is a plugin reaching ipam through pkg/leaky and k8s.io directly.
package bad

import (
	_ "example.com/m/pkg/leaky"
	_ "k8s.io/fake"
)
