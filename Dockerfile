# Fuel Price Gateway image: `docker build -t fuel-gateway .`
# Runs `node dist/main.js serve` directly (not `npm start`, whose prestart would rebuild).
# Configure it with environment variables at run time: PORT, HOST, ADMIN_PORT, ADMIN_HOST,
# ADMIN_TOKEN, REDIS_URL, LOG_LEVEL, FUEL_GATEWAY_CONFIG. Nothing secret is baked in.

# --- build: all dependencies, compile TypeScript, then drop dev dependencies ---------------------
FROM node:20-slim AS build
WORKDIR /app
# Manifests first, so the dependency layer is reused until they change.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# --- runtime: production node_modules, compiled code, config and price data ----------------------
FROM node:20-slim
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only for the `node` user: the gateway writes nothing to disk.
COPY package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY config ./config
COPY data ./data
COPY --from=build /app/dist ./dist
USER node
# 8080 public API, 8081 admin API (the admin listener only binds a non-loopback ADMIN_HOST when
# ADMIN_TOKEN is set).
EXPOSE 8080 8081
# Liveness over the public port with node itself (slim has no curl). Assumes HOST is 0.0.0.0
# (the default) or loopback.
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Exec form: node is PID 1 and receives SIGTERM itself (the gateway drains and exits 0).
CMD ["node", "dist/main.js", "serve"]
