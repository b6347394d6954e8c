/**
 * What the SSE reader and the passthrough taps' held event keep of one event that does not end is
 * bounded (formats/sse.ts MAX_SSE_EVENT_BYTES; small bounds here): past it they throw the
 * `upstream_event_too_large` FormatError, and take nothing more.
 */
import { describe, expect, test } from "bun:test";
import { FormatError } from "../../formats/hub.ts";
import { HeldEvent, lastEventBoundary, SseReader, type SseEvent } from "../../formats/sse.ts";

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array) => new TextDecoder().decode(b);
/** The taps' boundary search, as HeldEvent asks for it. */
const lastEventEnd = (b: Uint8Array): number => lastEventBoundary(b) || -1;

/** The error `fn` throws (undefined when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

function expectTooLarge(e: unknown, limit: number) {
  expect(e).toBeInstanceOf(FormatError);
  expect((e as FormatError).error).toMatchObject({ kind: "api_error", status: 502, code: "upstream_event_too_large" });
  expect((e as FormatError).error.message).toContain(`larger than ${limit} bytes`);
}

describe("SseReader's bound on one event", () => {
  test("a data line without end: events before it are dispatched, then the push that passes the bound throws; nothing is taken after", () => {
    const seen: string[] = [];
    const reader = new SseReader((ev: SseEvent) => seen.push(ev.data), 100);
    reader.push(bytes("data: first\n\ndata: "));
    reader.push(bytes("x".repeat(60)));
    const e = thrown(() => reader.push(bytes("x".repeat(60))));
    expectTooLarge(e, 100);
    expect(seen).toEqual(["first"]);
    // Nothing more is parsed, not even a well-formed event; the end dispatches nothing.
    expect(thrown(() => reader.push(bytes("\n\ndata: later\n\n")))).toBeUndefined();
    expect(thrown(() => reader.end())).toBeUndefined();
    expect(seen).toEqual(["first"]);
  });

  test("many data lines of one event without its blank line count together", () => {
    const reader = new SseReader(() => {}, 100);
    reader.push(bytes("data: aaaaaaaaaaaaaaaaaaaa\n".repeat(4)));
    expectTooLarge(thrown(() => reader.push(bytes("data: aaaaaaaaaaaaaaaaaaaa\n".repeat(2)))), 100);
  });

  test("events and lines that are no SSE fields (an HTML page) hold nothing: a long stream of them never throws", () => {
    const seen: string[] = [];
    const reader = new SseReader((ev) => seen.push(ev.data), 100);
    for (let i = 0; i < 50; i++) reader.push(bytes(`data: event ${i}\n\n<p>no field at all, line ${i}</p>\n`));
    reader.end();
    expect(seen.length).toBe(50);
    expect(seen.at(-1)).toBe("event 49");
  });

  test("an event just within the bound is dispatched whole", () => {
    const seen: string[] = [];
    const reader = new SseReader((ev) => seen.push(ev.data), 100);
    reader.push(bytes("data: " + "y".repeat(40)));
    reader.push(bytes("y".repeat(50) + "\n\n"));
    expect(seen).toEqual(["y".repeat(90)]);
  });
});

describe("HeldEvent's bound (the Anthropic and Responses taps)", () => {
  test("complete events pass; a partial event held past the bound throws and is dropped", () => {
    const held = new HeldEvent(lastEventEnd, 3, 64);
    expect(text(held.push(bytes("event: a\ndata: {}\n\nevent: b\ndata: ")))).toBe("event: a\ndata: {}\n\n");
    expect(held.push(bytes("x".repeat(40)))).toHaveLength(0);
    expectTooLarge(thrown(() => held.push(bytes("x".repeat(20)))), 64);
    expect(held.size).toBe(0);
    expect(held.takeAll()).toHaveLength(0);
  });

  test("a first read that is one event over the bound, or whose rest after an event is, throws", () => {
    expectTooLarge(thrown(() => new HeldEvent(lastEventEnd, 3, 64).push(bytes("data: " + "x".repeat(64)))), 64);
    expectTooLarge(thrown(() => new HeldEvent(lastEventEnd, 3, 64).push(bytes("data: {}\n\ndata: " + "x".repeat(64)))), 64);
  });

  test("an event within the bound spread over reads is forwarded whole when it ends", () => {
    const held = new HeldEvent(lastEventEnd, 3, 64);
    expect(held.push(bytes("data: " + "z".repeat(30)))).toHaveLength(0);
    expect(text(held.push(bytes("z".repeat(20) + "\n\n")))).toBe("data: " + "z".repeat(50) + "\n\n");
  });
});
