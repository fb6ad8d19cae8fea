#!/usr/bin/env bash
# Builds each example application of this folder (one per Spring Boot line, each with Boot's parent
# and no version overrides) against the synchronizers in the local Maven repository (install the
# library first: ./mvnw install -DskipTests), starts it against a redis-server of its own on a free
# loopback port, and checks what a user would: /actuator/health is UP with the synchronizers
# indicator UP, GET /lock takes the lock, GET /permit takes the permit. Exits non-zero on the first
# failure, after printing the application's log.
#
#   examples/boot-lines/check.sh [boot-3.5 boot-4.0 boot-4.1]   (default: all three)
#   MVN_ARGS: extra Maven arguments for the builds (CI passes -B -q, and for boot-4.1 see .ci/run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
lines=("$@")
[ ${#lines[@]} -gt 0 ] || lines=(boot-3.5 boot-4.0 boot-4.1)

redis_pid=""
app_pid=""
cleanup() {
  # Only the processes this script started, by their ids.
  [ -z "$app_pid" ] || kill "$app_pid" 2>/dev/null || true
  [ -z "$redis_pid" ] || kill "$redis_pid" 2>/dev/null || true
  wait 2>/dev/null || true
}
trap cleanup EXIT

# A loopback port nothing listens on (the kernel's choice of a free one, released at once).
free_port() {
  java "$here/FreePort.java"
}

# Waits up to $2 seconds until command $1 succeeds.
await() {
  local deadline=$(( $(date +%s) + $2 ))
  until eval "$1" >/dev/null 2>&1; do
    if [ "$(date +%s)" -ge "$deadline" ]; then
      return 1
    fi
    sleep 0.2
  done
}

for line in "${lines[@]}"; do
  line_start=$(date +%s)
  dir="$here/$line"
  # shellcheck disable=SC2086 # MVN_ARGS is a list of arguments
  "$root/mvnw" -f "$dir/pom.xml" ${MVN_ARGS:--B -q} package -DskipTests
  jar=$(ls "$dir"/target/boot-line-*.jar | grep -v -- '-plain' | head -1)

  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no > "$dir/target/redis.log" 2>&1 &
  redis_pid=$!
  await "redis-cli -p $redis_port ping | grep -q PONG" 30 || { echo "check.sh: redis-server did not start"; cat "$dir/target/redis.log"; exit 1; }

  http_port=$(free_port)
  java -jar "$jar" --server.port="$http_port" --server.address=127.0.0.1 \
    --synchronizers.uri="redis://127.0.0.1:$redis_port" > "$dir/target/app.log" 2>&1 &
  app_pid=$!
  url="http://127.0.0.1:$http_port"
  fail() { echo "check.sh: $line: $1"; echo "--- application log:"; cat "$dir/target/app.log"; exit 1; }
  await "curl -fsS $url/actuator/health" 120 || fail "no healthy answer from $url/actuator/health within 120 s"

  health=$(curl -fsS "$url/actuator/health")
  # The overall status: first in Boot 3's JSON, last in Boot 4's.
  echo "$health" | grep -Eq '(^\{"status":"UP"|,"status":"UP"\}$)' || fail "health is not UP: $health"
  echo "$health" | grep -q '"synchronizers":{"status":"UP"' || fail "no synchronizers indicator UP: $health"
  versions=$(curl -fsS "$url/versions")
  lock=$(curl -fsS "$url/lock")
  [ "$lock" = "lock taken" ] || fail "GET /lock answered: $lock"
  permit=$(curl -fsS "$url/permit")
  [ "$permit" = "permit taken" ] || fail "GET /permit answered: $permit"

  kill "$app_pid"; wait "$app_pid" 2>/dev/null || true; app_pid=""
  kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=""
  echo "check.sh: $line: health UP (synchronizers UP), lock taken, permit taken; ${versions%$'\n'}; $(( $(date +%s) - line_start )) s"
done
