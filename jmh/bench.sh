#!/usr/bin/env bash
# Builds the benchmarks and runs them, writing JMH's JSON and log to jmh/results/.
#   jmh/bench.sh quick [regex]   short iterations, throughput only (no *Latency twins): a ranking in under
#                                3 minutes, not numbers to quote
#   jmh/bench.sh full  [regex]   the module's defaults (BenchmarkDefaults): numbers to quote
# The optional regex selects benchmarks, e.g. 'LockContended|ReadWriteLock'.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-quick}
pattern=${2:-.}
case "$mode" in
  quick) opts=(-wi 1 -w 1s -i 1 -r 2s -f 1 -e 'Latency$') ;;
  full) opts=() ;;
  *) echo "usage: jmh/bench.sh quick|full [regex]" >&2; exit 2 ;;
esac
./mvnw -q -B -pl jmh -am package -Dmaven.test.skip=true
mkdir -p jmh/results
java -jar jmh/target/benchmarks.jar "$pattern" "${opts[@]}" -rf json -rff "jmh/results/$mode.json" \
  | tee "jmh/results/$mode.log"
# Redis work per operation, from the last measured iteration of each benchmark and implementation.
grep -oE 'REDIS-STATS .*(measurement).*' "jmh/results/$mode.log" | awk '{ key = $NF " " $2; last[key] = $0 } END { for (k in last) print last[k] }' | sort
