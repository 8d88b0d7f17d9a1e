# syntax=docker/dockerfile:1
FROM node:22-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY src ./src
COPY commands ./commands
USER node
EXPOSE 3000
# tsx runs the TypeScript sources directly (no separate build output to drift from them).
CMD ["node", "--import", "tsx", "src/main.ts"]
