// Package leaky is pkg importing ipam.
package leaky

import _ "example.com/m/ipam"
