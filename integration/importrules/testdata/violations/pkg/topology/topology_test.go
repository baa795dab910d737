package topology

import _ "example.com/m/pkg/api" // a test import counts too
