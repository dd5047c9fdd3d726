import type { MemoryWindowSettings } from '../stores/memory-window-store';
import { decideAll, type GridCell } from './grid';
import type { PingColumns } from '../core/window/ping-columns';
import { PingFileError, readPingText, type FileLayout, type PingFileResult, type RuleFields } from './ping-file';
import { whatIf, type WhatIfRequest, type WhatIfResult } from './what-if';
import { readRuleOf } from './grid-spec';
import { errorMessage } from '../core/parse/errors';

/**
 * The work a what-if thread does (tune/grid-worker), written as plain
 * functions so that it runs the same in the thread or, where there is no
 * compiled worker (under tsx), in the caller's.
 */

/** Some cells of a grid over shared columns (the command splits a grid between threads). */
export interface CellsJob {
  kind: 'cells';
  columns: PingColumns;
  settings: MemoryWindowSettings[];
}

/** A whole what-if over an upload (its bytes, read into at most `maxPings` pings) or a node's sample (its columns). */
export interface WhatIfJob {
  kind: 'what-if';
  input: { text: Uint8Array; maxPings: number } | { columns: PingColumns };
  fields: RuleFields;
  /** An upload's columns and time zone, as the sidebar's picker chose them. */
  layout?: FileLayout;
  request: WhatIfRequest;
}

export type Job = CellsJob | WhatIfJob;

/** How a file was read: everything of PingFileResult but the pings themselves. */
export type ReadSummary = Omit<PingFileResult, 'columns'>;

export type Reply =
  | { kind: 'cell'; index: number; cell: GridCell }
  | { kind: 'done' }
  | { kind: 'what-if'; read: ReadSummary | undefined; result: WhatIfResult }
  | { kind: 'error'; code: string; message: string; details: Record<string, string> };

export function runJob(job: Job, post: (reply: Reply) => void): void {
  try {
    if (job.kind === 'cells') {
      job.settings.forEach((settings, index) => post({ kind: 'cell', index, cell: decideAll(job.columns, settings) }));
      post({ kind: 'done' });
      return;
    }
    let columns: PingColumns;
    let read: ReadSummary | undefined;
    if ('text' in job.input) {
      // An upload is read with the node's own rule (value mode, the fix's quality) unless the job names one.
      const fields = job.fields.rule === undefined ? { ...job.fields, rule: readRuleOf(job.request.rule) } : job.fields;
      ({ columns, ...read } = readPingText(job.input.text, fields, job.input.maxPings, job.layout));
      // The bytes are read: let them go before the grid runs (the job holds the only reference).
      job.input.text = new Uint8Array(0);
    } else {
      columns = job.input.columns;
    }
    post({ kind: 'what-if', read, result: whatIf(columns, job.request) });
  } catch (error) {
    if (error instanceof PingFileError) post({ kind: 'error', code: error.code, message: error.message, details: error.details });
    else post({ kind: 'error', code: 'failed', message: errorMessage(error), details: {} });
  }
}
