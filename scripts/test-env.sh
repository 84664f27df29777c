# Sourced by test-ci.sh and test-latest.sh: where the tests find their
# services unless the environment says otherwise, and turbo without telemetry.
export REDIS_URL="${REDIS_URL:-redis://127.0.0.1:6379}"
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
export AMQP_URL="${AMQP_URL:-amqp://guest:guest@127.0.0.1:5672}"
export NATS_URL="${NATS_URL:-nats://127.0.0.1:4222}"
export MQTT_URL="${MQTT_URL:-mqtt://127.0.0.1:1883}"
export TURBO_TELEMETRY_DISABLED=1
