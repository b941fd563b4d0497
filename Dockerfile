# The service's image: the same code and command as `npm start`, configured by the environment
# (docs/deployment.md#configuration). Build: docker build -t acds .
FROM node:20-bookworm-slim
WORKDIR /app
# better-sqlite3 compiles from source on Node 20.
RUN apt-get update && apt-get install -y --no-install-recommends python3 make g++ && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json .npmrc ./
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The console is built from its sources and the client's.
COPY client ./client
COPY console ./console
# Compiled with the dev dependencies (TypeScript), which are then removed.
RUN npm ci --no-audit --no-fund && npm run build && npm prune --omit=dev
COPY seed ./seed
ENV HOST=0.0.0.0 PORT=3000 DATA_DIR=/data
RUN mkdir /data && chown node:node /data
VOLUME /data
EXPOSE 3000
USER node
# node runs as PID 1 and gets SIGTERM itself (no npm in between): it finishes requests and exits 0.
CMD ["node", "--initial-old-space-size=96", "--single-threaded-gc", "dist/cli.js", "serve"]
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
