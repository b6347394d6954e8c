/**
 * A non-streamed upstream reply (JSON) larger than the gateway holds (pipeline/whole-reply-bound.ts
 * MAX_WHOLE_REPLY_BYTES, README "Not done yet" until this was fixed), through the real gateway: a base
 * URL serving an endless body as `application/json` is a failed attempt (a whole reply is read to its
 * end before the commit point), retried and served by the retry when it answers, else a 502 in the
 * client's format naming the cause; never a truncated reply, never read until the pre-commit deadline.
 */
import { describe, expect, test } from "bun:test";
import { MAX_WHOLE_REPLY_BYTES } from "../../pipeline/whole-reply-bound.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";

const suite = gatewaySuite();

/** Per-test timeout, ms: each attempt moves 64 MiB through the gateway (seconds on a loaded 2-core machine). */
const SLOW = 120_000;

/** A JSON body that never ends: an open string, then 64 KiB pieces of it for as long as the gateway reads. */
const endless = { text: '{"id":"chatcmpl-h","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"', endless: "x".repeat(64 * 1024) };
const tooLarge = `The upstream sent a reply larger than ${MAX_WHOLE_REPLY_BYTES} bytes; the gateway does not hold a non-streamed reply larger than that.`;

describe("a non-streamed upstream reply that never ends (a base URL serving a huge JSON body)", () => {
  test("native Chat: the failed attempt is retried, and the retry's reply is what the client gets", async () => {
    suite.gw.fake.enqueue(endless);
    const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-x", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as any).choices[0].message.content).toBe("Hello from the fake upstream.");
    expect(suite.gw.fake.requests.length).toBe(2);
  }, SLOW);

  test("Messages client, Anthropic provider that always sends it: a 502 in Anthropic's error shape naming the cause", async () => {
    suite.gw.fake.handle(() => ({ ...endless, text: '{"id":"msg_h","type":"message","content":[{"type":"text","text":"' }));
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "anth/claude-x", max_tokens: 50, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(502);
    expect(await res.json()).toEqual({ type: "error", error: { type: "api_error", message: tooLarge } });
    expect(suite.gw.fake.requests.length).toBeGreaterThan(1);
    const line = suite.gw.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === "request").at(-1);
    expect(line.status).toBe(502);
  }, SLOW);
});
