/**
 * The committed reply of an event transport (SPEC 2.5: Codex's Responses WebSocket): the push
 * counterpart of re-translate.ts's `replyStream`, which delivers the same reply as HTTP body bytes.
 */
import type { HubError } from "../formats/hub.ts";
import type { ReplyEvent, ReplyEventSink } from "./ports.ts";
import { committedReads, endedWith, type ByteReader, type ReadResult, type ReplyDriver } from "./re-translate.ts";
import { releaseCut } from "./release-after-done.ts";

/** Bytes of the events' data as UTF-8: what an event transport sends of them (SPEC O-3 counts reply bytes). */
export const eventBytes = (events: readonly ReplyEvent[]): number => {
  let n = 0;
  for (const ev of events) n += Buffer.byteLength(ev.data);
  return n;
};

/**
 * The committed reply of an event transport (SPEC 2.5), the counterpart of `replyStream` (pipeline/re-translate.ts): the
 * events produced while peeking first, then each upstream read through the driver, each read's events
 * handed to `sink.events` as one batch (in order, never an empty batch), the next read only once
 * `sink.ready()` says the transport drained (backpressure); a read failure or the idle
 * timeout becomes the driver's in-band error (SPEC 6.4); EOF ends the driver; `opts.pendingRead` is
 * awaited first, as in `replyStream` (pipeline/re-translate.ts); `onEnd` runs once, with the failure if any, then `sink.end()`. The returned `stop` is for a client that left: it ends the loop
 * without another event, aborts and cancels the upstream read, and calls `sink.end()` (not `onEnd`: the
 * caller reports the client's leaving itself). `sent.bytes` counts the events' data bytes.
 */
export function pumpEvents(
  reader: ByteReader,
  driver: ReplyDriver<ReplyEvent[]>,
  prefix: ReplyEvent[][],
  opts: { idleTimeoutMs: number; abort: (reason: unknown) => void; pendingRead?: Promise<ReadResult> },
  sink: ReplyEventSink,
  onEnd: (failure: HubError | undefined) => void,
  sent: { bytes: number } = { bytes: 0 },
): { stop: (reason?: unknown) => void } {
  const reads = committedReads(reader, opts, driver);
  let ended = false;
  const emit = (events: ReplyEvent[]) => {
    if (events.length === 0) return;
    sent.bytes += eventBytes(events);
    sink.events(events);
  };
  let reported = false;
  const report = (failure: HubError | undefined) => {
    if (reported) return;
    reported = true;
    onEnd(failure);
  };
  let sinkEnded = false;
  const endSink = () => {
    if (sinkEnded) return;
    sinkEnded = true;
    sink.end();
  };
  const finish = (failure: HubError | undefined) => {
    if (ended) return;
    ended = true;
    reads.disarm();
    emit(failure ? driver.end(failure) : driver.end());
    report(endedWith(driver, failure));
    endSink();
  };
  /** Whether the driver emulates stop sequences (ReplyDriver.cut): only then is it asked after each read. */
  const cuts = driver.cut !== undefined;
  const run = async () => {
    for (const p of prefix) emit(p);
    while (!ended) {
      // The reply ended at an emulated stop sequence or a Chat [DONE] (ReplyDriver.cut): the upstream is read no more for the client.
      if (cuts && driver.cut === true) {
        releaseCut(reader, driver); // at [DONE], cancelled a little later: the body can end and its connection be kept
        return finish(undefined);
      }
      let r: ReadResult;
      try {
        r = await reads.next();
      } catch (e) {
        return finish(reads.failure(e));
      }
      if (ended) return;
      if (reads.settled(r)) return finish(reads.failure());
      if (r.done) return finish(undefined);
      // The keep-alive sweep counts what the read added to the reply (the driver's content events), else its bytes.
      const before = reads.look(driver);
      const out = driver.push(r.value);
      reads.took(r.value, driver, before);
      emit(out);
      // The transport's send buffer is full: the next read waits until it drained (no idle timeout
      // runs meanwhile: it counts only while a read waits for the upstream).
      const drained = sink.ready?.();
      if (drained) await drained;
    }
  };
  run().catch((e: unknown) => {
    // A bug in a driver or the sink: the upstream call ends, the client gets the in-band error when the
    // driver can still produce it (as over HTTP), the reply is reported failed once, nothing hangs.
    ended = true;
    const failure = reads.broken(e);
    try {
      emit(driver.end(failure));
    } catch {
      // the driver (or the sink) cannot end either: the sink is ended without a terminal event
    }
    try {
      report(failure);
    } finally {
      endSink();
    }
  });
  return {
    stop(reason) {
      if (ended) return;
      ended = true;
      reads.disarm();
      endSink();
      opts.abort(reason);
      void reader.cancel(reason).catch(() => {});
    },
  };
}
