/**
 * The upstream body of a Chat stream after its first `data: [DONE]` (PassthroughDriver.cut, or a
 * DecodingDriver whose Chat decoder read it): the client's reply ends there at once and nothing after it
 * is forwarded, but the body's reader is cancelled only {@link RELEASE_AFTER_DONE_MS} later. A server
 * flushes `[DONE]` and then ends its chunked body (`0\r\n\r\n`) a few ms later; a body cancelled before
 * that end makes the runtime drop the connection instead of keeping it for the next request (a TCP and
 * TLS handshake per request against a real provider: 5 connections for 5 streams, 1 with the wait).
 * The runtime's HTTP client reads the end off the socket without a read of ours, so nothing is read or
 * awaited meanwhile; a server that keeps the connection open after `[DONE]` (keep-alive comments) is
 * cut at the bound, what it sent meanwhile discarded with the reader.
 *
 * No timer and no object per reply: the readers wait on one list (two arrays, appended to) under one
 * deadline of the shared sweep (pipeline/deadline-sweep.ts), which cancels those that are due; the
 * cancel itself is what cancelling at `[DONE]` cost, made later (bench-alloc's chat stream lane: the
 * same objects per request).
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

/** The handler of a cancel nobody waits on. */
const ignore = (): void => {};

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
 * Releases `reader`'s upstream after its reply ended at `[DONE]`: its reader is cancelled
 * {@link RELEASE_AFTER_DONE_MS} from now (at once when the body ended meanwhile: the cancel of an ended
 * body does nothing). Returns at once; never throws.
 */
export function releaseAfterDone(reader: ByteReader): void {
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
