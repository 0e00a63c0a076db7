# One image for both processes of the gateway; the command picks the role (API or worker).
# The build stage runs scripts/image-tree.js, the same script the image test runs: compiled sources, production
# dependencies, the rules manifest and the official rule packs fetched from Maven Central, verified against their
# pinned sha256 and compiled. The image validates on its own; the processes refuse to start when it cannot
# (`node dist/src/main/admin.js self-check` says why).
FROM node:20.20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends maven openjdk-17-jdk-headless libxml2-utils ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
COPY transforms ./transforms
COPY scripts ./scripts
RUN node scripts/image-tree.js /app

FROM node:20.20-bookworm-slim
# xmllint: the alternative XSD engine (VALIDATION_XSD_ENGINE=xmllint); libxml2-wasm in process is the default.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libxml2-utils \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
# The worker starts from the prebuilt bundle instead of bundling at start; the rule packs are part of the image.
ENV TEMPORAL_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
ENV RULES_CACHE_DIR=/app/rules
WORKDIR /app
COPY --from=build /app /app
USER node
EXPOSE 8080
CMD ["node", "dist/src/main/api.js"]
