#!/usr/bin/env bash
# The check of -Prelease-check, run in every module at verify: each artifact this module built
# (jar, sources, javadoc, SBOM) must be byte-for-byte equal to the one that the reference build
# (release/rebuild.sh) made from a copy of the same tree at another path. Exits 1 naming each file
# that differs or is missing from the reference.
#
# usage: compare-rebuild.sh <root of the tree> <module directory> <build.finalName> <maven.deploy.skip>
set -euo pipefail
root=$1
module=$2
final=$3
unpublished=$4

if [ "$unpublished" = true ]; then
  exit 0   # not published (examples, benchmarks, testkit): nothing of it is released
fi
relative=${module#"$root"}
relative=${relative#/}
here="$module/target"
reference="$root/target/rebuild/src${relative:+/$relative}/target"
# Maven Central wants sources and javadoc beside every jar.
if [ -f "$here/$final.jar" ]; then
  for classifier in sources javadoc; do
    if [ ! -f "$here/$final-$classifier.jar" ]; then
      echo "release-check: ${relative:-.}: no $classifier jar (a module without Java gets its javadoc jar" \
           "from src/main/javadoc/index.html, its sources jar from its resources)" >&2
      exit 1
    fi
  done
fi

if [ ! -d "$root/target/rebuild/src" ]; then
  echo "release-check: no reference build in $root/target/rebuild: run -Prelease-check on the whole tree" >&2
  exit 1
fi

shopt -s nullglob
compared=0
failed=0
for file in "$here/$final".jar "$here/$final"-*.jar "$here"/bom.json "$here"/bom.xml; do
  [ -f "$file" ] || continue   # no main jar: a pom-packaged module
  name=${file##*/}
  if [ ! -f "$reference/$name" ]; then
    echo "release-check: ${relative:-.}/target/$name: missing from the reference build" >&2
    failed=$((failed + 1))
  elif ! cmp -s "$file" "$reference/$name"; then
    echo "release-check: ${relative:-.}/target/$name differs from the reference build's" \
         "($reference/$name); diffoscope shows where" >&2
    failed=$((failed + 1))
  fi
  compared=$((compared + 1))
done
if [ "$failed" -gt 0 ]; then
  exit 1
fi
if [ "$compared" -gt 0 ]; then
  echo "release-check: ${relative:-.}: $compared artifacts equal to the reference build's"
fi
