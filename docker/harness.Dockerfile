# The Harness image (SPEC §7, §11): the Harness plus what its Working tools call — bash,
# coreutils, ripgrep, git, and an `fd` that pi's find tool accepts (ADR-0102) — and bubblewrap,
# which runs every Working tool in its run's own sandbox (issue 26, ADR-0170; util-linux's
# prlimit, Essential in Debian, sets its limits). The Harness runs as uid 10001, so the sandbox
# does too; compose gives the container what bwrap needs (ADR-0172).
#
# Built by docker/build-images.sh, which stages the context: app/harness is a
# `pnpm deploy --prod` output (dist + production node_modules), fd is docker/fd-compat.sh.
# BASE_IMAGE: the official Node 22 slim image by default; jr2-base:bookworm-node22 offline.
ARG BASE_IMAGE=node:22-bookworm-slim

# --- build: compile better-sqlite3 (native; the Harness's durable state, ADR-0175) against this
# image's Node, as the Orchestrator image does (ADR-0100): pnpm deploy ran with --ignore-scripts.
FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY app /app
# Headers ship under /usr/local/include/node in both bases, so node-gyp needs no download.
RUN set -eu; \
    if [ -d /usr/local/include/node ]; then export npm_config_nodedir=/usr/local; fi; \
    cd "$(readlink -f /app/harness/node_modules/better-sqlite3)"; \
    node /usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild --release --jobs=max; \
    cp build/Release/better_sqlite3.node /tmp/; \
    rm -rf build deps src; \
    mkdir -p build/Release && mv /tmp/better_sqlite3.node build/Release/; \
    cd /app/harness && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

# --- runtime ------------------------------------------------------------------------------
FROM ${BASE_IMAGE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      bash coreutils findutils grep sed ca-certificates git ripgrep fd-find bubblewrap util-linux \
 && rm -rf /var/lib/apt/lists/*
COPY fd /usr/local/bin/fd
RUN chmod 755 /usr/local/bin/fd \
 && useradd --uid 10001 --user-group --create-home --home-dir /home/jr2 --shell /bin/bash jr2 \
 && mkdir -p /work /var/lib/jr2-harness && chown 10001:10001 /work /var/lib/jr2-harness \
 && fd --glob --color=never --hidden --no-require-git --max-results 1 -- 'passwd' /etc >/dev/null \
 && rg --version >/dev/null && git --version >/dev/null && bwrap --version >/dev/null && prlimit --version >/dev/null
COPY --from=build /app /app
RUN printf '#!/bin/sh\nexec node /app/harness/dist/main.js "$@"\n' >/usr/local/bin/jr2-harness \
 && chmod 755 /usr/local/bin/jr2-harness
ENV NODE_ENV=production \
    JR2_HARNESS_PORT=7401 \
    SHELL=/bin/bash
USER 10001:10001
WORKDIR /work
VOLUME ["/work", "/var/lib/jr2-harness"]
EXPOSE 7401
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node","-e","fetch('http://127.0.0.1:'+(process.env.JR2_HARNESS_PORT||7401)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "/app/harness/dist/main.js"]
