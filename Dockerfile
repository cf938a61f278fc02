# syntax=docker/dockerfile:1
# The petstore image: `docker build -t petstore .` (docs/operations.md#container-image).
# Build stage: the whole toolchain, then the release step CI tests (npm run release, scripts/release.js).
# Runtime stage: Node and the release only: no compiler, no dev dependency, no extra package.
# The base, pinned by tag and, once recorded, by digest: set NODE_IMAGE_DIGEST to the tag's digest
# (`docker buildx imagetools inspect node:24.21.0-bookworm-slim`, sha256:…) here or with --build-arg;
# empty, the tag alone is pinned (docs/operations.md#container-image says why it is empty here).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim
ARG NODE_IMAGE_DIGEST=

FROM ${NODE_IMAGE}${NODE_IMAGE_DIGEST:+@}${NODE_IMAGE_DIGEST} AS build
# better-sqlite3 compiles itself with node-gyp where no prebuilt binary fits: Python, make and a C++ compiler
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# the manifests, then the dependencies: a change to the sources alone reuses this layer. --ignore-scripts,
# because the project's own `prepare` builds sources not copied yet; npm rebuild then runs the
# dependencies' install scripts (better-sqlite3's binary, esbuild's), never the project's
COPY package.json package-lock.json ./
COPY clients/typescript/package.json clients/typescript/
RUN npm ci --ignore-scripts --no-audit --no-fund && npm rebuild
COPY . .
RUN npm run release -- /release

FROM ${NODE_IMAGE}${NODE_IMAGE_DIGEST:+@}${NODE_IMAGE_DIGEST}
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/var/lib/petstore
# owned by root and not writable by the service's user: it writes only to DATA_DIR
COPY --from=build /release /app
RUN mkdir -p /var/lib/petstore && chown node:node /var/lib/petstore && chmod 700 /var/lib/petstore
VOLUME ["/var/lib/petstore"]
WORKDIR /app
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "dist/bin/server.js"]
