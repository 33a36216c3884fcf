# Fuel Price Gateway image: `docker build -t fuel-gateway .`
# Runs `node --no-memory-reducer dist/main.js serve` directly (not `npm start`, whose prestart would rebuild).
# Configure it with environment variables at run time: PORT, HOST, ADMIN_PORT, ADMIN_HOST,
# ADMIN_TOKEN, REDIS_URL, LOG_LEVEL, UPSTREAM_URL, UPSTREAM_API_KEY, FUEL_GATEWAY_CONFIG.
# Nothing secret is baked in. Node 22 LTS: Node 20 reached end of life in April 2026.

# --- build: all dependencies, compile TypeScript -------------------------------------------------
FROM node:22-slim AS build
WORKDIR /app
# Manifests first, so the dependency layer is reused until they change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build

# --- production dependencies only ----------------------------------------------------------------
FROM node:22-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# --- runtime: production node_modules, compiled code, config and price data ----------------------
FROM node:22-slim
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only for the `node` user: with Redis the gateway writes nothing to disk.
COPY package.json ./
COPY --from=deps /app/node_modules ./node_modules
COPY config ./config
COPY data ./data
COPY public ./public
COPY --from=build /app/dist ./dist
# `fuel-gateway accounts …` for operators: `docker compose exec gateway fuel-gateway …`.
RUN chmod 755 dist/main.js && ln -s /app/dist/main.js /usr/local/bin/fuel-gateway
USER node
# 8080 public API, 8081 admin API (the admin listener only binds a non-loopback ADMIN_HOST when
# ADMIN_TOKEN is set).
EXPOSE 8080 8081
# Liveness over the public port with node itself (slim has no curl). Assumes HOST is unset (::,
# every interface, IPv4 included), 0.0.0.0 or loopback.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (the gateway drains and exits 0).
# --no-memory-reducer: see docs/performance.md (a gateway idle for a minute served 25% slower after).
CMD ["node", "--no-memory-reducer", "dist/main.js", "serve"]
