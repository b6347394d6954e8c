/**
 * What the keep-alive sweep (pipeline/keep-alive-bound.ts) counts as an upstream read without content:
 * only reads made of keep-alives (Anthropic's ping event, SSE comments, blank lines), in any framing;
 * a read of content, however short, counts as content. The sweep itself is tested through the gateway
 * (test/e2e/pings-after-commit.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { endsAnEvent, isKeepAlive, KEEP_ALIVE_MAX_BYTES, keepAliveOnlyError, sweepPeriodMs } from "../../pipeline/keep-alive-bound.ts";

const bytes = (s: string) => new TextEncoder().encode(s);

describe("isKeepAlive", () => {
  test("keep-alives: Anthropic's ping (with and without the space, LF or CRLF), comments of every server, blank lines, several in one read", () => {
    for (const s of [
      'event: ping\ndata: {"type": "ping"}\n\n',
      'event: ping\ndata: {"type":"ping"}\n\n',
      'event: ping\r\ndata: {"type": "ping"}\r\n\r\n',
      ": keep-alive\n\n",
      ": OPENROUTER PROCESSING\n\n",
      ": ping - 2025-01-01 00:00:00.000000+00:00\r\n\r\n",
      ":\n\n",
      "\n",
      'event: ping\ndata: {"type": "ping"}\n\n: keep-alive\n\n',
      // a ping split across reads: each half is one line of it
      "event: ping\n",
      'data: {"type": "ping"}\n\n',
    ]) {
      expect([s, isKeepAlive(bytes(s))]).toEqual([s, true]);
    }
  });

  test("content, however short, and anything else: not keep-alives", () => {
    for (const s of [
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
      'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}\n\n',
      'data: {"choices":[{"delta":{"content":"a"}}]}\n\n',
      "data: [DONE]\n\n",
      'event: ping\ndata: {"type": "ping"}\n\nevent: message_stop\n',
      "event: pin",
      'event: ping\ndata: {"type": "ping", "x": 1}\n\n',
      ": keep-alive\n\ndata: {}\n\n",
    ]) {
      expect([s, isKeepAlive(bytes(s))]).toEqual([s, false]);
    }
  });

  test("the longest keep-alive above fits under the length past which a read is content without a look", () => {
    expect(bytes(": ping - 2025-01-01 00:00:00.000000+00:00\r\n\r\n").length).toBeLessThan(KEEP_ALIVE_MAX_BYTES);
  });
});

test("the sweep runs every second, a quarter of a short idle timeout", () => {
  expect(sweepPeriodMs(60_000)).toBe(1000);
  expect(sweepPeriodMs(1500)).toBe(375);
});

test("the in-band error: a timeout (504), the provider's idle timeout in seconds", () => {
  expect(keepAliveOnlyError(60_000)).toMatchObject({ kind: "timeout", status: 504, code: "upstream_idle_timeout", message: "The upstream stream sent no content, only keep-alive pings or empty events, for 60 s and was closed." });
});

test("endsAnEvent: a blank line in any framing ends an event; a piece of a long data line, or a line end alone, does not", () => {
  for (const s of ['data: {"choices":[{"index":0,"delta":{}}]}\n\n', "a\n\nb", "x\r\n\r\n", "x\r\r", "x\n\r\n", ": keep-alive\n\n"]) expect([s, endsAnEvent(bytes(s))]).toEqual([s, true]);
  for (const s of ['"x":"' + "a".repeat(5000), "data: {\"a\":1}\n", "x\r\n", "x\r", "", "\n"]) expect([s, endsAnEvent(bytes(s))]).toEqual([s, false]);
});
