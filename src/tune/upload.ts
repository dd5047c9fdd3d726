import type { IncomingMessage } from 'http';

/**
 * The body of an upload, read with bounds, for the sidebar's what-if over a
 * file. The single what-if lock is held while it is read, so each way a
 * client can hold it is bounded:
 *
 * - size: a request declaring more than `limit` bytes is refused before a
 *   byte is read, and one that sends more than it declared (or declared
 *   nothing) is refused as it passes the limit. The rest of such a body is
 *   drained, not kept: the client finishes sending and reads the refusal,
 *   rather than failing its write on a closed socket;
 * - silence: a body that sends nothing for `idleMs` is ended (the caller
 *   answers 408 and closes the connection);
 * - a client that goes away before the end is a failed upload, never a
 *   promise left waiting.
 *
 * A declared body is read into one buffer of its size, so that 50 MB costs
 * 50 MB and not a list of chunks plus their copy.
 */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;
/** The most pings an upload is read into: 60 bytes each in columns, so at most some 60 MB (a realistic 50 MB file holds about 1,000,000). */
export const MAX_UPLOAD_PINGS = 1_000_000;
/** How long an upload may send nothing before it is ended. */
export const UPLOAD_IDLE_MS = 30_000;

export type UploadResult =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'tooLarge'; bytes: number }
  | { ok: false; reason: 'idle'; bytes: number; idleMs: number };

export function readUpload(req: IncomingMessage, limit: number = MAX_UPLOAD_BYTES, idleMs: number = UPLOAD_IDLE_MS): Promise<UploadResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve({ ok: false, reason: 'tooLarge', bytes: declared });
  }
  return new Promise((resolve, reject) => {
    // One buffer of the declared size; without a declared size, chunks joined at the end.
    const whole = Number.isInteger(declared) && declared >= 0 ? new Uint8Array(declared) : undefined;
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (result: UploadResult | Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      chunks.length = 0;
      if (result instanceof Error) reject(result);
      else resolve(result);
    };
    const idle = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        settle({ ok: false, reason: 'idle', bytes: size, idleMs });
        // Nothing more is read: the caller answers and closes the connection.
        req.pause();
      }, idleMs);
    };
    idle();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (settled) return;
      idle();
      if (size > limit) {
        // Answered now; the rest of the body is read and dropped.
        settle({ ok: false, reason: 'tooLarge', bytes: size });
        return;
      }
      if (whole !== undefined) whole.set(chunk, size - chunk.length);
      else chunks.push(chunk);
    });
    req.on('error', (error) => settle(error));
    req.on('close', () => settle(new Error(`the client went away after ${size} bytes`)));
    req.on('end', () => {
      if (settled) return;
      if (whole !== undefined) {
        settle({ ok: true, bytes: size === whole.length ? whole : whole.slice(0, size) });
        return;
      }
      // A buffer of its own, to hand to the what-if thread without copying a shared pool along.
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.length;
      }
      settle({ ok: true, bytes });
    });
  });
}
