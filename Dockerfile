# Parley in a container: Node 20 on Debian slim, production dependencies plus tsx (npm start runs the TypeScript
# sources directly), running as the unprivileged `node` user, healthy when /healthz answers.
FROM node:20.19-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# better-sqlite3 downloads a prebuilt binary for this Node and glibc; tsx is the runtime of npm start.
RUN npm ci --omit=dev && npm install --no-save --omit=dev tsx@4.23.15 && npm cache clean --force

FROM node:20.19-bookworm-slim
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 DATABASE_PATH=/data/parley.db
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY adapters ./adapters
COPY db ./db
COPY scripts ./scripts
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--import", "tsx", "src/main.ts"]
