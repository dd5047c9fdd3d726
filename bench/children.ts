/**
 * The parent side of the benchmark's child processes: each bench/*.ts that
 * measures something runs in a fresh `node --expose-gc` process, is handed
 * its job as JSON on the command line, and answers once over IPC
 * (bench/runtime.ts, answerParent). Signals it sends before that (a
 * coordinated worker's `ready`) go to onSignal.
 */
import { fork, type ChildProcess } from 'child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ROOT } from './runtime';

/** A job longer than this goes through a file (one argument may hold at most 128 kB on Linux); see runtime.ts jobFromArgv. */
const LONGEST_ARGUMENT = 100_000;

export interface Child<T> {
  process: ChildProcess;
  answer: Promise<T>;
}

export function startChild<T>(script: string, job: unknown, onSignal?: (signal: unknown) => void, env: NodeJS.ProcessEnv = process.env): Child<T> {
  let text = JSON.stringify(job);
  let jobDir: string | undefined;
  if (text.length > LONGEST_ARGUMENT) {
    jobDir = mkdtempSync(join(tmpdir(), 'dedup-bench-job-'));
    const file = join(jobDir, 'job.json');
    writeFileSync(file, text);
    text = JSON.stringify({ $jobFile: file });
  }
  const child = fork(join(__dirname, script), [text], {
    cwd: ROOT,
    execArgv: ['--expose-gc', '--require', 'tsx/cjs'],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env,
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const answer = new Promise<T>((resolve, reject) => {
    let reply: { ok: boolean; result?: T; error?: string } | undefined;
    child.on('message', (m) => {
      const message = m as { ok?: boolean; type?: string };
      if (typeof message.ok === 'boolean') reply = message as typeof reply;
      else onSignal?.(message);
    });
    child.on('exit', (code) => {
      if (jobDir !== undefined) rmSync(jobDir, { recursive: true, force: true });
      if (reply?.ok) resolve(reply.result as T);
      else reject(new Error(reply?.error ?? `${script} exited with ${code}:\n${output}`));
    });
  });
  return { process: child, answer };
}

export function runChild<T>(script: string, job: unknown): Promise<T> {
  return startChild<T>(script, job).answer;
}

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
