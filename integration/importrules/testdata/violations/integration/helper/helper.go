// Package helper is integration code: it may import anything.
package helper

import _ "example.com/m/ipam"
