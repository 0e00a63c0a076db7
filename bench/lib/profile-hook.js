'use strict';
// Preloaded (node --require) into the API and worker processes when the benchmark runs with --profile. Over the IPC
// channel the benchmark opens, { benchProfile: 'start' } starts the V8 CPU profiler and { benchProfile: 'stop', file }
// stops it, writes the profile to `file` and answers { benchProfile: 'written', file } (or 'failed').
// Profiling one load pass this way keeps start-up out of the profile and needs no clean exit of the process. IPC, not
// a signal: the Temporal worker treats SIGUSR2 as a shutdown request.

const fs = require('node:fs');
const inspector = require('node:inspector');

if (typeof process.send === 'function') {
  const session = new inspector.Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params || {}, (err, res) => (err ? reject(err) : resolve(res))),
    );
  const answer = (msg) => {
    if (process.connected) process.send(msg);
  };
  process.on('message', (msg) => {
    if (!msg || typeof msg !== 'object') return;
    if (msg.benchProfile === 'start') {
      post('Profiler.enable')
        .then(() => post('Profiler.setSamplingInterval', { interval: 1000 }))
        .then(() => post('Profiler.start'))
        .then(() => answer({ benchProfile: 'started' }))
        .catch((e) => answer({ benchProfile: 'failed', error: String(e && e.message ? e.message : e) }));
    } else if (msg.benchProfile === 'stop') {
      post('Profiler.stop')
        .then(({ profile }) => {
          // Written under a temporary name and renamed, so the benchmark never reads half a file.
          fs.writeFileSync(`${msg.file}.tmp`, JSON.stringify(profile));
          fs.renameSync(`${msg.file}.tmp`, msg.file);
          answer({ benchProfile: 'written', file: msg.file });
        })
        .catch((e) => answer({ benchProfile: 'failed', error: String(e && e.message ? e.message : e) }));
    }
  });
  // The channel must not keep a process alive that would otherwise exit.
  if (process.channel) process.channel.unref();
}
