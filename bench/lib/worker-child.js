'use strict';
// A benchmark worker as a supervised child process, its output in a log file, ready once the log shows that it polls.
// Shared by the no-op baseline worker and the delivery-model comparison worker.
const fs = require('node:fs');
const services = require('../../scripts/lib/services');
const { sleep } = require('./loops');

/**
 * { name, script, env, logFile, readyPattern, readyTimeoutMs } → { pid(), ready(), crashed(), stop() }.
 * ready() fails at once when the child exits, and after readyTimeoutMs without the pattern in its log.
 */
function startWorkerChild({ name, script, env, logFile, readyPattern, readyTimeoutMs }) {
  const sup = services.createSupervisor();
  const fd = fs.openSync(logFile, 'a');
  let managed;
  try {
    managed = sup.spawn(name, process.execPath, [script], { cwd: services.REPO_ROOT, env, stdio: ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
  const lastLines = () => fs.readFileSync(logFile, 'utf8').slice(-2000);
  return {
    pid: () => managed.child.pid,
    async ready() {
      const deadline = Date.now() + readyTimeoutMs;
      while (!readyPattern.test(fs.readFileSync(logFile, 'utf8'))) {
        if (managed.exited) throw new Error(`${name} exited: ${lastLines()}`);
        if (Date.now() > deadline) throw new Error(`${name} did not start within ${readyTimeoutMs / 1000} s`);
        await sleep(200);
      }
    },
    crashed: () => (managed.exited ? `${name} exited; last lines of ${logFile}:\n${lastLines()}` : undefined),
    async stop() {
      await sup.stopChild(managed, 10_000);
      sup.close();
    },
  };
}

module.exports = { startWorkerChild };
