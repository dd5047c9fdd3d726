/**
 * The pack as a user installs it: `npm pack` of the working copy (the files
 * package.json's `files` lets through, nothing else), unpacked into a user
 * directory's node_modules. Its dependencies, and the modules a flow's
 * function nodes use, are linked from this checkout's node_modules rather
 * than fetched: the tests run offline, and `npm install` of a tarball would
 * spend a minute resolving what is already here.
 */
import { execFileSync } from 'child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { dirname, join, resolve } from 'path';
import { onProcessEnd } from './redis-server';

const ROOT = resolve(__dirname, '..', '..');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; dependencies?: Record<string, string> };

let tarball: string | undefined;

/** Packs the working copy once per test process (`nodes/` must be built). */
export function packedTarball(): string {
  if (tarball !== undefined && existsSync(tarball)) return tarball;
  if (!existsSync(join(ROOT, 'nodes', 'sensor-reconnect-dedup.js'))) throw new Error('nodes/ is not built: run `npm run build` first');
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-pack-'));
  onProcessEnd(() => rmSync(dir, { recursive: true, force: true }));
  const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const [packed] = JSON.parse(out) as { filename: string }[];
  if (packed === undefined) throw new Error(`npm pack printed nothing usable:\n${out}`);
  tarball = join(dir, packed.filename);
  return tarball;
}

function link(userDir: string, module: string): void {
  const target = join(ROOT, 'node_modules', ...module.split('/'));
  if (!existsSync(target)) throw new Error(`${module} is not in ${ROOT}/node_modules`);
  const at = join(userDir, 'node_modules', ...module.split('/'));
  if (existsSync(at)) return;
  mkdirSync(dirname(at), { recursive: true });
  symlinkSync(target, at, 'dir');
}

/**
 * Unpacks the pack into `userDir/node_modules/<name>` (replacing whatever is
 * there), links its dependencies, and provides `functionModules` to function
 * nodes (see provideFunctionModules).
 */
export function installPack(userDir: string, functionModules: readonly string[] = []): void {
  const at = join(userDir, 'node_modules', ...manifest.name.split('/'));
  rmSync(at, { recursive: true, force: true });
  mkdirSync(at, { recursive: true });
  execFileSync('tar', ['xzf', packedTarball(), '--strip-components=1', '-C', at]);
  for (const dependency of Object.keys(manifest.dependencies ?? {})) link(userDir, dependency);
  provideFunctionModules(userDir, functionModules);
}

/**
 * Makes `functionModules` loadable by function nodes without Node-RED
 * installing them: linked into node_modules and listed in the user
 * directory's package.json, which is where Node-RED looks for modules it did
 * not install itself. (Left to itself, Node-RED would run `npm install` in
 * the user directory: a fetch from the registry, and a prune of whatever the
 * test linked there.)
 */
export function provideFunctionModules(userDir: string, functionModules: readonly string[]): void {
  const dependencies: Record<string, string> = {};
  for (const module of functionModules) {
    link(userDir, module);
    dependencies[module] = (JSON.parse(readFileSync(join(ROOT, 'node_modules', module, 'package.json'), 'utf8')) as { version: string }).version;
  }
  writeFileSync(join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-project', private: true, dependencies }, null, 2));
}
