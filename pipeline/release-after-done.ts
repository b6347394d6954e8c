/**
 * The upstream body of a Chat stream after its first `data: [DONE]` (PassthroughDriver.cut, or a
 * DecodingDriver whose Chat decoder read it): the client's reply ends there at once and nothing after it
 * is forwarded, but the body's reader is cancelled only {@link RELEASE_AFTER_DONE_MS} later. A server
 * flushes `[DONE]` and then ends its chunked body (`0\r\n\r\n`) a few ms later; a body cancelled before
 * that end makes the runtime drop the connection instead of keeping it for the next request (a TCP and
 * TLS handshake per request against a real provider: 5 connections for 5 streams, 1 with the wait).
 * Meanwhile the body is read and what comes is discarded, so nothing piles up unread (an unread body
 * fills the runtime's and the sockets' buffers, 6.8 MB seen on loopback, before its sender stalls); a
 * server that sends more than {@link AFTER_DONE_MAX_BYTES} after `[DONE]` is cut at once, one that
 * keeps the connection open after it (keep-alive comments) at the bound.
 *
 * No timer per reply: the readers wait on one list (two arrays, appended to) under one deadline of the
 * shared sweep (pipeline/deadline-sweep.ts), which cancels those that are due; the cancel itself is what
 * cancelling at `[DONE]` cost, made later. The read after `[DONE]` costs a read and its callback per reply
 * (its result, usually the body's end, and the callback's promise).
 */
import type { ByteReader } from "./committed-reads.ts";
import { Deadline } from "./deadline-sweep.ts";

/**
 * How long a body cut at `[DONE]` is left to end by itself before its reader is cancelled, ms: well past
 * a server's body end that follows `[DONE]` by a few ms (its sweep period is then 50 ms, so the cancel
 * comes 200–250 ms after `[DONE]`), short enough that a server keeping the connection open after
 * `[DONE]` does not hold it (or have the runtime buffer what it sends) for long. The client does not
 * wait on it.
 */
export const RELEASE_AFTER_DONE_MS = 200;

/**
 * The most a body cut at `[DONE]` may send after it before its reader is cancelled at once, bytes: far
 * more than a server's end of body (5 bytes) or a few keep-alive comments, far less than what would cost
 * the gateway memory or the upstream's bandwidth to read for nothing.
 */
export const AFTER_DONE_MAX_BYTES = 64 * 1024;

/** The handler of a cancel or a read nobody waits on. */
const ignore = (): void => {};

/**
 * Reads `reader` (a body cut at `[DONE]`) and discards what comes until it ends, or cancels it once more
 * than {@link AFTER_DONE_MAX_BYTES} came (`taken` so far); its cancel by the sweep ends the reads too
 * (a pending read then settles done). Never throws.
 */
function discardAfterDone(reader: ByteReader, taken: number): void {
  reader.read().then((r) => {
    if (r.done) return;
    taken += r.value.byteLength;
    if (taken > AFTER_DONE_MAX_BYTES) void reader.cancel().catch(ignore);
    else discardAfterDone(reader, taken);
  }, ignore);
}

/** The readers waiting, oldest first from {@link head}, and when each is due (performance.now() ms). */
const waiting: Array<ByteReader | undefined> = [];
const dueAts: number[] = [];
let head = 0;

/** The one deadline of the list: due when its oldest reader is. */
class ReleaseSweep extends Deadline {
  /** {@link Deadline.expire}: cancels the readers that are due; armed again for the next one if any. */
  expire(): void {
    const now = performance.now();
    while (head < waiting.length && dueAts[head]! <= now) {
      void waiting[head]!.cancel().catch(ignore);
      waiting[head] = undefined;
      head++;
    }
    if (head === waiting.length) {
      waiting.length = 0;
      dueAts.length = 0;
      head = 0;
      return;
    }
    if (head >= 1024 && head * 2 >= waiting.length) {
      // compacted in place (no new array): a busy gateway's list never empties
      waiting.copyWithin(0, head);
      dueAts.copyWithin(0, head);
      waiting.length -= head;
      dueAts.length -= head;
      head = 0;
    }
    this.arm(RELEASE_AFTER_DONE_MS);
    this.dueAt = dueAts[head]!;
  }
}

const sweep = new ReleaseSweep();

/**
 * Releases `reader`'s upstream after its reply ended at `[DONE]`: what the body still sends is read and
 * discarded, and its reader is cancelled {@link RELEASE_AFTER_DONE_MS} from now (the cancel of a body
 * that ended meanwhile does nothing), at once when more than {@link AFTER_DONE_MAX_BYTES} came. Returns
 * at once; never throws. No read of `reader` may be pending.
 */
export function releaseAfterDone(reader: ByteReader): void {
  discardAfterDone(reader, 0);
  const due = performance.now() + RELEASE_AFTER_DONE_MS;
  waiting.push(reader);
  dueAts.push(due);
  if (!sweep.armed) {
    sweep.arm(RELEASE_AFTER_DONE_MS);
    sweep.dueAt = dueAts[head]!;
  }
}

/**
 * Ends the reading of a reply its driver cut (ReplyDriver.cut): at its end marker (`cutAtEnd`, a Chat
 * `[DONE]`) through {@link releaseAfterDone}; at an emulated stop sequence (mid-reply, the rest perhaps
 * long) the read is cancelled at once.
 */
export function releaseCut(reader: ByteReader, driver: { readonly cutAtEnd?: boolean }): void {
  if (driver.cutAtEnd === true) releaseAfterDone(reader);
  else void reader.cancel().catch(ignore);
}

/** Readers waiting for their release (tests). */
export function readersAwaitingRelease(): number {
  return waiting.length - head;
}
