#!/usr/bin/env bash
# Every check a change must pass, the way CI runs it: the preflight (starts
# or names every service the tests need), types, lint and format over every
# workspace, the published API against its reports (packages/*/api/*.api.md),
# the API reference (TypeDoc, every warning an error),
# unused files, exports and dependencies (knip.jsonc), then every test
# against real Redis, a real Redis Cluster, PostgreSQL and RabbitMQ.
# The local cluster (infra/redis-cluster.sh) is stopped however the tests end.
set -euo pipefail
cd "$(dirname "$0")/.."

export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}"
export TURBO_TELEMETRY_DISABLED=1
bash scripts/preflight.sh
npm run typecheck -- --output-logs=errors-only
npm run lint
npm run format:check
npm run api:check
npm run docs:check
npm run knip
trap 'bash infra/redis-cluster.sh down' EXIT
bash infra/redis-cluster.sh up
REDIS_CLUSTER_NODES="$(bash infra/redis-cluster.sh nodes)"
export REDIS_CLUSTER_NODES
npm test
