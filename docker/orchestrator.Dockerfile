# The Orchestrator image (SPEC §11). It also carries model-sim (ADR-0101): compose runs it
# from this image with another command.
#
# Built by docker/build-images.sh, which stages the context: app/orchestrator and
# app/model-sim are `pnpm deploy --prod` outputs (dist + production node_modules). The web
# console (issue 12) comes with them: @jr2/console is a dependency of the Orchestrator holding
# only its built files (node_modules/@jr2/console/dist; no React or other library at run time),
# served under /ui/ (ADR-0451).
# BASE_IMAGE: the official Node 22 slim image by default; jr2-base:bookworm-node22 offline.
ARG BASE_IMAGE=node:22-bookworm-slim

# --- build: compile better-sqlite3 (native) against this image's Node (ADR-0100) ---------
FROM ${BASE_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY app /app
# Headers ship under /usr/local/include/node in both bases, so node-gyp needs no download.
RUN set -eu; \
    if [ -d /usr/local/include/node ]; then export npm_config_nodedir=/usr/local; fi; \
    cd "$(readlink -f /app/orchestrator/node_modules/better-sqlite3)"; \
    node /usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild --release --jobs=max; \
    cp build/Release/better_sqlite3.node /tmp/; \
    rm -rf build deps src; \
    mkdir -p build/Release && mv /tmp/better_sqlite3.node build/Release/; \
    cd /app/orchestrator && node -e "new (require('better-sqlite3'))(':memory:').prepare('select 1').get()"

# --- runtime ------------------------------------------------------------------------------
FROM ${BASE_IMAGE}
RUN useradd --uid 10001 --user-group --create-home --home-dir /home/jr2 --shell /bin/bash jr2 \
 && mkdir -p /data && chown 10001:10001 /data
COPY --from=build /app /app
# Workflows live inside the orchestrator package so their imports (@jr2/orchestrator, zod)
# resolve against its node_modules; mount your own over this folder.
COPY workflows /app/orchestrator/workflows
RUN printf '#!/bin/sh\nexec node /app/orchestrator/dist/cli/main.js "$@"\n' >/usr/local/bin/jr2 \
 && printf '#!/bin/sh\nexec node /app/model-sim/dist/main.js "$@"\n' >/usr/local/bin/model-sim \
 && chmod 755 /usr/local/bin/jr2 /usr/local/bin/model-sim
ENV NODE_ENV=production \
    JR2_HOST=0.0.0.0 \
    JR2_PORT=7400 \
    JR2_DATA_DIR=/data \
    JR2_WORKFLOWS_DIR=/app/orchestrator/workflows
USER 10001:10001
WORKDIR /home/jr2
VOLUME ["/data"]
EXPOSE 7400
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node","-e","fetch('http://127.0.0.1:'+(process.env.JR2_PORT||7400)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "/app/orchestrator/dist/cli/main.js", "serve"]
