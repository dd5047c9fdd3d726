/**
 * A throwaway PostgreSQL cluster for the system test: Debian's
 * postgresql-15 binaries, `initdb` into a temporary directory, `pg_ctl
 * start` on a loopback port of the test's choosing, trust authentication for
 * loopback only. initdb and pg_ctl refuse to run as root: as root they run
 * as the `postgres` user (`runuser`) on a directory that user owns.
 */
import { spawnSync } from 'child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { freePort, HOST, onProcessEnd } from './redis-server';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export function postgresAvailable(): boolean {
  return existsSync(join(PG_BIN, 'initdb')) && existsSync(join(PG_BIN, 'pg_ctl'));
}

function asOwner(command: string, args: readonly string[]): { status: number | null; output: string } {
  const root = process.getuid?.() === 0;
  const result = root
    ? spawnSync('runuser', ['-u', 'postgres', '--', join(PG_BIN, command), ...args], { encoding: 'utf8' })
    : spawnSync(join(PG_BIN, command), [...args], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error?.message ?? ''}` };
}

export interface Postgres {
  readonly port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  readonly url: string;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<Postgres> {
  const dir = mkdtempSync(join(tmpdir(), 'node-red-dedup-pg-'));
  if (process.getuid?.() === 0) {
    const ids = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  const data = join(dir, 'data');
  const port = await freePort();
  let started = false;
  const stop = (): void => {
    if (started) asOwner('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    started = false;
    rmSync(dir, { recursive: true, force: true });
  };
  onProcessEnd(stop);
  const init = asOwner('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale', 'C']);
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.output}`);
  // A test database: durability buys nothing and costs the shared CPU.
  const options = `-p ${port} -k ${dir} -c listen_addresses=${HOST} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100`;
  const run = asOwner('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '60', 'start']);
  if (run.status !== 0) {
    const log = existsSync(join(dir, 'log')) ? readFileSync(join(dir, 'log'), 'utf8') : '';
    throw new Error(`pg_ctl start failed:\n${run.output}\n${log}`);
  }
  started = true;
  return {
    port,
    url: `postgres://postgres@${HOST}:${port}/postgres`,
    stop: async () => stop(),
  };
}
