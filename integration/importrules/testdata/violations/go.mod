// A module breaking each import rule once (and keeping it elsewhere), for
// importrules' test: go list must report, and Check must catch, every one.
module example.com/m

go 1.26

require k8s.io/fake v0.0.0

replace k8s.io/fake => ./k8sfake
