import type { IncomingMessage } from 'http';

/**
 * The body of an upload, read with a bound: a request declaring more than
 * `limit` bytes is refused before a byte is read, and one that sends more
 * than it declared (or declared nothing) is refused as it passes the limit.
 * The rest of such a body is drained, not kept: the client finishes sending
 * and reads the refusal, rather than failing its write on a closed socket
 * (a body cannot outrun Node's own request timeout).
 */
export const MAX_UPLOAD_BYTES = 50 * 1024 * 1024;

export type UploadResult = { ok: true; bytes: Uint8Array } | { ok: false; tooLarge: true; bytes: number };

export function readUpload(req: IncomingMessage, limit: number = MAX_UPLOAD_BYTES): Promise<UploadResult> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.resolve({ ok: false, tooLarge: true, bytes: declared });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (over) return;
      if (size > limit) {
        // Answered now; the rest of the body is read and dropped.
        over = true;
        chunks.length = 0;
        resolve({ ok: false, tooLarge: true, bytes: size });
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', reject);
    req.on('end', () => {
      if (over) return;
      // A buffer of its own, to hand to the what-if thread without copying a shared pool along.
      const bytes = new Uint8Array(size);
      let at = 0;
      for (const chunk of chunks) {
        bytes.set(chunk, at);
        at += chunk.length;
      }
      resolve({ ok: true, bytes });
    });
  });
}
