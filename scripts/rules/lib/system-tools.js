'use strict';
// Command-line tools the rules need on the machine: xmllint (XSD validation at run time) and Maven (fetching).
// On a fresh Debian machine running as root they are installed with apt-get; anywhere else the error says what to
// install.

const { execFileSync, spawnSync } = require('node:child_process');

const APT_TIMEOUT_MS = 10 * 60_000;

function onPath(bin) {
  const r = spawnSync('sh', ['-c', `command -v ${bin}`], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.trim() !== '' ? r.stdout.trim() : undefined;
}

function canApt() {
  return typeof process.getuid === 'function' && process.getuid() === 0 && onPath('apt-get') !== undefined;
}

let aptUpdated = false;

function aptInstall(pkg, log) {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  if (!aptUpdated) {
    log(`apt-get update (to install ${pkg})`);
    execFileSync('apt-get', ['update', '-qq'], {
      stdio: ['ignore', 'ignore', 'inherit'],
      env,
      timeout: APT_TIMEOUT_MS,
    });
    aptUpdated = true;
  }
  log(`apt-get install ${pkg}`);
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
    timeout: APT_TIMEOUT_MS,
  });
}

/** Path of `bin`, installing Debian package `pkg` when missing and possible. */
function ensureTool(bin, pkg, log) {
  const found = onPath(bin);
  if (found) return found;
  if (!canApt()) {
    throw new Error(`${bin} is not installed; install it (Debian/Ubuntu: apt-get install ${pkg}) and run again`);
  }
  aptInstall(pkg, log);
  const now = onPath(bin);
  if (!now) throw new Error(`${bin} still not found after apt-get install ${pkg}`);
  return now;
}

module.exports = { ensureTool, onPath };
