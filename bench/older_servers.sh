#!/bin/sh
# The older API servers asched supports (docs/deploy.md), tested as CI tests the newest:
# each is built from Go modules (ASCHED_KUBE_VERSION, cached under ~/.cache/asched like the
# newest; ~10 minutes cold each), then the live integration tests run against it, and the
# contract tests, which pin v1.37's answers, count where the older server answers otherwise.
#
#   sh bench/older_servers.sh OUT [VERSION...]
#     OUT:     where each version's pytest logs go (OUT/<version>-{integration,contract}.log)
#     VERSION: default every older supported one (asched.tools.backends.provision.OLDER_VERSIONS)
# (PYTHON names the interpreter with asched and its test extra installed; default python3)
set -eu
out=${1:?usage: sh bench/older_servers.sh OUT [VERSION...]}
shift
python=${PYTHON:-python3}
versions=${*:-$($python -c 'from asched.tools.backends.provision import OLDER_VERSIONS; print(*OLDER_VERSIONS)')}
mkdir -p "$out"
for version in $versions; do
  echo "== $version: build $(date -u +%H:%M:%S)"
  ASCHED_KUBE_VERSION=$version $python -m asched.tools.backends.provision > "$out/$version-build.log" 2>&1 \
    || { echo "   build failed: see $out/$version-build.log"; continue; }
  tail -n 1 "$out/$version-build.log"
  for suite in integration contract; do
    echo "== $version: tests/$suite $(date -u +%H:%M:%S)"
    ASCHED_KUBE_VERSION=$version ASCHED_BACKENDS=kube-apiserver $python -m pytest -q \
      -p no:cacheprovider "tests/$suite" > "$out/$version-$suite.log" 2>&1 || true
    tail -n 1 "$out/$version-$suite.log"
  done
done
