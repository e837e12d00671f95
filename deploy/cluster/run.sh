#!/usr/bin/env bash
# Runs the example in the foreground: one Redis, three hypergate instances (ports 8080-8082, admin
# 9091-9093) and nginx on 127.0.0.1:8000 in front of them. Ctrl-C stops everything.
# Set HYPERGATE_UPSTREAM_URL and a key source (HYPERGATE_AUTH_JWKS_URL, ...) as for one instance;
# without them each instance starts its own embedded sample service and dev keys.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
mkdir -p "$work/tmp" "$work/logs"
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait
  rm -rf "$work"
}
trap stop EXIT INT TERM

redis-server "$here/redis.conf" --dir "$work" &
pids+=($!)
for i in 0 1 2; do
  HYPERGATE_SERVER_PORT=$((8080 + i)) HYPERGATE_ADMIN_PORT=$((9091 + i)) \
    node --import tsx "$root/src/main.ts" --config "$here/gateway.json" &
  pids+=($!)
done
nginx -p "$work/" -c "$here/nginx.conf" &
pids+=($!)
echo "hypergate x3 behind nginx on http://127.0.0.1:8000 (Redis 127.0.0.1:6379); Ctrl-C stops" >&2
wait -n
