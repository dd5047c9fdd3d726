/**
 * CPU seconds (user + system) that running processes have used, read from
 * /proc, for the figures the system test prints beside its tables (CPU per
 * decision). Linux only; elsewhere it reads 0.
 */
import { readdirSync, readFileSync, readlinkSync } from 'fs';

const TICKS_PER_SECOND = 100;

/**
 * CPU seconds of every process whose command line contains `match`, or
 * (`by: 'cwd'`) whose working directory is `match`: Node-RED sets its
 * process title, which overwrites its command line.
 */
export function cpuSecondsOf(match: string, by: 'cmdline' | 'cwd' = 'cmdline'): number {
  let ticks = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const found = by === 'cwd' ? readlinkSync(`/proc/${pid}/cwd`) === match : readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(match);
      if (!found) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command name, which may hold spaces, in parentheses.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended while it was read.
    }
  }
  return ticks / TICKS_PER_SECOND;
}
