package recovery

// RailPod is railPod, for the tests of package recovery_test.
var RailPod = railPod
