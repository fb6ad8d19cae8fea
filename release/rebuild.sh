#!/usr/bin/env bash
# The reference build of -Prelease-check (the root pom's exec execution "rebuild" runs it first):
# copies the work tree as it is (committed or not), without build output or git data, to another
# path and builds the copy's release artifacts there. Each published module then compares its own
# artifacts with the copy's (release/compare-rebuild.sh): a difference is a reproducibility defect.
#
# usage: rebuild.sh <root of the tree> <output directory> <project.build.outputTimestamp>
set -euo pipefail
root=$1
out=$2
timestamp=$3

rm -rf "$out"
mkdir -p "$out/src"
tar -C "$root" --exclude=./.git --exclude=target -cf - . | tar -C "$out/src" -xf -

echo "release-check: rebuilding the tree in $out/src for the reproducibility check"
cd "$out/src"
# Tests are not built, nor the demo and the benchmarks: the comparison is of what a release
# publishes. reproducibility.skip keeps the copy from rebuilding itself.
if ! ./mvnw -B -q package -Prelease-check -Dreproducibility.skip=true -Dmaven.test.skip=true \
    -pl '!examples,!jmh' \
    "-Dproject.build.outputTimestamp=$timestamp" >"$out/build.log" 2>&1; then
  tail -n 60 "$out/build.log"
  echo "release-check: the reference build failed; its log is $out/build.log" >&2
  exit 1
fi
