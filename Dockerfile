# syntax=docker/dockerfile:1
# The rewind image: one image runs any of `api`, `worker`, `quarantine-service`, `projector`, `migrate` and
# the other `rewind` subcommands. It is built once per Node runtime, because each determinism
# epoch is replayed by one runtime (docs/operations.md, "Images"):
#
#   docker build --build-arg NODE_VERSION=24.22.3 -t rewind:0.1.0-node24 .
#   docker build --build-arg NODE_VERSION=26.12.1 -t rewind:0.1.0-node26 .
#   docker build --build-arg NODE_VERSION=20.20.2 -t rewind:0.1.0-node20 .   # epochs 1 and 2
#
# Node 20's isolated-vm is compiled in the build stage; the final stage has no compiler.
ARG NODE_VERSION=24.22.3

FROM node:${NODE_VERSION}-bookworm-slim AS build
# Only Node 20 compiles anything (isolated-vm 5); the toolchain never reaches the final stage.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY . .
RUN npm ci --no-audit --no-fund \
 && npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf .turbo node_modules/.cache

FROM node:${NODE_VERSION}-bookworm-slim
# tini is PID 1: it forwards SIGTERM to rewind (which drains and hands its runs back) and reaps
# the sandbox processes a worker starts.
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    TZ=UTC \
    REWIND_HOST=0.0.0.0 \
    REWIND_CACHE_DIR=""
WORKDIR /app
# Owned by root and read-only to the process: the chart also mounts the root filesystem read-only.
COPY --from=build /app /app
RUN ln -s /app/libs/cli/bin/rewind.mjs /usr/local/bin/rewind
USER 10001:10001
EXPOSE 7420 9464
ENTRYPOINT ["/usr/bin/tini", "--", "rewind"]
CMD ["api", "--port", "7420"]
