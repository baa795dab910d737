package nodenics

// WholeDump is r reading the whole netns's addresses and routes whatever
// the number of NICs, as a rescan does.
func WholeDump(r Reader) Reader {
	r.wholeDump = true
	return r
}
