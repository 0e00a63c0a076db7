import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * README.md's "Code map" must name every top-level folder of the repository and every folder directly under src/,
 * and name no folder that does not exist. Folders are the ones git tracks (a directory walk when git is not there);
 * build output and local state (node_modules, dist, var) are not part of the map.
 */
const ROOT = path.resolve(__dirname, '../../..');
const IGNORED = new Set(['node_modules', 'dist', 'var', '.git']);

/** The folder paths (`api/`, `src/core/`, …) the README's code map block names, one per unindented line. */
function codeMapEntries(readme: string): string[] {
  const heading = readme.search(/^## Code map[ \t]*$/m);
  if (heading < 0) throw new Error('README.md has no "## Code map" section');
  const open = readme.indexOf('```', heading);
  const bodyStart = readme.indexOf('\n', open) + 1;
  const close = readme.indexOf('\n```', bodyStart);
  if (open < 0 || bodyStart <= 0 || close < 0) throw new Error('the code map section has no fenced block');
  return readme
    .slice(bodyStart, close)
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^\s/.test(line))
    .map((line) => line.split(/\s+/)[0] ?? '');
}

function isDirectory(rel: string): boolean {
  const full = path.join(ROOT, rel);
  return existsSync(full) && statSync(full).isDirectory();
}

/** Tracked file paths relative to the root, or null when git cannot list them (no git, not a checkout). */
function trackedFiles(): string[] | null {
  try {
    const out = execFileSync('git', ['ls-files', '-z'], {
      cwd: ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const files = out.split('\0').filter((f) => f !== '');
    return files.length > 0 ? files : null;
  } catch {
    return null;
  }
}

/** Folders directly under `dir` ('' for the root) that hold tracked files and exist in the working tree. */
function foldersUnder(dir: string, tracked: string[] | null): string[] {
  const prefix = dir === '' ? '' : `${dir}/`;
  let names: string[];
  if (tracked) {
    names = tracked
      .filter((f) => f.startsWith(prefix))
      .map((f) => f.slice(prefix.length).split('/'))
      .filter((parts) => parts.length > 1)
      .map((parts) => parts[0] ?? '');
  } else {
    names = readdirSync(path.join(ROOT, dir), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  }
  return [...new Set(names)]
    .filter((name) => name !== '' && !IGNORED.has(name) && isDirectory(prefix + name))
    .map((name) => `${prefix}${name}/`)
    .sort();
}

describe('README code map', () => {
  const entries = codeMapEntries(readFileSync(path.join(ROOT, 'README.md'), 'utf8'));
  const tracked = trackedFiles();

  it('is a list of folder paths', () => {
    expect(entries.length).toBeGreaterThan(10);
    for (const entry of entries) expect(entry).toMatch(/^[^\s/][^\s]*\/$/);
  });

  it('names every top-level folder of the repository', () => {
    const missing = foldersUnder('', tracked).filter((folder) => !entries.includes(folder));
    expect(missing).toEqual([]);
  });

  it('names every folder directly under src/', () => {
    const missing = foldersUnder('src', tracked).filter((folder) => !entries.includes(folder));
    expect(missing).toEqual([]);
  });

  it('names no folder that does not exist', () => {
    const absent = entries.filter((entry) => !isDirectory(entry.replace(/\/$/, '')));
    expect(absent).toEqual([]);
  });

  it('reads a map block the way the checks above expect', () => {
    const readme = [
      '# X',
      '',
      '## Code map',
      '',
      '```text',
      'api/   the edge',
      '              continued',
      'src/core/ pure',
      '```',
      '',
    ].join('\n');
    expect(codeMapEntries(readme)).toEqual(['api/', 'src/core/']);
    expect(() => codeMapEntries('# no map\n')).toThrow('Code map');
  });
});
