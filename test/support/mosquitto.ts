/**
 * A throwaway mosquitto 2 broker on loopback for the system test: a config
 * file the test writes (persistence on, in the broker's own temporary
 * directory), a port of the test's choosing, and a restart that keeps the
 * port and the persistence file, as an operator's `systemctl restart` does.
 */
import { spawn, spawnSync, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { connect } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';
import { freePort, HOST, onProcessEnd } from './redis-server';

const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;

export function mosquittoBinary(): string {
  return process.env.MOSQUITTO_BIN ?? (spawnSync('mosquitto', ['-h'], { stdio: 'ignore' }).error === undefined ? 'mosquitto' : '/usr/sbin/mosquitto');
}

export function mosquittoAvailable(): boolean {
  const probe = spawnSync(mosquittoBinary(), ['-h'], { encoding: 'utf8' });
  return probe.error === undefined && /mosquitto version 2\./.test(`${probe.stdout}${probe.stderr}`);
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, HOST);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

export class Mosquitto {
  private child: ChildProcess | undefined;
  private output = '';
  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  get url(): string {
    return `mqtt://${HOST}:${this.port}`;
  }

  /** The config file's path: it names this broker's process in `ps`. */
  get configFile(): string {
    return join(this.dir, 'mosquitto.conf');
  }

  log(): string {
    return this.output;
  }

  static async start(): Promise<Mosquitto> {
    const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-mosquitto-'));
    const broker = new Mosquitto(await freePort(), dir);
    onProcessEnd(() => {
      broker.child?.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    writeFileSync(
      join(dir, 'mosquitto.conf'),
      [
        `listener ${broker.port} ${HOST}`,
        'allow_anonymous true',
        // Sessions, subscriptions and queued QoS 1 messages outlive a restart.
        'persistence true',
        `persistence_location ${dir}/`,
        'autosave_interval 1',
        // A member of a shared subscription that is away (a Node-RED being
        // restarted) gets its share queued, not thrown away at 1,000.
        'max_queued_messages 0',
        'max_inflight_messages 100',
        'set_tcp_nodelay true',
        'log_dest stdout',
        'log_type error',
        'log_type warning',
        'log_type notice',
        '',
      ].join('\n'),
    );
    await broker.run();
    return broker;
  }

  private async run(): Promise<void> {
    const child = spawn(mosquittoBinary(), ['-c', join(this.dir, 'mosquitto.conf')], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-20_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`mosquitto exited before listening:\n${this.output}`);
      if (await listening(this.port)) return;
      if (Date.now() > deadline) throw new Error(`mosquitto did not listen on ${this.port} within ${READY_TIMEOUT_MS} ms:\n${this.output}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  private async halt(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
  }

  /** SIGTERM (mosquitto writes its persistence file), then the same config on the same port. */
  async restart(): Promise<void> {
    await this.halt('SIGTERM');
    await this.run();
  }

  async stop(): Promise<void> {
    await this.halt('SIGTERM');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
