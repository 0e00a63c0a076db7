# One image for both processes of the gateway; the command picks the role (API or worker).
FROM node:20.20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY api ./api
COPY workflows ./workflows
COPY activities ./activities
COPY transforms ./transforms
COPY scripts/build-workflow-bundle.js ./scripts/
RUN npx tsc -p tsconfig.build.json && node scripts/build-workflow-bundle.js && npm prune --omit=dev

FROM node:20.20-bookworm-slim
ENV NODE_ENV=production
# The worker starts from the prebuilt bundle instead of bundling at start.
ENV TEMPORAL_WORKFLOW_BUNDLE=/app/dist/workflow-bundle.js
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
USER node
EXPOSE 8080
CMD ["node", "dist/src/main/api.js"]
