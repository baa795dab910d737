// Package good is a plugin on pkg alone.
package good

import _ "example.com/m/pkg/api"
