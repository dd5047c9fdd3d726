#!/usr/bin/env node
/*
 * `npm start`: runs the Node-RED that is installed as a devDependency, on
 * http://127.0.0.1:1880 (or the port in PORT), with this pack installed and every example flow
 * deployed, each on its own tab, except the ones that need servers of their
 * own (NEEDS_SERVERS: mqtt-scale-out wants a broker, Redis and PostgreSQL;
 * it is listed under Import > Examples). The examples use the memory store; with
 * REDIS_URL set they use Redis through one dedup-redis connection.
 *
 * Node-RED's user directory is .node-red-dev/ in the repository (or
 * DEDUP_START_USER_DIR). Its flow file is written afresh from examples/ on
 * every start, and the dedup nodes' saved state removed, so export anything
 * you build there that you want to keep. With REDIS_URL, the examples' keys
 * in Redis (and only theirs: those under EXAMPLE_PREFIX) are removed too, so
 * the examples start afresh with either store.
 *
 * Stopping: SIGINT, SIGTERM and SIGHUP are passed on to Node-RED, which
 * stops its flows and exits; this process exits with it. `npm start` runs
 * this script through a shell that a signal to npm kills without passing
 * the signal on, so this process also stops Node-RED when the process that
 * started it goes away.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const root = path.resolve(__dirname, '..');
const pkg = require(path.join(root, 'package.json'));
const userDir = path.resolve(process.env.DEDUP_START_USER_DIR || path.join(root, '.node-red-dev'));
const port = Number(process.env.PORT || 1880);
/** The key prefix of the examples' dedup-redis connection: theirs alone, so clearing it at start touches nothing else. */
const EXAMPLE_PREFIX = 'dedup-example:';
const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'];
/** The process that started this one (npm's shell under `npm start`), and its parent (npm), taken before anything can kill them. */
const parent = process.ppid;
const grandparent = parentOf(parent);

/** The parent of a process, from /proc (Linux); undefined where there is no /proc or the process is gone. */
function parentOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "<pid> (<command>) <state> <ppid> ...": the command may hold spaces and parentheses.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

function installPack() {
  // Node-RED finds packs in <userDir>/node_modules; a link keeps it live.
  const link = path.join(userDir, 'node_modules', ...pkg.name.split('/'));
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(root, link, 'dir');
  // Declared in the user directory's package.json too: when a flow's function
  // node needs a module Node-RED does not know, it runs \`npm install\` there,
  // and npm removes from node_modules whatever package.json does not list.
  const dependencies = { [pkg.name]: `file:${root}` };
  // The scale-out example's function node loads pg: given from this checkout
  // (a devDependency) when it is here, so importing that example installs nothing.
  const pg = path.join(root, 'node_modules', 'pg');
  if (fs.existsSync(path.join(pg, 'package.json'))) {
    const pgLink = path.join(userDir, 'node_modules', 'pg');
    fs.rmSync(pgLink, { recursive: true, force: true });
    fs.symlinkSync(pg, pgLink, 'dir');
    dependencies.pg = `file:${pg}`;
  }
  fs.writeFileSync(path.join(userDir, 'package.json'), JSON.stringify({ name: 'node-red-dedup-dev', private: true, dependencies }, null, 2));
}

/** Examples that cannot run without a broker, Redis and a database: imported by hand, never deployed here. */
const NEEDS_SERVERS = new Set(['mqtt-scale-out.json']);

function exampleFlows() {
  const dir = path.join(root, 'examples');
  const flows = [];
  let redisId;
  if (process.env.REDIS_URL) {
    redisId = 'dev-redis-connection';
    flows.push({ id: redisId, type: 'dedup-redis', name: 'REDIS_URL', mode: 'standalone', url: '${REDIS_URL}', keyPrefix: EXAMPLE_PREFIX });
  }
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json') && !NEEDS_SERVERS.has(f)).sort()) {
    const tabId = `tab-${path.basename(file, '.json')}`;
    flows.push({ id: tabId, type: 'tab', label: path.basename(file, '.json') });
    for (const node of JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))) {
      const placed = { ...node, z: tabId };
      if (redisId && (node.type === 'sliding-window-dedup' || node.type === 'sensor-reconnect-dedup') && node.store !== 'redis') {
        Object.assign(placed, { store: 'redis', redis: redisId });
      }
      flows.push(placed);
    }
  }
  return flows;
}

