# syntax=docker/dockerfile:1
# The petstore image: `docker build -t petstore .` (docs/operations.md#container-image).
# Build stage: the whole toolchain, then the release step CI tests (npm run release, scripts/release.js).
# Runtime stage: Node and the release only: no compiler, no dev dependency, no extra package.
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund && npm run release -- /release

FROM ${NODE_IMAGE}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/petstore
# owned by root and not writable by the service's user: it writes only to DATA_DIR
COPY --from=build /release /app
RUN mkdir -p /var/lib/petstore && chown node:node /var/lib/petstore
VOLUME ["/var/lib/petstore"]
WORKDIR /app
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/bin/server.js"]
