/**
 * One Redis client shared by every dedup node that uses the same config
 * node, in the way Node-RED's MQTT broker node shares its client: connected
 * when the first user registers, closed when the last one leaves, and its
 * state pushed to every user so each can show it in its status.
 */
import { readFileSync } from 'fs';
import { join } from 'path';
import Redis, { Cluster } from 'ioredis';
import { planClient, type ClientPlan, type RedisConnectionSettings } from './connection-options';
import { defineDedupScripts, type RedisClient } from './scripts';
import { probeScripting, scriptingRefusal, type NoScriptingText } from './scripting';
import { ScriptingUnavailableError } from './store-errors';

/** `unusable`: connected, but the server cannot run the pack's scripts (the error says what it answered). */
export type ConnectionState = 'connecting' | 'ready' | 'unusable' | 'reconnecting' | 'closed';

export interface ConnectionEvent {
  state: ConnectionState;
  /** The latest error, kept until the connection is ready again. */
  error?: Error;
}

export type ConnectionListener = (event: ConnectionEvent) => void;

/** How long closing waits for QUIT before it drops the socket (see node-red/close-times). */
const QUIT_GRACE_MS = 1000;

export class SharedConnection {
  private client: RedisClient | undefined;
  private readonly users = new Map<string, ConnectionListener>();
  private event: ConnectionEvent = { state: 'closed' };
  private closing: Promise<void> | undefined;
  private idleWaiters: (() => void)[] = [];
  /** Checked when the config node starts, so a bad setting is reported there, and never when a user registers. */
  private readonly plan: ClientPlan;

  /** Counts the connection's ready events, so that a probe answered after a reconnect is not taken for the new one's. */
  private readyCount = 0;

  constructor(
    readonly settings: RedisConnectionSettings,
    /** The catalog text of a server without scripting (the config node renders it in the editor's language). */
    private readonly noScriptingText: NoScriptingText = englishNoScriptingText,
  ) {
    this.plan = planClient(settings);
  }

  get keyPrefix(): string {
    return this.settings.keyPrefix;
  }

  get isCluster(): boolean {
    return this.settings.mode === 'cluster';
  }

  get userCount(): number {
    return this.users.size;
  }

  get state(): ConnectionEvent {
    return this.event;
  }

  /**
   * What is wrong with the connection, in the words of the error Redis or
   * the network gave ("connect ECONNREFUSED 127.0.0.1:6390", "WRONGPASS
   * ..."), while it is not ready; undefined when it is.
   */
  cause(): string | undefined {
    if (this.event.state === 'ready') return undefined;
    return this.event.error?.message ?? `not connected yet (${this.event.state})`;
  }

  /** The error every script call fails with while the server is known to run no scripts; undefined otherwise. */
  refusal(): ScriptingUnavailableError | undefined {
    return this.event.state === 'unusable' && this.event.error instanceof ScriptingUnavailableError ? this.event.error : undefined;
  }

  /**
   * A script call's error, as a ScriptingUnavailableError when the server
   * answered that it cannot run scripts (the connection is then unusable
   * until it reconnects and the server says otherwise); undefined for any
   * other error.
   */
  scriptingError(error: unknown): ScriptingUnavailableError | undefined {
    if (error instanceof ScriptingUnavailableError) return error;
    const answer = scriptingRefusal(error);
    if (answer === undefined) return undefined;
    const refused = this.refusal() ?? new ScriptingUnavailableError(answer, this.noScriptingText(answer));
    if (this.event.state === 'ready') this.publish({ state: 'unusable', error: refused });
    return refused;
  }

  /** Registers a user and returns the client, connecting on the first user. */
  register(userId: string, listener: ConnectionListener): RedisClient {
    this.client ??= this.connect();
    this.users.set(userId, listener);
    listener(this.event);
    return this.client;
  }

  /** Removes a user; the last one out closes the connection. */
  async deregister(userId: string): Promise<void> {
    if (!this.users.delete(userId)) return;
    if (this.users.size === 0) {
      for (const wake of this.idleWaiters.splice(0)) wake();
      await this.close();
    }
  }

  /**
   * Closes once the users have left (each leaves after its own in-flight
   * decisions finish), or after limitMs, whichever comes first: the config
   * node and its users are closed together on a redeploy.
   */
  async closeWhenIdle(limitMs: number): Promise<void> {
    if (this.users.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, limitMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    await this.close();
  }

  async close(): Promise<void> {
    const client = this.client;
    if (client === undefined) return this.closing;
    this.client = undefined;
    this.closing = quitOrDisconnect(client).finally(() => {
      this.closing = undefined;
    });
    return this.closing;
  }

  private connect(): RedisClient {
    const plan = this.plan;
    const client: RedisClient =
      plan.kind === 'cluster'
        ? new Cluster(plan.nodes, plan.options)
        : plan.url !== undefined
          ? new Redis(plan.url, plan.options)
          : new Redis(plan.options);
    defineDedupScripts(client);
    this.publish({ state: 'connecting' });
    client.on('ready', () => {
      this.publish({ state: 'ready' });
      this.probe(client);
    });
    client.on('reconnecting', () => this.publish({ state: 'reconnecting', ...this.lastError() }));
    // Without an 'error' listener ioredis would log every failed reconnect.
    client.on('error', (error: Error) => {
      const connected = this.event.state === 'ready' || this.event.state === 'unusable';
      this.publish({ state: connected ? 'reconnecting' : this.event.state, error });
    });
    client.on('end', () => {
      if (this.client === client) this.publish({ state: 'reconnecting', ...this.lastError() });
    });
    return client;
  }

  /**
   * Asks the server (each primary of a Cluster) whether it runs the pack's
   * scripts, at every connect: a server without scripting is named at
   * deploy, before the first message, rather than guessed from the first
   * failed decision. A probe that fails otherwise (the connection dropped)
   * proves nothing; the next connect asks again.
   */
  private probe(client: RedisClient): void {
    const round = ++this.readyCount;
    const servers = client instanceof Cluster ? client.nodes('master') : [client];
    void Promise.all(servers.map((server) => probeScripting(server))).then(
      (answers) => {
        const answer = answers.find((a) => a !== undefined);
        if (answer === undefined || round !== this.readyCount || this.client !== client || this.event.state !== 'ready') return;
        this.publish({ state: 'unusable', error: new ScriptingUnavailableError(answer, this.noScriptingText(answer)) });
      },
      () => undefined,
    );
  }

  private lastError(): { error?: Error } {
    return this.event.error ? { error: this.event.error } : {};
  }

  private publish(event: ConnectionEvent): void {
    this.event = event;
    for (const listener of this.users.values()) listener(event);
  }
}

async function quitOrDisconnect(client: RedisClient): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.quit().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, QUIT_GRACE_MS);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    client.disconnect();
  }
}

/**
 * The en-US catalog's text, for a connection made outside Node-RED (tests,
 * tools): read from the catalog, so the words live in one place. From
 * nodes/redis/ (compiled) or src/redis/ (tests) up to the package root.
 */
const englishNoScriptingText: NoScriptingText = (answer) => {
  const file = join(__dirname, '..', '..', 'nodes', 'locales', 'en-US', 'dedup-redis.json');
  const catalog = JSON.parse(readFileSync(file, 'utf8')) as { 'dedup-redis': { errors: { noScripting: string } } };
  return catalog['dedup-redis'].errors.noScripting.replace('__answer__', answer);
};
