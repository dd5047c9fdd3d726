/**
 * The connection drops after Redis has run a decision script but before its
 * reply reaches Node-RED. ioredis then reconnects and sends the same call
 * again (autoResendUnfulfilledCommands), so the script runs twice. The
 * second run must recognise the first (the per-call token in lua/) and
 * report the ping as admitted ('replayed') and the readings as admitted,
 * not as a late ping or as duplicates of themselves.
 *
 * The cut is made by a loopback TCP proxy between the node and Redis that
 * forwards everything until it is armed, then swallows the first reply to a
 * script call and closes both sides: exactly "right after the server
 * executed it". Redis itself is checked over a direct connection.
 */
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'events';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'net';
import type Redis from 'ioredis';
import { windowBucketKey } from '../../src/redis/key-names';
import { decodeWindowRecord } from '../../src/stores/redis-window-store';
import { runtimeWithRedis } from '../support/live-stream';
import { collect, loadPackFlow, node, until, type FlowNode, type Msg } from '../support/node-red-helper';
import { adminClient } from '../support/redis-sentinel';
import { ManagedRedis } from '../support/redis-server';

const PREFIX = 'resend:';
const BASE = 1_780_000_000;

/** A man in the middle that can lose one reply. */
class CuttingProxy extends EventEmitter {
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private armed = false;
  connections = 0;
  cuts = 0;

  constructor(private readonly targetPort: number) {
    super();
    this.server = createServer((client) => this.pair(client));
  }

  async listen(): Promise<number> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return (this.server.address() as AddressInfo).port;
  }

  /** The next reply to an EVALSHA/EVAL is dropped and the connection closed. */
  arm(): void {
    this.armed = true;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private pair(client: Socket): void {
    this.connections++;
    const upstream = connect({ host: '127.0.0.1', port: this.targetPort });
    this.sockets.add(client);
    this.sockets.add(upstream);
    let cutNextReply = false;
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      // RESP: a command is an array of bulk strings, the name among them.
      if (this.armed && /\r\n(EVALSHA|EVAL)\r\n/i.test(chunk.toString('latin1'))) {
        this.armed = false;
        cutNextReply = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cutNextReply) {
        // Redis has answered, so it has run the script; the client never hears it.
        this.cuts++;
        end();
        this.emit('cut');
        return;
      }
      client.write(chunk);
    });
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  }
}

function flow(port: number): FlowNode[] {
  return [
    { id: 'rs-tab', type: 'tab' },
    // A generous timeout: the resend comes after ioredis' first reconnect delay.
    { id: 'rs-conn', type: 'dedup-redis', host: '127.0.0.1', port: String(port), keyPrefix: PREFIX, timeoutMs: '4000' },
    { id: 'rs-win', type: 'sliding-window-dedup', z: 'rs-tab', store: 'redis', redis: 'rs-conn', onStoreError: 'error', wires: [['rs-out'], ['rs-out']] },
    { id: 'rs-sensor', type: 'sensor-reconnect-dedup', z: 'rs-tab', store: 'redis', redis: 'rs-conn', onStoreError: 'error', wires: [['rs-out'], ['rs-out']] },
    { id: 'rs-out', type: 'helper', z: 'rs-tab' },
    { id: 'rs-catch', type: 'catch', z: 'rs-tab', scope: null, uncaught: false, wires: [['rs-caught']] },
    { id: 'rs-caught', type: 'helper', z: 'rs-tab' },
  ];
}

async function scriptCalls(admin: Redis): Promise<number> {
  const stats = await admin.info('commandstats');
  let calls = 0;
  for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1]);
  return calls;
}

