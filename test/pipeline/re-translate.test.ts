/**
 * The reply drivers and the post-commit reply stream (SPEC R-9, 6.4) without a gateway: what the client
 * gets and what the request is recorded as, for complete, cut-off, silent and broken upstream streams.
 */
import { describe, expect, test } from "bun:test";
import { anthropicMessages } from "../../formats/anthropic-messages/index.ts";
import { openaiChat } from "../../formats/openai-chat/index.ts";
import type { HubError } from "../../formats/hub.ts";
import { passthroughDriver, replyStream, SseEventsDriver, TranslatedStreamDriver, type ByteReader, type ReadResult, type ReplyDriver } from "../../pipeline/re-translate.ts";
import type { ReplyEvent } from "../../pipeline/ports.ts";
import { pumpEvents } from "../../pipeline/pump-events.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const anthropicSse = simpleReply("anthropic-messages", { text: "one two three four" }, true).sse!;
const chatSse = simpleReply("openai-chat", { text: "one two three four" }, true).sse!;
const cut = (sse: string, marker: string) => sse.slice(0, sse.indexOf(marker));

/**
 * A reader over scripted reads; `hang` waits until the reader is cancelled (then ends, as a fetch body
 * reader does); `fail` rejects.
 */
function reader(steps: Array<string | "hang" | "fail">): ByteReader & { cancelled: boolean } {
  let i = 0;
  let wake: ((r: ReadResult) => void) | undefined;
  const r = {
    cancelled: false,
    read(): Promise<ReadResult> {
      const step = steps[i++];
      if (step === undefined || r.cancelled) return Promise.resolve({ done: true });
      if (step === "hang") return new Promise<ReadResult>((resolve) => (wake = resolve));
      if (step === "fail") return Promise.reject(new Error("ECONNRESET: socket hang up. For more information, pass `verbose: true`"));
      return Promise.resolve({ done: false, value: enc.encode(step) });
    },
    cancel: async () => {
      r.cancelled = true;
      wake?.({ done: true });
    },
  };
  return r;
}

async function run(driver: ReplyDriver, steps: Array<string | "hang" | "fail">, idleTimeoutMs = 1000) {
  const ends: Array<HubError | undefined> = [];
  let cancelled = 0;
  let aborted: unknown;
  const r = reader(steps);
  const body = replyStream(r, driver, [], { idleTimeoutMs, abort: (x) => (aborted = x), onCancel: () => cancelled++ }, (f) => ends.push(f));
  const text = await new Response(body).text();
  return { text, ends, cancelled, aborted, reader: r };
}

describe("native passthrough driver", () => {
  test("a complete Anthropic stream: bytes unchanged, recorded as a success", async () => {
    const d = passthroughDriver(anthropicMessages.createTap({ family: "anthropic" }));
    const out = await run(d, [anthropicSse.slice(0, 300), anthropicSse.slice(300)]);
    expect(out.text).toBe(anthropicSse);
    expect(out.ends).toEqual([undefined]);
    expect(d.lateError).toBeUndefined();
  });

  test("a cut-off Anthropic stream: the client gets one event: error and the request is recorded as failed", async () => {
    const d = passthroughDriver(anthropicMessages.createTap({ family: "anthropic" }));
    const partial = cut(anthropicSse, "event: content_block_stop");
    const out = await run(d, [partial]);
    expect(out.text.startsWith(partial)).toBe(true);
    expect(out.text.slice(partial.length)).toMatch(/^event: error\ndata: .*"api_error"/);
    expect(out.text).not.toContain("message_stop");
    expect(out.ends).toHaveLength(1);
    expect(out.ends[0]?.code).toBe("upstream_truncated");
  });

  test("a cut-off Chat stream: error frame then [DONE], recorded as failed", async () => {
    const d = passthroughDriver(openaiChat.createTap({ family: "openai", includeUsage: true }));
    const partial = cut(chatSse, '"finish_reason":"stop"').slice(0, cut(chatSse, '"finish_reason":"stop"').lastIndexOf("data: "));
    const out = await run(d, [partial]);
    expect(out.text.slice(partial.length)).toMatch(/^data: \{"error":\{.*\}\}\n\ndata: \[DONE\]\n\n$/);
    expect(out.ends[0]?.code).toBe("upstream_truncated");
  });
});

