#!/usr/bin/env bash
# Builds every bundle directory under bundles/ into REGISTRY/bundles/<operator>-bundle:v<version>
# and pushes it. The templates name registry.dbaas.example/bundles/...; render them from REGISTRY
# with: kplane catalog generate --mirror registry.dbaas.example=REGISTRY
# Usage: ./push-bundles.sh 127.0.0.1:5000
set -euo pipefail
registry=${1:?usage: $0 REGISTRY (e.g. 127.0.0.1:5000)}
here=$(cd "$(dirname "$0")" && pwd)
kplane=(node "$here/../../bin/kplane.js")
for dir in "$here"/bundles/*/*/; do
  version=$(basename "$dir")
  operator=$(basename "$(dirname "$dir")")
  "${kplane[@]}" catalog bundle build "$dir" --tag "$registry/bundles/$operator-bundle:v$version" --push --progress none >/dev/null
  echo "pushed $registry/bundles/$operator-bundle:v$version"
done
