/**
 * A reply driver that throws before the commit point (a decoder bug on a reply it did not expect) is
 * the gateway's own failure, not the upstream's (pipeline/commit.ts `gatewayFailed`, classify.ts row
 * `gateway_error`; README "Not done yet" until this was fixed, when it was reported as "Upstream …
 * broke the connection before answering", retried on the same account and put the account on a 30 s
 * cooldown). The client gets a 500 in its own format with no stack or exception text, nothing is
 * retried, the account's health is untouched, and the route trace's attempt names the gateway's error.
 * The bug is made by wrapping the Chat decoder so that it throws on a reply holding "BUG".
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { codecFor } from "../../formats/index.ts";
import type { FormatCodec } from "../../formats/codec.ts";
import { gatewaySuite } from "../support/gateway-suite.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const suite = gatewaySuite();
const chat = codecFor("openai-chat") as { -readonly [K in keyof FormatCodec]: FormatCodec[K] };
const realCreateDecoder = chat.createDecoder;
const realDecodeResponse = chat.decodeResponse;
const dec = new TextDecoder();

beforeEach(() => {
  chat.createDecoder = (opts, emit) => {
    const d = realCreateDecoder(opts, emit);
    return new Proxy(d, {
      get(target, key) {
        if (key === "push")
          return (chunk: Uint8Array) => {
            if (dec.decode(chunk).includes("BUG")) throw new TypeError("Cannot read properties of undefined (reading 'index')");
            return target.push(chunk);
          };
        const v = Reflect.get(target, key, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  };
});
afterEach(async () => {
  chat.createDecoder = realCreateDecoder;
  chat.decodeResponse = realDecodeResponse;
  for (const a of ["oai-1"]) await suite.gw.app.store.clearCooldown(a);
  suite.gw.app.registry.loadState(await suite.gw.app.store.loadAccountState());
});

describe("a reply driver that throws before the commit point", () => {
  test("Anthropic client, OpenAI provider (Chat, translated): a 500 api_error in Anthropic's shape, one upstream call, no cooldown, the trace blames the gateway", async () => {
    suite.gw.fake.handle((r) => simpleReply("openai-chat", { text: "a BUG in the decoder" }, r.stream));
    const res = await fetch(`${suite.gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
      body: JSON.stringify({ model: "oai/gpt-x", max_tokens: 50, stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body).toEqual({ type: "error", error: { type: "api_error", message: "The gateway failed while reading the reply of upstream oai." } });
    expect(JSON.stringify(body)).not.toContain("TypeError");
    expect(suite.gw.fake.requests.length).toBe(1);
    const state = await suite.gw.app.store.loadAccountState();
    expect(state.cooldowns.filter((c) => c.accountId === "oai-1")).toEqual([]);
    const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts).toHaveLength(1);
    expect(trace.attempts[0]).toMatchObject({ accountId: "oai-1", status: 200, classification: "gateway_error" });
    expect(trace.attempts[0].error).toBe(
      "The gateway failed while reading the reply of upstream oai (its own error, not the upstream's: TypeError: Cannot read properties of undefined (reading 'index'))",
    );
  });

  test("a Chat client (Chat-compatible provider, read through the hub) gets the same 500 in Chat's error shape", async () => {
    suite.gw.fake.handle((r) => simpleReply("openai-chat", { text: "a BUG in the decoder" }, r.stream));
    const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/glm-x", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body.error.message).toBe("The gateway failed while reading the reply of upstream chat.");
    expect(suite.gw.fake.requests.length).toBe(1);
  });

  test("the same reply without the bug is served (the wrapper only throws on it)", async () => {
    suite.gw.fake.handle((r) => simpleReply("openai-chat", { text: "all fine" }, r.stream));
    const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/glm-x", stream: true, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('"content":"all "');
    expect(text).toContain('"finish_reason":"stop"');
  });
});

describe("a whole reply's decoder that throws something other than a FormatError", () => {
  test("a JSON reply (Chat client, Chat-compatible provider, decoded through the hub): the gateway's own 500, not an upstream 502; one call, no cooldown, the trace blames the gateway", async () => {
    // WholeBodyDriver used to take any throw of decodeResponse for the upstream's fault: a 502 "The
    // upstream reply could not be read.", retried on the same account and cooled down.
    chat.decodeResponse = (body, opts) => {
      if (JSON.stringify(body).includes("BUG")) throw new TypeError("Cannot read properties of undefined (reading 'message')");
      return realDecodeResponse(body, opts);
    };
    suite.gw.fake.handle((r) => simpleReply("openai-chat", { text: "a BUG in the decoder" }, r.stream));
    const res = await fetch(`${suite.gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "chat/glm-x", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(500);
    const body = (await res.json()) as any;
    expect(body.error.message).toBe("The gateway failed while reading the reply of upstream chat.");
    expect(JSON.stringify(body)).not.toContain("TypeError");
    expect(suite.gw.fake.requests.length).toBe(1);
    expect(suite.gw.fake.requests[0].stream).toBe(false);
    const trace = (await suite.gw.app.store.getTrace(res.headers.get("x-switchyard-route-id")!))!;
    expect(trace.attempts).toHaveLength(1);
    expect(trace.attempts[0]).toMatchObject({ status: 200, classification: "gateway_error" });
    expect(trace.attempts[0].error).toContain("TypeError: Cannot read properties of undefined (reading 'message')");
  });
});