describe("reply stream after the commit point", () => {
  test("a silent upstream is closed after the idle timeout with the format's in-band error, and aborted", async () => {
    const d = new TranslatedStreamDriver(anthropicMessages, openaiChat, { family: "anthropic" }, { model: "m" });
    const out = await run(d, [cut(anthropicSse, "event: content_block_stop"), "hang"], 50);
    expect(out.text).toContain('"content":"one "');
    expect(out.text).toMatch(/data: \{"error":\{[^\n]*upstream_idle_timeout[^\n]*\}\}\n\ndata: \[DONE\]\n\n$/);
    expect(out.text).not.toMatch(/"finish_reason":"/);
    expect(out.ends[0]?.code).toBe("upstream_idle_timeout");
    expect((out.aborted as HubError).code).toBe("upstream_idle_timeout");
  });

  test("a client that holds the stream back longer than the idle timeout is not cut: the timer counts only while a read waits", async () => {
    const d = passthroughDriver(openaiChat.createTap({ family: "openai", includeUsage: true }));
    const ends: Array<HubError | undefined> = [];
    let aborted: unknown;
    const r = reader([chatSse.slice(0, 200), chatSse.slice(200, 400), chatSse.slice(400)]);
    const body = replyStream(r, d, [], { idleTimeoutMs: 40, abort: (x) => (aborted = x), onCancel: () => {} }, (f) => ends.push(f));
    const client = body.getReader();
    let text = dec.decode((await client.read()).value);
    await Bun.sleep(150); // the client reads nothing for almost four idle timeouts
    for (let x = await client.read(); !x.done; x = await client.read()) text += dec.decode(x.value);
    expect(text).toBe(chatSse);
    expect(ends).toEqual([undefined]);
    expect(aborted).toBeUndefined();
    expect(r.cancelled).toBe(false);
  });

  test("a broken connection becomes an in-band error with a short reason, no runtime hints", async () => {
    const d = new TranslatedStreamDriver(anthropicMessages, openaiChat, { family: "anthropic" }, { model: "m" });
    const out = await run(d, [cut(anthropicSse, "event: content_block_stop"), "fail"]);
    expect(out.ends[0]?.code).toBe("upstream_connection_lost");
    expect(out.ends[0]?.message).toBe("The upstream connection broke mid-reply (ECONNRESET).");
    expect(out.text).not.toContain("verbose");
  });

  /** A real translating driver whose `push` throws on its second read (and `end` too when `endThrows`): a driver bug. */
  function throwingDriver(endThrows: boolean): ReplyDriver {
    const d = new TranslatedStreamDriver(anthropicMessages, openaiChat, { family: "anthropic" }, { model: "m" });
    let pushes = 0;
    return new Proxy(d, {
      get(target, key, receiver) {
        if (key === "push") return (chunk: Uint8Array) => (++pushes === 2 ? (() => { throw new TypeError("decoder bug"); })() : target.push(chunk));
        if (key === "end" && endThrows) return () => { throw new TypeError("encoder bug"); };
        const v = Reflect.get(target, key, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }

  test("a driver that throws mid-reply: the client gets the in-band error, the upstream is cancelled, the request is reported failed once", async () => {
    const half = cut(anthropicSse, "event: content_block_stop");
    const out = await run(throwingDriver(false), [half.slice(0, 200), half.slice(200), "hang"]);
    expect(out.text).toMatch(/data: \{"error":\{[^\n]*The gateway failed while relaying the reply[^\n]*\}\}\n\ndata: \[DONE\]\n\n$/);
    expect(out.text).not.toMatch(/"finish_reason":"/);
    expect(out.ends).toHaveLength(1);
    expect(out.ends[0]?.message).toBe("The gateway failed while relaying the reply.");
    expect(out.reader.cancelled).toBe(true);
    expect(out.aborted).toBeInstanceOf(TypeError);
  });

  test("a driver that cannot end either: the connection is cut (no clean end), reported failed once", async () => {
    const half = cut(anthropicSse, "event: content_block_stop");
    const ends: Array<HubError | undefined> = [];
    const r = reader([half.slice(0, 200), half.slice(200), "hang"]);
    const body = replyStream(r, throwingDriver(true), [], { idleTimeoutMs: 1000, abort: () => {}, onCancel: () => {} }, (f) => ends.push(f));
    await expect(new Response(body).text()).rejects.toThrow("decoder bug");
    expect(ends).toHaveLength(1);
    expect(ends[0]?.message).toBe("The gateway failed while relaying the reply.");
    expect(r.cancelled).toBe(true);
  });

  test("a client that goes away cancels the upstream reader and reports it once", async () => {
    const d = passthroughDriver(anthropicMessages.createTap({ family: "anthropic" }));
    const r = reader([cut(anthropicSse, "event: content_block_delta"), "hang"]);
    let cancelled = 0;
    let aborted: unknown;
    const body = replyStream(r, d, [], { idleTimeoutMs: 5000, abort: (x) => (aborted = x), onCancel: () => cancelled++ }, () => {});
    const rd = body.getReader();
    await rd.read();
    await rd.cancel("client gone");
    expect(cancelled).toBe(1);
    expect(r.cancelled).toBe(true);
    expect(aborted).toBe("client gone");
  });
});

/** pumpEvents (the event-transport counterpart of replyStream) over scripted reads; resolves when the sink is ended. */
async function pump(steps: Array<string | "hang" | "fail">, opts: { idleTimeoutMs?: number; pendingRead?: Promise<ReadResult>; driver?: ReplyDriver<ReplyEvent[]> } = {}) {
  const d = opts.driver ?? new SseEventsDriver(passthroughDriver(anthropicMessages.createTap({ family: "anthropic" })));
  const r = reader(steps);
  const ends: Array<HubError | undefined> = [];
  const events: ReplyEvent[] = [];
  let sinkEnds = 0;
  let aborted: unknown;
  const sent = { bytes: 0 };
  await new Promise<void>((resolve) => {
    pumpEvents(
      r,
      d,
      [],
      { idleTimeoutMs: opts.idleTimeoutMs ?? 1000, abort: (x) => (aborted = x), pendingRead: opts.pendingRead },
      { events: (b) => events.push(...b), end: () => (sinkEnds++, resolve()) },
      (f) => ends.push(f),
      sent,
    );
  });
  await Bun.sleep(5);
  return { events, ends, sinkEnds, aborted, reader: r, sent };
}

describe("pumpEvents: the same endings as replyStream", () => {
  test("a silent upstream: the in-band error after the idle timeout, aborted, reported once, the sink ended once", async () => {
    const out = await pump([cut(anthropicSse, "event: content_block_delta"), "hang"], { idleTimeoutMs: 30 });
    expect(out.events.at(-1)?.event).toBe("error");
    expect(out.events.at(-1)?.data).toContain('"type":"api_error"');
    expect(out.ends.map((e) => e?.code)).toEqual(["upstream_idle_timeout"]);
    expect((out.aborted as HubError).code).toBe("upstream_idle_timeout");
    expect(out.reader.cancelled).toBe(true);
    expect(out.sinkEnds).toBe(1);
  });

  test("a read that fails: the connection-lost error in-band, reported once", async () => {
    const out = await pump([cut(anthropicSse, "event: content_block_delta"), "fail"]);
    expect(out.ends.map((e) => e?.code)).toEqual(["upstream_connection_lost"]);
    expect(out.events.at(-1)?.event).toBe("error");
    expect(out.sinkEnds).toBe(1);
  });

  test("a driver that throws mid-reply: the in-band error event as over HTTP, the upstream cancelled, reported once, the sink ended once", async () => {
    const inner = new SseEventsDriver(passthroughDriver(anthropicMessages.createTap({ family: "anthropic" })));
    let pushes = 0;
    const driver: ReplyDriver<ReplyEvent[]> = Object.assign(Object.create(inner), {
      push: (chunk: Uint8Array) => (++pushes === 2 ? (() => { throw new TypeError("decoder bug"); })() : inner.push(chunk)),
      end: (f?: HubError) => inner.end(f),
    });
    const head = cut(anthropicSse, "event: content_block_delta");
    const out = await pump([head, anthropicSse.slice(head.length), "hang"], { driver });
    expect(out.events[0]?.event).toBe("message_start");
    expect(out.events.at(-1)?.event).toBe("error");
    expect(out.events.at(-1)?.data).toContain("The gateway failed while relaying the reply.");
    expect(out.ends.map((e) => e?.message)).toEqual(["The gateway failed while relaying the reply."]);
    expect(out.aborted).toBeInstanceOf(TypeError);
    expect(out.reader.cancelled).toBe(true);
    expect(out.sinkEnds).toBe(1);
  });

  test("the commit point's pending read is the first read: its chunk before the reader's, every event once, bytes counted", async () => {
    const head = cut(anthropicSse, "event: content_block_delta");
    const pendingRead = Promise.resolve<ReadResult>({ done: false, value: enc.encode(head) });
    const out = await pump([anthropicSse.slice(head.length)], { pendingRead });
    expect(out.ends).toEqual([undefined]);
    const names = out.events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names.at(-1)).toBe("message_stop");
    expect(names.filter((n) => n === "message_start")).toHaveLength(1);
    expect(out.sent.bytes).toBe(out.events.reduce((n, e) => n + Buffer.byteLength(e.data), 0));
  });
  test("backpressure: while the sink's buffer is full no further upstream read starts, and longer than the idle timeout is not a timeout", async () => {
    const head = cut(anthropicSse, "event: content_block_delta");
    const steps = [head, anthropicSse.slice(head.length)];
    let reads = 0;
    const base = reader(steps);
    const r: ByteReader = { read: () => (reads++, base.read()), cancel: (x) => base.cancel(x) };
    const events: ReplyEvent[] = [];
    const ends: Array<HubError | undefined> = [];
    let release: () => void = () => {};
    let full = true;
    let sinkEnded = false;
    pumpEvents(
      r,
      new SseEventsDriver(passthroughDriver(anthropicMessages.createTap({ family: "anthropic" }))),
      [],
      { idleTimeoutMs: 20, abort: () => {} },
      {
        events: (b) => events.push(...b),
        end: () => (sinkEnded = true),
        // Full after the first batch, until released: as a WebSocket whose client stopped reading.
        ready: () => (full && events.length > 0 ? new Promise<void>((resolve) => (release = resolve)) : undefined),
      },
      (f) => ends.push(f),
    );
    await Bun.sleep(80);
    expect(reads).toBe(1);
    expect(events.map((e) => e.event)).toEqual(["message_start", "content_block_start", "ping"]);
    expect(sinkEnded).toBe(false);
    full = false;
    release();
    await Bun.sleep(20);
    expect(events.at(-1)?.event).toBe("message_stop");
    expect(ends).toEqual([undefined]);
    expect(sinkEnded).toBe(true);
  });
});
