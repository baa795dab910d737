// Package process pins a container's init process and reads it through
// that pin: a pid is the process raild saw start only while the process
// holding it has the start time recorded then (a pid reused by another
// process never has), and every read goes through one descriptor of its
// /proc directory, checked again after the reads, so a process that exits
// or whose pid is reused mid-read is reported gone rather than read.
// Paths inside the container are resolved in its own root
// (/proc/<pid>/root) as the container would open them, never through
// links into the node's.
package process
