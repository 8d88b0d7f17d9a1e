# syntax=docker/dockerfile:1
# The bot's image: the bundled JavaScript (deploy/build.ts) on Node 24 — no node_modules, no tsx,
# esbuild or TypeScript — run as a numeric non-root user, writing nothing outside /tmp, so it starts
# under the chart's security context (readOnlyRootFilesystem, runAsNonRoot, no capabilities).
# test/deploy/image.test.ts performs these same steps without Docker and starts the result.
# Pinned by digest (the multi-platform index of node:24-bookworm-slim when it was chosen): the base
# cannot change under a tag between two builds of one revision. .github/dependabot.yml proposes the
# next digest as a pull request.
ARG NODE_IMAGE=node:24-bookworm-slim@sha256:6f7b03f7c2c8e2e784dcf9295400527b9b1270fd37b7e9a7285cf83b6951452d

# 1. Build: every dependency, then `npm run build` (esbuild bundles src/main.ts and src/cli.ts with
# what they import from node_modules into dist/; the Lua scripts are copied beside their reader).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json ./
COPY deploy/build.ts ./deploy/build.ts
COPY src ./src
COPY commands ./commands
# src/main.ts imports the local sandbox (test/sim) at run time, for `npm start` from a checkout; it
# is built to dist/test here and not copied into the image, where that import fails and main says
# what to set.
COPY test/sim ./test/sim
RUN npm run build

# 2. The image: node, the bundle (entry points in dist/src, shared code in dist/chunks, source maps
# beside them) and package.json (`"type": "module"`). npm and corepack are removed: nothing runs
# them at run time, and they are the image's largest source of CVE reports.
FROM ${NODE_IMAGE}
# tini (Debian's) as PID 1: it passes SIGTERM on to node and reaps what node leaves behind. Node
# itself hears SIGTERM from its first line (src/early-signals.ts); tini makes that hold whatever runs
# as PID 1, and exits with node's own exit code.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
ENV NODE_ENV=production
# The source revision the image is built from (`docker build --build-arg REVISION=$(git rev-parse
# HEAD)`): a label for registries and scanners, and the `revision` of `unstuck_build_info`.
ARG REVISION=unknown
# Where the source is (the repository the release workflow builds from).
ARG SOURCE=https://github.com/example/unstuck
ARG VERSION=0.1.0
ENV UNSTUCK_REVISION=${REVISION}
LABEL org.opencontainers.image.title="unstuck" \
      org.opencontainers.image.description="Slack ChatOps for Kubernetes namespaces stuck in Terminating and their AWS traffic path" \
      org.opencontainers.image.source="${SOURCE}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# glibc malloc: blocks of 32 KiB and more are mapped and unmapped on their own, and freed memory is
# returned at once, instead of being kept in the heap's arenas (module loading and V8's compiler
# free tens of MiB that glibc would otherwise hold). Ready bot with AWS configured 171 → 135 MiB,
# 222 → 187 MiB after 1,000 diagnoses, at the same speed (npm run bench -- memory; bench/rss.ts).
ENV MALLOC_MMAP_THRESHOLD_=32768
ENV MALLOC_TRIM_THRESHOLD_=0
# /healthz, /readyz and /metrics (src/ops); the chart's probes and ServiceMonitor use this port.
ENV UNSTUCK_OPS_PORT=9090
WORKDIR /app
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/chunks ./dist/chunks
COPY package.json LICENSE ./
# The CycloneDX SBOM of the npm packages in the bundle (deploy/build.ts): with no node_modules or
# lockfile in the image, it is what scanners read (Trivy, Grype and Syft find an embedded SBOM).
COPY --from=build /app/dist/sbom.cdx.json ./sbom.cdx.json
# Numeric (the base image's `node` user), so the kubelet can verify runAsNonRoot.
USER 1000:1000
# 3000: Slack (HTTP mode) and /healthz; 9090: /readyz and /metrics.
EXPOSE 3000 9090
# Stack traces name functions (the bundle keeps names); for TypeScript file:line positions set
# NODE_OPTIONS=--enable-source-maps (the maps ship beside the code; Node then holds a parsed map of
# every chunk a stack passes through, ~70 MiB, so it is not on by default).
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/main.js"]
