#!/usr/bin/env bash
# Make sure a Redis answers on REDIS_URL (default redis://127.0.0.1:6379).
# Where nothing listens there, start a local redis-server that keeps nothing
# on disk. Machines with Docker can use infra/docker-compose.yml instead.
set -euo pipefail

url="${REDIS_URL:-redis://127.0.0.1:6379}"
hostport="${url#*://}"; hostport="${hostport#*@}"; hostport="${hostport%%/*}"
host="${hostport%:*}"; port="${hostport##*:}"
[ "$host" = "$hostport" ] && port=6379

if redis-cli -h "$host" -p "$port" ping 2>/dev/null | grep -q PONG; then
  echo "redis: answering on $host:$port"
  exit 0
fi
if ! command -v redis-server >/dev/null; then
  echo "redis: nothing answers on $host:$port and redis-server is not installed (apt-get install redis-server)" >&2
  exit 1
fi
echo "redis: starting redis-server on $host:$port"
redis-server --daemonize yes --bind "$host" --port "$port" --save "" --appendonly no \
  --logfile "${TMPDIR:-/tmp}/redis-$port.log"
for _ in $(seq 1 50); do
  redis-cli -h "$host" -p "$port" ping 2>/dev/null | grep -q PONG && { echo "redis: up"; exit 0; }
  sleep 0.1
done
echo "redis: did not start; see ${TMPDIR:-/tmp}/redis-$port.log" >&2
exit 1
