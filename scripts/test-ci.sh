#!/usr/bin/env bash
# Every test, against real Redis, a real Redis Cluster and PostgreSQL:
# starts a local cluster (infra/redis-cluster.sh), runs `npm test` with
# REDIS_CLUSTER_NODES set, and stops the cluster however the tests end.
# Redis (REDIS_URL) and PostgreSQL (DATABASE_URL) must already answer.
set -euo pipefail
cd "$(dirname "$0")/.."

export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
trap 'bash infra/redis-cluster.sh down' EXIT
bash infra/redis-cluster.sh up
REDIS_CLUSTER_NODES="$(bash infra/redis-cluster.sh nodes)"
export REDIS_CLUSTER_NODES
npm test
