// Package ipam imports another project package.
package ipam

import _ "example.com/m/pkg/api"
