#!/usr/bin/env bash
# Runs the example in the foreground, from any folder: one Redis, one sample customer service,
# three hypergate instances and nginx in front of them; with CLUSTER_REDIS=sentinel, Redis with a
# replica and three Sentinels that fail it over. Ctrl-C (or SIGTERM) stops everything.
# It runs the compiled gateway (dist/, made by npm ci or npm run build) with npm start's Node flags.
# What it reads from the environment, and how to use it with your own service and keys: README.md
# beside this file.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"

proxy_port="${CLUSTER_PROXY_PORT:-8000}"
read -r -a gateway_ports <<< "${CLUSTER_GATEWAY_PORTS:-8080 8081 8082}"
read -r -a admin_ports <<< "${CLUSTER_ADMIN_PORTS:-9091 9092 9093}"
redis_port="${CLUSTER_REDIS_PORT:-6379}"
sample_port="${CLUSTER_SAMPLE_PORT:-8070}"
if [ "${#gateway_ports[@]}" -ne 3 ] || [ "${#admin_ports[@]}" -ne 3 ]; then
  echo "run.sh: CLUSTER_GATEWAY_PORTS and CLUSTER_ADMIN_PORTS name three ports each (nginx.conf has three instances)" >&2
  exit 2
fi
if [ ! -f "$root/dist/main.js" ]; then
  echo "run.sh: $root/dist/main.js is missing: run npm ci (or npm run build) in $root first" >&2
  exit 2
fi
# npm start's Node flags (package.json "start"): the gateways run as a single instance does.
gateway_node=(node --enable-source-maps --v8-pool-size=0 --max-semi-space-size=8 --heap-growing-percent=30)

work="$(mktemp -d)"
# nginx's workers run as nobody when the master is root: they must reach the prefix.
chmod 755 "$work"
mkdir -p "$work/tmp"
pids=()
stop() {
  trap - EXIT INT TERM
  if [ "${#pids[@]}" -gt 0 ]; then kill "${pids[@]}" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap stop EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

config="$here/gateway.json"
if [ "${CLUSTER_REDIS:-server}" = sentinel ]; then
  # Redis that fails over: the master, a replica of it and three Sentinels (sentinel.conf, one copy
  # each: a Sentinel rewrites its file), and the gateways on gateway-sentinel.json with these ports.
  read -r -a sentinel_ports <<< "${CLUSTER_SENTINEL_PORTS:-26379 26380 26381}"
  replica_port="${CLUSTER_REDIS_REPLICA_PORT:-6380}"
  # Copies of redis.conf too: Sentinel rewrites the file of a server it reconfigures.
  cp "$here/redis.conf" "$work/redis-master.conf"
  cp "$here/redis.conf" "$work/redis-replica.conf"
  redis-server "$work/redis-master.conf" --port "$redis_port" --dir "$work" &
  pids+=($!)
  redis-server "$work/redis-replica.conf" --port "$replica_port" --dir "$work" --dbfilename replica.rdb --replicaof 127.0.0.1 "$redis_port" &
  pids+=($!)
  for i in 0 1 2; do
    sed -e "s/127\.0\.0\.1 6379 2/127.0.0.1 $redis_port 2/" "$here/sentinel.conf" > "$work/sentinel-$i.conf"
    redis-sentinel "$work/sentinel-$i.conf" --port "${sentinel_ports[$i]}" &
    pids+=($!)
  done
  sed -e 's/"port": 26379/"port": @s0@/' -e 's/"port": 26380/"port": @s1@/' -e 's/"port": 26381/"port": @s2@/' \
    -e "s/@s0@/${sentinel_ports[0]}/" -e "s/@s1@/${sentinel_ports[1]}/" -e "s/@s2@/${sentinel_ports[2]}/" \
    "$here/gateway-sentinel.json" > "$work/gateway.json"
  config="$work/gateway.json"
  unset HYPERGATE_REDIS_URL
  redis_where="master \"hypergate\" through Sentinels on ${sentinel_ports[*]}"
elif [ -z "${HYPERGATE_REDIS_URL:-}" ]; then
  redis-server "$here/redis.conf" --port "$redis_port" --dir "$work" &
  pids+=($!)
  export HYPERGATE_REDIS_URL="redis://127.0.0.1:$redis_port"
fi

# One sample service for all three instances (each would otherwise start its own, and a write
# through one would be unknown to the others), unless the instances are given a real one.
if [ -z "${HYPERGATE_UPSTREAM_URL:-}" ]; then
  node --enable-source-maps "$root/dist/sample-upstream/main.js" --port "$sample_port" &
  pids+=($!)
  export HYPERGATE_UPSTREAM_URL="http://127.0.0.1:$sample_port"
fi

# Dev auth mode (no key source set): the first token minted creates the dev key pair in
# .hypergate/dev-keys, before any instance starts, so all three load the same key.
if [ -z "${HYPERGATE_AUTH_JWKS_URL:-}${HYPERGATE_AUTH_JWKS_FILE:-}${HYPERGATE_AUTH_PUBLIC_KEY_FILE:-}${HYPERGATE_AUTH_SECRET:-}" ]; then
  node "$root/dist/dev/mint-token.js" --config "$here/gateway.json" > /dev/null
  echo "run.sh: dev auth mode; mint a token with: node $root/dist/dev/mint-token.js --config $here/gateway.json" >&2
fi

for i in 0 1 2; do
  HYPERGATE_SERVER_PORT="${gateway_ports[$i]}" HYPERGATE_ADMIN_PORT="${admin_ports[$i]}" \
    "${gateway_node[@]}" "$root/dist/main.js" --config "$config" &
  pids+=($!)
done

# nginx.conf as it is, with its addresses replaced: each documented port becomes a placeholder
# first, so a new port that equals another documented one is not replaced twice.
sed -e "s/127\.0\.0\.1:8000;/127.0.0.1:@proxy@;/" \
  -e "s/127\.0\.0\.1:8080 /127.0.0.1:@gateway0@ /" \
  -e "s/127\.0\.0\.1:8081 /127.0.0.1:@gateway1@ /" \
  -e "s/127\.0\.0\.1:8082 /127.0.0.1:@gateway2@ /" \
  -e "s/@proxy@/$proxy_port/" \
  -e "s/@gateway0@/${gateway_ports[0]}/" \
  -e "s/@gateway1@/${gateway_ports[1]}/" \
  -e "s/@gateway2@/${gateway_ports[2]}/" \
  "$here/nginx.conf" > "$work/nginx.conf"
nginx -e stderr -p "$work/" -c "$work/nginx.conf" &
pids+=($!)

echo "run.sh: hypergate x3 behind nginx on http://127.0.0.1:$proxy_port (Redis ${redis_where:-$HYPERGATE_REDIS_URL}, customer service $HYPERGATE_UPSTREAM_URL); Ctrl-C stops" >&2
# The first process to end (a port in use, a crash) ends the example.
wait -n
