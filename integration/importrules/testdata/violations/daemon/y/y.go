// Package y is product code importing integration/.
package y

import _ "example.com/m/integration/helper"