describe('faults: a script call resent after the connection dropped', function () {
  this.timeout(30_000);
  const servers = runtimeWithRedis('the resent-command test', async () => {
    const redis = await ManagedRedis.start();
    const proxy = new CuttingProxy(redis.port);
    const admin = adminClient(redis.port);
    const stop = async (): Promise<void> => {
      admin.disconnect();
      await proxy.close();
      await redis.stop();
    };
    try {
      return { proxy, proxyPort: await proxy.listen(), admin, stop };
    } catch (error) {
      await stop();
      throw error;
    }
  });

  before(() => loadPackFlow(flow(servers().proxyPort), { 'rs-conn': {} }));

  /** Sends one message and waits for its outputs (a burst has two). */
  async function deliver(target: string, payload: unknown, outputs: number): Promise<Msg[]> {
    const out = collect('rs-out');
    const caught = collect('rs-caught');
    node(target).receive({ payload });
    await until(() => out.length >= outputs || caught.length > 0, `${outputs} output(s) of ${target}`, 10_000);
    assert.deepEqual(caught.map((m) => m.error?.message), [], 'no error');
    return out;
  }

  it('reports a ping whose reply was lost as admitted (replayed), not late, and counts it once', async function () {
    const { proxy: p, admin: a } = servers();
    // Scripts cached and connection ready, so the armed call is an EVALSHA.
    await deliver('rs-win', { assetId: 'warm-up', ts: BASE, lat: 52.5, lon: 13.4 }, 1);
    const before = await scriptCalls(a);
    const connectionsBefore = p.connections;

    p.arm();
    const cut = once(p, 'cut');
    const pending = deliver('rs-win', { assetId: 'veh-cut', ts: BASE, lat: 52.5, lon: 13.4 }, 1);
    await cut;
    // The reply is lost, but Redis already wrote the decision.
    const bucket = windowBucketKey(PREFIX, 'veh-cut');
    const written = (await a.hgetBuffer(bucket, 'veh-cut')) as Buffer;
    const record = decodeWindowRecord(written);
    assert.equal(record.accepted, 1);
    assert.equal(record.first, 1, 'the record names the call and its admitted ping');

    const [msg] = await pending;
    assert.equal(msg?.dedup?.decision, 'admitted');
    assert.equal(msg?.dedup?.reason, 'replayed', 'the resent call recognised its own earlier run');
    assert.equal(msg?.dedup?.accepted, 1, 'admitted once, not twice');
    assert.equal(p.cuts, 1);
    assert.ok(p.connections > connectionsBefore, 'ioredis reconnected');
    assert.equal((await scriptCalls(a)) - before, 2, 'the script ran twice: the lost run and the resend');
    assert.deepEqual(await a.hgetBuffer(bucket, 'veh-cut'), written, 'the resend changed nothing');

    // The baseline is the ping itself: 5 s later, same place, is the window.
    const [next] = await deliver('rs-win', { assetId: 'veh-cut', ts: BASE + 5, lat: 52.5, lon: 13.4 }, 1);
    assert.equal(next?.dedup?.reason, 'window');
  });

  it('reports readings whose reply was lost as admitted, not as duplicates of themselves', async function () {
    const { proxy: p, admin: a } = servers();
    const reading = (seq: number): Record<string, unknown> => ({ device_id: 'bin-cut', seq, ts: '2026-07-16T09:00:00Z', fill_pct: 50 + (seq % 10) });
    await deliver('rs-sensor', [reading(1)], 2);
    const before = await scriptCalls(a);

    p.arm();
    const cut = once(p, 'cut');
    // Two new readings and an in-burst replay of the first.
    const pending = deliver('rs-sensor', [reading(41), reading(42), reading(41)], 2);
    await cut;
    const out = await pending;
    const audit = out.find((m) => m.dedup?.decision === 'audit');
    const admitted = out.find((m) => m.dedup?.decision === 'admitted');
    assert.deepEqual(
      { received: audit?.dedup?.received, unique: audit?.dedup?.unique, duplicates: audit?.dedup?.duplicates_suppressed },
      { received: 3, unique: 2, duplicates: 1 },
      'the two new readings admitted, only the in-burst replay suppressed',
    );
    assert.deepEqual((admitted?.payload as { seq: number }[]).map((r) => r.seq), [41, 42]);
    assert.equal((await scriptCalls(a)) - before, 2, 'the script ran twice');
    // Both entries hold the one call's token: the first run claimed them, the resend found them its own.
    const tokens: number[] = [];
    for (const bucket of await a.keys(`${PREFIX}rc:#*`)) {
      const fields = await a.hgetallBuffer(bucket);
      // An entry (lua/seen-set.lua): expiry and state, two epochs, then the token.
      for (const [field, entry] of Object.entries(fields)) if (/^bin-cut:4[12]:/.test(field)) tokens.push(entry.readUIntLE(10, 6));
    }
    assert.equal(tokens.length, 2);
    assert.equal(new Set(tokens).size, 1, `one call claimed both: ${tokens.join(', ')}`);

    // And a later delivery of the same readings is a duplicate, as it must be.
    const again = await deliver('rs-sensor', [reading(41), reading(42)], 1);
    assert.equal(again[0]?.dedup?.duplicates_suppressed, 2);
  });
});
