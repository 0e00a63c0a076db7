'use strict';
// A webhook receiver on 127.0.0.1 for the benchmarks: records when each delivery id (X-Service-Delivery) arrived and
// answers 204, or, with `hang`, never answers (the connection is held until the sender gives up).
const http = require('node:http');

const HOST = '127.0.0.1';

/** `arrivalWaitMs`: how long `arrival` waits by default for a delivery id not seen yet. */
async function startReceiver({ hang, arrivalWaitMs = 60_000 }) {
  const arrivals = new Map();
  const waiters = new Map();
  const sockets = new Set();
  const requestTimes = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      requests += 1;
      const id = String(req.headers['x-service-delivery'] || '');
      const at = performance.now();
      requestTimes.push(at);
      if (!arrivals.has(id)) arrivals.set(id, at);
      const w = waiters.get(id);
      if (w) {
        waiters.delete(id);
        w(at);
      }
      if (hang) return;
      res.writeHead(204);
      res.end();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise((r) => server.listen(0, HOST, r));
  return {
    url: `http://${HOST}:${server.address().port}/hook`,
    requests: () => requests,
    /** performance.now of each request received in [from, to). */
    requestsBetween: (from, to) => requestTimes.filter((t) => t >= from && t < to),
    openConnections: () => sockets.size,
    /** Closes the connections held now (a hung receiver's), the server keeps listening. */
    dropConnections() {
      for (const s of sockets) s.destroy();
    },
    /** Resolves the arrival time (performance.now) of a delivery id, or undefined after the wait. */
    arrival(id, waitMs = arrivalWaitMs) {
      if (arrivals.has(id)) return Promise.resolve(arrivals.get(id));
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(id);
          resolve(undefined);
        }, waitMs);
        waiters.set(id, (at) => {
          clearTimeout(timer);
          resolve(at);
        });
      });
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

module.exports = { startReceiver };
