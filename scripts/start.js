#!/usr/bin/env node
/*
 * `npm start`: runs the Node-RED that is installed as a devDependency, on
 * http://127.0.0.1:1880, with this pack installed and every example flow
 * deployed, each on its own tab. The examples use the memory store; with
 * REDIS_URL set they use Redis through one dedup-redis connection.
 *
 * Node-RED's user directory is .node-red-dev/ in the repository. Its flow
 * file is written afresh from examples/ on every start, and the dedup nodes'
 * saved state removed, so export anything you build there that you want to
 * keep.
 */
'use strict';
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const root = path.resolve(__dirname, '..');
const pkg = require(path.join(root, 'package.json'));
const userDir = path.join(root, '.node-red-dev');
const port = Number(process.env.PORT || 1880);

function installPack() {
  // Node-RED finds packs in <userDir>/node_modules; a link keeps it live.
  const link = path.join(userDir, 'node_modules', ...pkg.name.split('/'));
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.rmSync(link, { recursive: true, force: true });
  fs.symlinkSync(root, link, 'dir');
}

function exampleFlows() {
  const dir = path.join(root, 'examples');
  const flows = [];
  let redisId;
  if (process.env.REDIS_URL) {
    redisId = 'dev-redis-connection';
    flows.push({ id: redisId, type: 'dedup-redis', name: 'REDIS_URL', mode: 'standalone', url: '${REDIS_URL}', keyPrefix: 'dedup-example:' });
  }
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
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
    editorTheme: { tours: false },
    logging: { console: { level: 'info', metrics: false, audit: false } }
};
`;
  fs.writeFileSync(path.join(userDir, 'settings.js'), settings);
}

fs.mkdirSync(userDir, { recursive: true });
// The examples start afresh, so their saved dedup state (which a real
// install keeps across restarts) goes with the old flow file.
fs.rmSync(path.join(userDir, 'dedup-state'), { recursive: true, force: true });
installPack();
writeSettings();
const flows = exampleFlows();
fs.writeFileSync(path.join(userDir, 'flows.json'), JSON.stringify(flows, null, 2));
console.log(`Deployed ${flows.filter((n) => n.type === 'tab').length} example flow(s) with the ${process.env.REDIS_URL ? 'Redis' : 'memory'} store.`);
console.log(`Open http://127.0.0.1:${port}/ (Ctrl-C stops Node-RED).`);

const red = spawn(process.execPath, [require.resolve('node-red/red.js'), '--userDir', userDir, '--settings', path.join(userDir, 'settings.js')], {
  stdio: 'inherit',
  cwd: userDir,
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => red.kill(signal));
red.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
