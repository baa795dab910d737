package topology
