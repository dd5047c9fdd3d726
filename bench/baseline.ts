/**
 * Today's figures beside the new ones, in one run: the landed code of a
 * commit (BENCH_BASELINE, default the commit this round of work started
 * from; `none` leaves it out), built on its own and measured in the same run
 * as the working tree, so that before and after see the same machine state
 * (the bench's rule: ratios against a baseline measured in the same run).
 *
 * The commit's files come from `git archive` (no worktree is registered in
 * the repository), its node_modules is a link to this checkout's (as the
 * repository's worktrees share theirs), and its own `tsc` compiles it. The
 * build is kept in the system's temporary directory under the commit's name
 * and reused by the next run; a build that did not finish is made again.
 * Child processes are pointed at its root (BenchBuild.root): Node-RED loads
 * the pack from there, and the harness wraps that copy's batcher.
 */
import { execFileSync, spawnSync } from 'child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
import { ROOT } from './runtime';

/** A build of the pack that a bench child can load: the working tree, or a commit's. */
export interface BenchBuild {
  /** `new`: the working tree; `today`: the baseline commit. */
  id: 'new' | 'today';
  /** The short commit, with `+` when it is the working tree. */
  label: string;
  root: string;
}

export const DEFAULT_BASELINE = 'c69ff86';

/** The commit to compare with, or undefined when BENCH_BASELINE=none. */
export function baselineCommit(): string | undefined {
  const asked = (process.env.BENCH_BASELINE ?? '').trim();
  if (asked === 'none') return undefined;
  return asked === '' ? DEFAULT_BASELINE : asked;
}

function git(args: string[]): string {
  return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
}

/** The working tree, as built by `npm run bench`. */
export function workingBuild(): BenchBuild {
  let label = '?';
  try {
    label = `${git(['rev-parse', '--short', 'HEAD'])}+`;
  } catch {
    // Not a git checkout: the label stays unknown.
  }
  return { id: 'new', label, root: ROOT };
}

/** The commit's build, made (or found made) in the temporary directory. */
export function baselineBuild(commit: string, log: (text: string) => void): BenchBuild {
  const full = git(['rev-parse', '--verify', `${commit}^{commit}`]);
  const short = full.slice(0, 7);
  const root = join(tmpdir(), `node-red-dedup-bench-baseline-${short}`);
  const built = join(root, '.bench-built');
  if (!existsSync(built)) {
    log(`bench: building the baseline ${short} in ${root}`);
    rmSync(root, { recursive: true, force: true });
    mkdirSync(root, { recursive: true });
    const archive = spawnSync('git', ['archive', '--format=tar', full], { cwd: ROOT, maxBuffer: 1 << 30 });
    if (archive.status !== 0) throw new Error(`git archive ${short} failed: ${archive.stderr.toString()}`);
    const untar = spawnSync('tar', ['-x', '-C', root], { input: archive.stdout });
    if (untar.status !== 0) throw new Error(`unpacking ${short} failed: ${untar.stderr.toString()}`);
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: root, encoding: 'utf8' });
    if (tsc.status !== 0) throw new Error(`building ${short} failed:\n${tsc.stdout}${tsc.stderr}`);
    writeFileSync(built, `${full}\n`);
  } else if (!existsSync(join(root, 'node_modules'))) {
    // Made by a checkout since removed (a worktree): its link dangles, so it points at this one's.
    log(`bench: the baseline ${short} in ${root} links to node_modules that are gone; linking this checkout's`);
    rmSync(join(root, 'node_modules'), { force: true });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
  }
  return { id: 'today', label: short, root };
}
