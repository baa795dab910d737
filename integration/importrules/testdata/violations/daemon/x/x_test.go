package x_test

import _ "example.com/m/integration/helper" // a product test leaning on integration/
