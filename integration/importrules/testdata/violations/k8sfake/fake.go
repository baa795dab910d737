package fake
