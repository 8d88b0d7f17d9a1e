# syntax=docker/dockerfile:1
# The bot's image: compiled JavaScript on Node 24 with production dependencies only (no tsx, esbuild
# or TypeScript), run as a numeric non-root user, writing nothing outside /tmp — so it starts under
# the chart's security context (readOnlyRootFilesystem, runAsNonRoot, no capabilities).
# test/deploy/image.test.ts performs these same steps without Docker and starts the result.
ARG NODE_IMAGE=node:24-bookworm-slim

# 1. Compile: every dependency, then `npm run build` (tsc to dist/, Lua scripts copied).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
# src/main.ts names the local sandbox's module (test/sim) for `npm start` from a checkout, so it is
# compiled here; it is not copied into the image, where its import fails and main says what to set.
COPY test/sim ./test/sim
RUN npm run build

# 2. Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error

# 3. The image: node, production node_modules, dist/src and dist/commands. npm and corepack are
# removed: nothing runs them at run time, and they are the image's largest source of CVE reports.
FROM ${NODE_IMAGE}
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
ENV NODE_ENV=production
# /healthz, /readyz and /metrics (src/ops); the chart's probes and ServiceMonitor use this port.
ENV UNSTUCK_OPS_PORT=9090
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist/src ./dist/src
COPY --from=build /app/dist/commands ./dist/commands
COPY package.json ./
# Numeric (the base image's `node` user), so the kubelet can verify runAsNonRoot.
USER 1000:1000
# 3000: Slack (HTTP mode) and /healthz; 9090: /readyz and /metrics.
EXPOSE 3000 9090
CMD ["node", "--enable-source-maps", "dist/src/main.js"]
