// Package process reads a container's files as the container sees them:
// paths resolved inside its own root (/proc/<pid>/root), never through
// links into the node's.
package process
