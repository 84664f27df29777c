#!/usr/bin/env bash
# What the newest releases on the npm registry do to the projects a team
# builds on ours. Not part of `npm run test:ci`, whose verdict depends on this
# repository alone: here the scratch apps, the copied-out apps, the store of
# its own and the verifier install the newest releases their manifests allow
# instead of what consumers/fixtures/*/package-lock.json pins. It prints what
# moved since the locks, then runs the consumers' tests on those releases
# (every Node.js of the matrix) and exits with their verdict: run it on a
# schedule, and when it goes red, fix or pin, then `npm run fixtures:lock -w
# @idempotency-chain/consumers` to move the locks.
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/test-env.sh
bash scripts/preflight.sh
npx turbo run build --filter=@idempotency-chain/consumers^... --output-logs=errors-only
echo "test:latest: what moved on the registry since the committed locks"
npm run --silent fixtures:drift -w @idempotency-chain/consumers
echo "test:latest: the consumers' tests on the newest releases"
if FIXTURE_DEPS=latest npm test -w @idempotency-chain/consumers; then
  echo "test:latest: the newest releases pass"
else
  echo "test:latest: the newest releases FAIL (the locked ones are what npm run test:ci tests)" >&2
  exit 1
fi
