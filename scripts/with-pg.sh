#!/usr/bin/env bash
# Runs a command with a throwaway PostgreSQL cluster (scripts/pg-test-cluster.sh) and
# JR2_TEST_PG_URL set to it, so the PostgreSQL suites run:  bash scripts/with-pg.sh pnpm test
set -euo pipefail
dir=$(mktemp -d /tmp/jr2-pg.XXXXXX)
trap 'bash "$(dirname "$0")/pg-test-cluster.sh" stop "$dir"' EXIT
JR2_TEST_PG_URL=$(bash "$(dirname "$0")/pg-test-cluster.sh" start "$dir")
export JR2_TEST_PG_URL
echo "with-pg: a throwaway cluster on ${JR2_TEST_PG_URL##*@}" >&2
"$@"
