#!/usr/bin/env bash
# Everything `npm run test:ci` needs, in one place: starts what this machine
# can start (Redis, PostgreSQL, RabbitMQ), installs Debian's chromium when it
# runs as root, fetches the Node.js releases of the test matrix, and
# otherwise names every missing piece in one message, so a newcomer learns
# all of it at once instead of one failing suite at a time.
set -uo pipefail
cd "$(dirname "$0")/.."

REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}"
NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
MQTT_URL="${MQTT_URL:-mqtt://127.0.0.1:1883}"
CHROMIUM="${CHROMIUM_PATH:-/usr/bin/chromium}"
missing=()

# host:port of a URL (user info, path and query stripped), with a default port.
hostport() {
  local rest="${1#*://}"
  rest="${rest#*@}"; rest="${rest%%/*}"; rest="${rest%%\?*}"
  case "$rest" in *:*) echo "$rest" ;; *) echo "$rest:$2" ;; esac
}
local_host() { case "${1%:*}" in 127.0.0.1|localhost|::1|\[::1\]) return 0 ;; *) return 1 ;; esac; }
answers() { (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; }
wait_for() { for _ in $(seq 1 "$2"); do answers "$1" && return 0; sleep 0.5; done; return 1; }

# The first release of each line where an ES module app (NestJS 12's) can load the CommonJS libraries.
node -e 'const [a, b, c] = process.versions.node.split(".").map(Number); const first = { 20: [19, 5], 22: [17, 0], 24: [1, 0] }[a];
process.exit((first ? b > first[0] || (b === first[0] && c >= first[1]) : a > 20) ? 0 : 1)' \
  || missing+=("Node.js 20.19.5+, 22.17+ or 24.1+ (an ES module app loading these CommonJS libraries needs it), this is $(node --version) (nvm install 24, or https://nodejs.org)")
[ -d node_modules/.bin ] || missing+=("the workspace's packages: run 'npm ci' first")
command -v python3 >/dev/null || missing+=("python3, for the verifier's chain in another language (apt-get install python3)")
command -v redis-server >/dev/null && command -v redis-cli >/dev/null \
  || missing+=("redis-server and redis-cli, for the local Redis Cluster and the outage tests (apt-get install redis-server)")

if command -v redis-server >/dev/null; then bash infra/redis-up.sh >/dev/null || true; fi
redis=$(hostport "$REDIS_URL" 6379)
if ! answers "$redis"; then
  if command -v redis-server >/dev/null; then
    missing+=("a Redis at REDIS_URL ($redis): redis-server is installed but did not start there (bash infra/redis-up.sh says why)")
  else
    missing+=("a Redis at REDIS_URL ($redis) (apt-get install redis-server: the preflight then starts one there)")
  fi
fi

pg=$(hostport "$DATABASE_URL" 5432)
if ! answers "$pg" && local_host "$pg" && command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -1)" main start >/dev/null 2>&1
  wait_for "$pg" 20
fi
answers "$pg" || missing+=("a PostgreSQL at DATABASE_URL ($pg) that trusts local connections (apt-get install postgresql and set 'trust' for host 127.0.0.1 in pg_hba.conf: the preflight then starts it; or docker compose -f infra/docker-compose.yml up -d postgres)")

amqp=$(hostport "$AMQP_URL" 5672)
if ! answers "$amqp" && local_host "$amqp" && command -v rabbitmq-server >/dev/null; then
  rabbitmq-server -detached >/dev/null 2>&1
  wait_for "$amqp" 120
fi
answers "$amqp" || missing+=("a RabbitMQ at AMQP_URL ($amqp) (apt-get install rabbitmq-server: the preflight then starts it)")

nats=$(hostport "$NATS_URL" 4222)
answers "$nats" || missing+=("a NATS server with JetStream at NATS_URL ($nats) (nats-server -js), for the NATS transport's tests")
mqtt=$(hostport "$MQTT_URL" 1883)
answers "$mqtt" || missing+=("an MQTT 5 broker at MQTT_URL ($mqtt) (apt-get install mosquitto), for the MQTT transport's tests")

if [ ! -x "$CHROMIUM" ] && [ -z "${CHROMIUM_PATH:-}" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "preflight: installing Debian's chromium for the console's browser tests"
  { apt-get update -qq && apt-get install -y -qq chromium; } >/dev/null 2>&1
fi
[ -x "$CHROMIUM" ] || missing+=("a chromium at $CHROMIUM for the console's browser tests (apt-get install chromium, or set CHROMIUM_PATH)")

# The Node.js releases of the matrix (consumers/node-matrix.json), from the npm registry.
matrix=$(node scripts/node-matrix.mjs 2>&1) \
  || missing+=("the Node.js releases of the test matrix: $matrix (the npm registry must be reachable once; they are kept under node_modules/.cache/node-matrix)")

if [ ${#missing[@]} -gt 0 ]; then
  echo "preflight: the tests need what this machine does not have:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi
echo "preflight: Redis $redis, PostgreSQL $pg, RabbitMQ $amqp, NATS $nats, MQTT $mqtt, chromium $CHROMIUM"
echo "preflight: $matrix"
