#!/usr/bin/env bash
# Build both images: jr2-orchestrator (also runs model-sim) and jr2-harness (SPEC §11).
#
#   pnpm run setup                      # first: install + build every package's dist/
#   docker/build-images.sh              # on the official node:22-bookworm-slim base
#   docker/build-images.sh --offline    # no registry: start an engine if none answers, build
#                                       # jr2-base:bookworm-node22 (docker/offline-base.sh),
#                                       # build both images on it
#
# Env: JR2_IMAGE_TAG (default local), BASE_IMAGE (overrides either base),
#      JR2_IMAGE_CONTEXT (staging folder; default a fresh temp dir, removed afterwards).
# Builds use the legacy builder with --network host: RUN apt-get reaches Debian's mirror
# through the host, and no bridge network is needed (ADR-0100).
# Prints one line per image: name, seconds, size.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
offline=false
for arg in "$@"; do
  case "$arg" in
    --offline) offline=true ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument: $arg (usage: $0 [--offline])" >&2; exit 2 ;;
  esac
done
tag=${JR2_IMAGE_TAG:-local}
export DOCKER_BUILDKIT=${DOCKER_BUILDKIT:-0}
log() { printf '[images %4ss] %s\n' "$SECONDS" "$*" >&2; }

# The images carry the built binaries; refuse early and say how to make them.
missing=()
for f in packages/wire/dist/index.js packages/orchestrator/dist/cli/main.js \
  packages/model-sim/dist/main.js packages/harness/dist/main.js packages/console/dist/index.html; do
  [ -f "$root/$f" ] || missing+=("$f")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "error: built binaries missing: ${missing[*]}" >&2
  echo "       run \`pnpm run setup\` (pnpm install --frozen-lockfile && pnpm build) in $root first" >&2
  exit 1
fi
command -v pnpm >/dev/null 2>&1 || { echo "error: pnpm not found (npm i -g pnpm@10)" >&2; exit 1; }

if $offline; then
  "$here/engine.sh" start
  "$here/offline-base.sh"
  base=${BASE_IMAGE:-jr2-base:bookworm-node22}
else
  timeout 10 docker info >/dev/null 2>&1 ||
    { echo "error: no Docker engine answers (use --offline to have one started here)" >&2; exit 1; }
  base=${BASE_IMAGE:-node:22-bookworm-slim}
fi

ctx=${JR2_IMAGE_CONTEXT:-}
if [ -z "$ctx" ]; then
  ctx=$(mktemp -d /tmp/jr2-images.XXXXXX)
  trap 'rm -rf "$ctx"' EXIT
fi
rm -rf "$ctx/orchestrator" "$ctx/harness"
mkdir -p "$ctx/orchestrator/app" "$ctx/orchestrator/workflows" "$ctx/harness/app"

# pnpm deploy: the package's files (dist) + production node_modules, workspace deps inlined.
# --ignore-scripts: better-sqlite3 is compiled inside the image against its own Node.
deploy() {
  (cd "$root" && pnpm --filter "$1" deploy --legacy --prod --prefer-offline --ignore-scripts "$2" >/dev/null)
  # pnpm's bookkeeping names the staging path; dropping it keeps docker's layer cache valid.
  rm -f "$2/node_modules/.modules.yaml" "$2/node_modules/.pnpm/lock.yaml"
}
log "staging production dependencies (pnpm deploy --prod) in $ctx"
deploy @jr2/orchestrator "$ctx/orchestrator/app/orchestrator"
deploy @jr2/model-sim "$ctx/orchestrator/app/model-sim"
deploy @jr2/harness "$ctx/harness/app/harness"
# The example workflows (review, triage) are served by default. Only the modules: their
# node_modules are pnpm symlinks that would dangle in the image, and the Orchestrator's loader
# aliases @jr2/orchestrator, zod and xstate to its own copies anyway (ADR-0103).
if [ -d "$root/examples/workflows" ]; then
  find "$root/examples/workflows" -maxdepth 1 -type f \( -name '*.ts' -o -name '*.js' -o -name '*.mjs' \) \
    -exec cp {} "$ctx/orchestrator/workflows/" \;
fi
cp "$here/fd-compat.sh" "$ctx/harness/fd"

summary=()
build() { # name dockerfile context
  local image="jr2-$1:$tag" started=$SECONDS size
  log "building $image on $base"
  docker build --network host --build-arg "BASE_IMAGE=$base" -f "$2" -t "$image" "$3" >"$ctx/$1.build.log" 2>&1 ||
    { tail -30 "$ctx/$1.build.log" >&2; echo "error: building $image failed" >&2; exit 1; }
  size=$(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}')
  summary+=("$image  $((SECONDS - started)) s  $size")
}
build orchestrator "$here/orchestrator.Dockerfile" "$ctx/orchestrator"
build harness "$here/harness.Dockerfile" "$ctx/harness"
# The legacy builder leaves every replaced build stage as a dangling image (3.1 GB after two
# CI runs); tagged images and the base stay.
reclaimed=$(docker image prune -f 2>/dev/null | sed -n 's/^Total reclaimed space: //p')
log "pruned dangling build stages (${reclaimed:-0B} reclaimed)"

log "done (base $base)"
printf '%s\n' "${summary[@]}"
