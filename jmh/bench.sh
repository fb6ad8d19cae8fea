#!/usr/bin/env bash
# Builds the benchmarks and runs them, writing JMH's JSON and log to jmh/results/.
#   jmh/bench.sh quick [regex]   short iterations, throughput only (no *Latency twins): a ranking in under
#                                3 minutes, not numbers to quote
#   jmh/bench.sh full  [regex]   the module's defaults (BenchmarkDefaults): numbers to quote
#   jmh/bench.sh fleet [regex] [jmh options...]
#                                many client instances on one name, one thread each: the contended lock
#                                (fair too), read-write lock and semaphore throughput methods, once per
#                                number of clients in $CLIENTS (default "2 8 16 32 64": about 13 minutes on
#                                2 cores), each with -t N -p clients=N and short iterations; then
#                                the summary table, also written to jmh/results/fleet.tsv (FleetReport),
#                                which FleetChart draws. Extra options go to JMH, e.g. -p impl=SYNCHRONIZERS,REDISSON
# The optional regex selects benchmarks, e.g. 'LockContended|ReadWriteLock'.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
case "$mode" in
  quick) pattern=${2:-.}; opts=(-wi 1 -w 1s -i 1 -r 2s -f 1 -e 'Latency$') ;;
  full) pattern=${2:-.}; opts=() ;;
  fleet)
    pattern=${2:-'LockContendedBenchmark|ReadWriteLockBenchmark|SemaphoreThroughputBenchmark'}
    shift $(( $# < 2 ? $# : 2 ))
    opts=(-wi 1 -w 2s -i 2 -r 3s -f 1 -e 'Latency$' "$@") ;;
  *) echo "usage: jmh/bench.sh quick|full [regex] | fleet [regex] [jmh options...]" >&2; exit 2 ;;
esac
if [ -z "${SKIP_BUILD:-}" ]; then  # SKIP_BUILD=1: run jmh/target/benchmarks.jar as already built
  ./mvnw -q -B -pl jmh -am -Pbenchmarks package -Dmaven.test.skip=true
fi
mkdir -p jmh/results
if [ "$mode" = fleet ]; then
  start=$(date +%s)
  echo "fleet run: clients ${CLIENTS:-2 8 16 32 64}, started $(date -u +%H:%M:%S) UTC, $(uptime)"
  rm -f jmh/results/fleet-c*.json jmh/results/fleet-c*.log
  for c in ${CLIENTS:-2 8 16 32 64}; do
    java -jar jmh/target/benchmarks.jar "$pattern" "${opts[@]}" -t "$c" -p clients="$c" \
      -rf json -rff "jmh/results/fleet-c$c.json" | tee "jmh/results/fleet-c$c.log"
    echo "clients=$c done after $(( $(date +%s) - start )) s, $(uptime)"
  done
  java -cp jmh/target/benchmarks.jar dev.synchronizers.jmh.FleetReport jmh/results/fleet.tsv \
    jmh/results/fleet-c*.json jmh/results/fleet-c*.log
  echo "fleet run took $(( $(date +%s) - start )) s; $(uptime)"
  echo "chart: java -cp jmh/target/benchmarks.jar dev.synchronizers.jmh.FleetChart jmh/results/fleet.tsv docs/fleet.png"
  exit 0
fi
java -jar jmh/target/benchmarks.jar "$pattern" "${opts[@]}" -rf json -rff "jmh/results/$mode.json" \
  | tee "jmh/results/$mode.log"
# Redis work per operation, from the last measured iteration of each benchmark and implementation.
grep -oE 'REDIS-STATS .*(measurement).*' "jmh/results/$mode.log" | awk '{ key = $NF " " $2; last[key] = $0 } END { for (k in last) print last[k] }' | sort
