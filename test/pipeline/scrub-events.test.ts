/**
 * In-band error events scrubbed (pipeline/scrub-events.ts, SPEC 2.4): only events the tap says are
 * errors change, each keeps its lines and framing, and output with nothing to scrub is returned as it
 * came (the same bytes or array, no copy); a content event saying "error" goes out byte for byte.
 */
import { describe, expect, test } from "bun:test";
import { scrubErrorBytes, scrubErrorEvents, scrubErrorText, scrubHubErrorEvent } from "../../pipeline/scrub-events.ts";
import { REDACTED } from "../../pipeline/scrub.ts";
import { hubError } from "../../formats/hub.ts";
import { passthroughDriver } from "../../pipeline/re-translate.ts";
import { createTap as anthropicTap } from "../../formats/anthropic-messages/tap.ts";
import { createTap as chatTap } from "../../formats/openai-chat/tap.ts";

const KEY = "plainsecretvalue1234";
const source = { secrets: () => [KEY] };
const utf8 = new TextEncoder();
/** The judge of in-band errors the format-free tests use: an `error` event, or JSON data with an `error` member. */
const errors = {
  isErrorEvent(event: string | undefined, data: string): boolean {
    if (event === "error") return true;
    try {
      return JSON.parse(data)?.error !== undefined;
    } catch {
      return false;
    }
  },
};

describe("scrubErrorText", () => {
  test("the error event is scrubbed, a text delta holding the key beside it is not; LF framing kept", () => {
    const delta = `event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"${KEY}"}}\n\n`;
    const error = (who: string) => `event: error\ndata: {"type":"error","error":{"type":"api_error","message":"bad key ${who}"}}\n\n`;
    expect(scrubErrorText(delta + error(KEY), [KEY], errors)).toBe(delta + error(REDACTED));
  });

  test("CRLF and CR framing kept; a data line other than the first is folded into it when the JSON changes", () => {
    const crlf = `event: error\r\ndata: {"error":{"message":"k ${KEY}"}}\r\n\r\n`;
    expect(scrubErrorText(crlf, [KEY], errors)).toBe(`event: error\r\ndata: {"error":{"message":"k ${REDACTED}"}}\r\n\r\n`);
    const cr = `data: {"error":{"message":"k ${KEY}"}}\r\r`;
    expect(scrubErrorText(cr, [KEY], errors)).toBe(`data: {"error":{"message":"k ${REDACTED}"}}\r\r`);
    const split = `event: error\ndata: {"error":\ndata: {"message":"k ${KEY}"}}\nid: 7\n\n`;
    expect(scrubErrorText(split, [KEY], errors)).toBe(`event: error\ndata: {"error":{"message":"k ${REDACTED}"}}\nid: 7\n\n`);
  });

  test("a key the upstream escaped (\\u…) is found in the parsed string; data that is not JSON is scrubbed as text", () => {
    const escaped = `data: {"error":{"message":"k ${KEY.replace("s", "\\u0073")}"}}\n\n`;
    expect(scrubErrorText(escaped, [KEY], errors)).toBe(`data: {"error":{"message":"k ${REDACTED}"}}\n\n`);
    expect(scrubErrorText(`event: error\ndata: oops ${KEY}\n\n`, [KEY], errors)).toBe(`event: error\ndata: oops ${REDACTED}\n\n`);
  });

  test("credential shapes are scrubbed without a known secret", () => {
    expect(scrubErrorText(`data: {"error":{"message":"Incorrect API key provided: sk-ant-api03-AAAAAAAAAAAAAAAAAAAA"}}\n\n`, [], errors)).toBe(`data: {"error":{"message":"Incorrect API key provided: ${REDACTED}"}}\n\n`);
  });
});

describe("outputs returned as they came when nothing changes", () => {
  test("bytes: the same array", () => {
    const bytes = utf8.encode(`event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n`);
    expect(scrubErrorBytes(bytes, source, errors)).toBe(bytes);
    const leaked = utf8.encode(`event: error\ndata: {"type":"error","error":{"message":"${KEY} é"}}\n\n`);
    expect(new TextDecoder().decode(scrubErrorBytes(leaked, source, errors))).toBe(`event: error\ndata: {"type":"error","error":{"message":"${REDACTED} é"}}\n\n`);
  });

  test("events: the same array, or a copy with only the error event replaced", () => {
    const events = [
      { event: "response.output_text.delta", data: JSON.stringify({ type: "response.output_text.delta", delta: KEY }) },
      { event: "error", data: JSON.stringify({ type: "error", message: "fine" }) },
    ];
    expect(scrubErrorEvents(events, source, errors)).toBe(events);
    const leaked = [events[0]!, { event: "error", data: JSON.stringify({ type: "error", message: `k ${KEY}` }) }];
    const out = scrubErrorEvents(leaked, source, errors);
    expect(out).not.toBe(leaked);
    expect(out[0]).toBe(leaked[0]!);
    expect(out[1]).toEqual({ event: "error", data: JSON.stringify({ type: "error", message: `k ${REDACTED}` }) });
  });

  test("a hub error event: message, code and param scrubbed; the event itself when clean", () => {
    const clean = { type: "error" as const, error: hubError("overloaded", "Overloaded") };
    expect(scrubHubErrorEvent(clean, source)).toBe(clean);
    const leaked = { type: "error" as const, error: { ...hubError("authentication", `bad ${KEY}`), code: KEY, traceMessage: "kept" } };
    const out = scrubHubErrorEvent(leaked, source);
    expect(out.error).toEqual({ ...leaked.error, message: `bad ${REDACTED}`, code: REDACTED });
    expect(leaked.error.message).toBe(`bad ${KEY}`);
  });
});

describe("through a native lane's driver: the tap says which event is the error", () => {
  test("a text event saying \"error\" (and holding the key) goes out byte for byte; the error event after it is scrubbed", () => {
    const decode = (b: Uint8Array) => new TextDecoder().decode(b);
    // Anthropic: a text delta whose text says "error", with spacing of its own (a re-serialised one would lose it).
    const delta = `event: content_block_delta\ndata: {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "an error: ${KEY}"}}\n\n`;
    const error = (who: string) => `event: error\ndata: {"type":"error","error":{"type":"api_error","message":"bad key ${who}"}}\n\n`;
    const messages = passthroughDriver(anthropicTap({ family: "anthropic" }), undefined, source);
    expect(decode(messages.push(utf8.encode(delta + error(KEY))))).toBe(delta + error(REDACTED));
    // Chat: a content chunk saying "error" beside the error chunk, in one read.
    const chunk = `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"error ${KEY}"},"finish_reason":null}]}\n\n`;
    const failed = (who: string) => `data: {"error":{"message":"bad key ${who}","type":"server_error"}}\n\n`;
    const chat = passthroughDriver(chatTap({ family: "openai" }), undefined, source);
    expect(decode(chat.push(utf8.encode(chunk + failed(KEY))))).toBe(chunk + failed(REDACTED));
  });
});
