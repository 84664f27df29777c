#!/usr/bin/env bash
# A throwaway local Redis Cluster from redis-server: three masters on loopback,
# each with one replica, no persistence, data under a temp dir.
#
#   bash infra/redis-cluster.sh up      # start (or confirm) it; prints REDIS_CLUSTER_NODES
#   bash infra/redis-cluster.sh down    # stop every node it started, remove its dir
#   bash infra/redis-cluster.sh nodes   # print REDIS_CLUSTER_NODES
#   bash infra/redis-cluster.sh restart-node PORT   # start a node again after it was killed
#
# REDIS_CLUSTER_PORT (default 7001) is the first port; the six nodes use it and
# the next five: masters first, then replicas. REDIS_CLUSTER_REPLICAS=0 starts
# three masters only. `up` is idempotent: a cluster already answering on the
# ports is left as it is.
set -euo pipefail

first="${REDIS_CLUSTER_PORT:-7001}"
replicas="${REDIS_CLUSTER_REPLICAS:-1}"
count=$(( 3 * (1 + replicas) ))
ports=$(seq "$first" $(( first + count - 1 )))
dir="${TMPDIR:-/tmp}/idempotency-redis-cluster-$first"

nodes() { local out=""; for p in $ports; do out="${out:+$out,}127.0.0.1:$p"; done; echo "$out"; }

# Every node, not only the first, sees the whole cluster as ok, and every
# replica is in sync with its master: clients that connect right after `up`
# find the topology settled.
cluster_ok() {
  local p
  for p in $ports; do
    redis-cli -p "$p" cluster info 2>/dev/null | grep -q 'cluster_state:ok' || return 1
    [ "$(redis-cli -p "$p" cluster nodes 2>/dev/null | grep -c -v fail)" -ge "$count" ] || return 1
    if redis-cli -p "$p" info replication 2>/dev/null | grep -q 'role:slave'; then
      redis-cli -p "$p" info replication | grep -q 'master_link_status:up' || return 1
    fi
  done
}

start_node() {
  mkdir -p "$dir/$1"
  redis-server --port "$1" --bind 127.0.0.1 --daemonize yes --dir "$dir/$1" \
    --cluster-enabled yes --cluster-config-file "nodes-$1.conf" --cluster-node-timeout "${REDIS_CLUSTER_NODE_TIMEOUT:-2000}" \
    --save "" --appendonly no --pidfile "$dir/$1/redis.pid" --logfile "$dir/$1/redis.log"
}

up() {
  command -v redis-server >/dev/null || { echo "redis-cluster: redis-server is not installed (apt-get install redis-server)" >&2; exit 1; }
  if cluster_ok; then echo "redis-cluster: answering on $(nodes)"; return; fi
  down quiet
  mkdir -p "$dir"
  for p in $ports; do start_node "$p"; done
  for p in $ports; do
    for _ in $(seq 1 50); do redis-cli -p "$p" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
  done
  # shellcheck disable=SC2046
  redis-cli --cluster create $(for p in $ports; do printf '127.0.0.1:%s ' "$p"; done) \
    --cluster-replicas "$replicas" --cluster-yes >"$dir/create.log"
  for _ in $(seq 1 100); do
    if cluster_ok; then echo "redis-cluster: up on $(nodes)"; return; fi
    sleep 0.2
  done
  echo "redis-cluster: did not reach cluster_state:ok; see $dir" >&2
  exit 1
}

down() {
  for p in $ports; do
    if [ -f "$dir/$p/redis.pid" ]; then
      kill "$(cat "$dir/$p/redis.pid")" 2>/dev/null || true
    fi
    # A node whose pid file is gone (killed by the failover measurement and restarted) still answers here.
    redis-cli -p "$p" shutdown nosave >/dev/null 2>&1 || true
  done
  for p in $ports; do
    for _ in $(seq 1 50); do redis-cli -p "$p" ping >/dev/null 2>&1 || break; sleep 0.1; done
  done
  rm -rf "$dir"
  [ "${1:-}" = quiet ] || echo "redis-cluster: down"
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  nodes) nodes ;;
  restart-node) start_node "${2:?port}" ;;
  *) echo "usage: $0 up|down|nodes|restart-node PORT" >&2; exit 2 ;;
esac
