# The durable-agent worker. Runs the TypeScript sources through tsx: no build step to drift.
FROM node:20-slim
WORKDIR /app
ENV NODE_ENV=production DURABLE_AGENT_HOME=/data
COPY package.json package-lock.json ./
RUN npm install --omit=dev --no-save --no-audit --no-fund
COPY tsconfig.json ./
COPY src ./src
COPY bin ./bin
VOLUME /data
# SIGTERM from `docker stop` lets the worker drain in-flight activities before it exits.
STOPSIGNAL SIGTERM
CMD ["node", "--require", "tsx/cjs", "src/cli/main.ts", "worker"]
