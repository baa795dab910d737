#!/bin/bash
# state.sh: what a pod's life must leave as it found it on a node, one sorted line per fact, in the
# guest's initial netns: links (name, MTU, up), addresses, routes of every table, rules, RDMA
# devices with their netdevs, /dev/infiniband, each RDMA device's GID table, named netns. Counters,
# link indexes and lifetimes are left out: they change without anything being left behind.
set -u
{
  ip -o link show | awk '{sub(":", "", $2); sub("@.*", "", $2); up = ($3 ~ /[<,]UP[,>]/) ? "up" : "down"; print "link", $2, $5, up}'
  ip -o addr show | awk '{print "addr", $2, $3, $4}'
  for fam in -4 -6; do ip "$fam" route show table all | sed "s/^/route $fam /; s/ proto kernel//; s/ metric [0-9]*//; s/ pref medium//; s/ expires [0-9]*sec//"; done
  ip -4 rule show | sed 's/^/rule /'
  ip -6 rule show | sed 's/^/rule6 /'
  rdma link show 2>/dev/null | awk '{print "rdma", $2, $NF}'
  ls /dev/infiniband 2>/dev/null | sed 's/^/devnode /'
  # one grep per table (an rxe's holds 1024 entries: a process per entry takes minutes under TCG)
  for d in /sys/class/infiniband/*; do
    [ -d "$d" ] || continue
    { grep -sH . "$d"/ports/1/gid_attrs/ndevs/*; grep -sH . "$d"/ports/1/gids/*; } |
      awk -F: -v dev="${d##*/}" '
        { n = split($1, p, "/"); idx = p[n]; v = substr($0, length($1) + 2) }
        $1 ~ /ndevs/ { ndev[idx] = v; next }
        v != "0000:0000:0000:0000:0000:0000:0000:0000" { gid[idx] = v }
        END { for (i in gid) print "gid", dev, i, gid[i], ndev[i] }'
  done
  [ -d /run/netns ] && ls /run/netns | sed "s/^/netns /"
} | LC_ALL=C sort
