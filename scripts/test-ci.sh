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

source scripts/test-env.sh
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