function writeSettings() {
  const settings = `module.exports = {
    uiHost: '127.0.0.1',
    uiPort: ${port},
    flowFile: 'flows.json',
    credentialSecret: false,
    // Node-RED 4 asks on the editor's first opening whether to check for
    // updates (its telemetry); answered here, as the tours are turned off,
    // so the examples are what the editor shows first.
    telemetry: { enabled: false, updateNotification: false },
    editorTheme: { tours: false },
    logging: { console: { level: 'info', metrics: false, audit: false } }
};
`;
  fs.writeFileSync(path.join(userDir, 'settings.js'), settings);
}

/**
 * Removes the examples' keys from the Redis at REDIS_URL: every key under
 * EXAMPLE_PREFIX, found with SCAN and removed with UNLINK, so that the
 * examples show on every start what their comments say (lorawan-uplinks
 * 8 / 5 / 3, not 8 / 0 / 8 from the last run's keys). Never FLUSHDB: the
 * server may hold other data. A fresh prefix per start would leave each
 * run's keys behind, and the epoch keys (which have no TTL) for good.
 * Returns how many keys were removed; a Redis that cannot be reached is
 * reported and the examples start anyway (their status will say why).
 */
async function clearExampleKeys(url) {
  const Redis = require('ioredis');
  const client = new Redis(url, { lazyConnect: true, connectTimeout: 3000, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  client.on('error', () => undefined);
  const pattern = EXAMPLE_PREFIX.replace(/[*?[\]\\]/g, '\\$&') + '*';
  let removed = 0;
  try {
    await client.connect();
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) removed += await client.unlink(...keys);
    } while (cursor !== '0');
    return removed;
  } finally {
    client.disconnect();
  }
}

async function main() {
  fs.mkdirSync(userDir, { recursive: true });
  // The examples start afresh, so their saved dedup state (which a real
  // install keeps across restarts) goes with the old flow file.
  fs.rmSync(path.join(userDir, 'dedup-state'), { recursive: true, force: true });
  if (process.env.REDIS_URL) {
    try {
      const removed = await clearExampleKeys(process.env.REDIS_URL);
      console.log(`Removed the examples' ${removed} key(s) under ${EXAMPLE_PREFIX} from REDIS_URL's Redis.`);
    } catch (error) {
      console.warn(`Could not remove the examples' keys under ${EXAMPLE_PREFIX} from REDIS_URL's Redis (${error.message}): they start from what Redis holds.`);
    }
  }
  installPack();
  writeSettings();
  const flows = exampleFlows();
  fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flows, null, 2));
  console.log(`Deployed ${flows.filter((n) => n.type === 'tab').length} example flow(s) with the ${process.env.REDIS_URL ? 'Redis' : 'memory'} store.`);
  console.log(`Open http://127.0.0.1:${port}/ (Ctrl-C stops Node-RED).`);
  runNodeRed();
}

function runNodeRed() {
  const red = spawn(process.execPath, [require.resolve('node-red/red.js'), '--userDir', userDir, '--settings', path.join(userDir, 'settings.js')], {
    stdio: 'inherit',
    cwd: userDir,
  });
  let stopping = false;
  const stop = (signal) => {
    stopping = true;
    if (red.exitCode === null && red.signalCode === null) red.kill(signal);
  };
  for (const signal of SIGNALS) process.on(signal, () => stop(signal));
  // `npm start` is npm -> sh -c "npm run build && node scripts/start.js" ->
  // this process. npm passes SIGTERM and SIGINT to the shell only, which
  // dies of them, and this process is handed to another parent; npm killed
  // outright (SIGKILL, SIGHUP) leaves the shell waiting with a new parent of
  // its own. Either change, checked 5 times a second, means "stop".
  const watch = setInterval(() => {
    if (stopping) return;
    if (process.ppid !== parent || (grandparent !== undefined && parentOf(parent) !== grandparent)) stop('SIGTERM');
  }, 200);
  red.on('exit', (code, signal) => {
    clearInterval(watch);
    process.exit(code ?? (signal ? 1 : 0));
  });
}

// Until Node-RED runs, a signal ends this process as it would by default.
main().catch((error) => {
  console.error(error);
  process.exit(1);
});
