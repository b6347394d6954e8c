/**
 * Found by a provider tryout (session 45; fixed that session): a non-streamed Gemini reply whose `usageMetadata` carries a
 * counter as a string (`"promptTokenCount": "11"`: proto3's JSON mapping writes 64-bit integers as
 * strings, and a proxy or Gemini-compatible server that re-serialises the reply can do so) is refused whole: the client gets 502 "The upstream reply
 * is not a Gemini generateContent response: Invalid type: Expected number but received \"11\"." after 4
 * attempts on the account, which then cools down. That happens even on the native pair (Gemini client →
 * gemini provider, which passes replies through). The schema (formats/gemini/schema.ts, usage fields
 * `v.nullish(v.number())`) fails the reply over its usage counters. The same reply streamed is served
 * (usage estimated), and a string counter in an Anthropic or OpenAI reply is ignored (usage estimated):
 * only the Gemini whole-body lane refuses.
 *
 * Expected: the reply is served (its text, finish reason), the counter read as a number or left out
 * with the usage estimated, and the upstream called once.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["gem", "gemini"]]));
  gw.fake.handle(() => ({
    json: {
      candidates: [{ content: { role: "model", parts: [{ text: "Counted in strings." }] }, finishReason: "STOP", index: 0 }],
      usageMetadata: { promptTokenCount: "11", candidatesTokenCount: "4", totalTokenCount: "15" },
      modelVersion: "gemini-test",
    },
  }));
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

describe("a non-streamed Gemini reply with usage counters as strings", () => {
  test("Gemini client (native pair): the reply is served, one upstream call", async () => {
    gw.fake.requests.length = 0;
    const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-test:generateContent`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] }),
    });
    const body: any = await res.json();
    expect([res.status, body.candidates?.[0]?.content?.parts?.[0]?.text ?? body.error?.message]).toEqual([200, "Counted in strings."]);
    expect(gw.fake.requests.length).toBe(1);
  });

  test("Chat client (translated): the reply is served, one upstream call", async () => {
    gw.fake.requests.length = 0;
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gem/gemini-test-2", messages: [{ role: "user", content: "hi" }] }),
    });
    const body: any = await res.json();
    expect([res.status, body.choices?.[0]?.message?.content ?? body.error?.message]).toEqual([200, "Counted in strings."]);
    expect(gw.fake.requests.length).toBe(1);
    // the numeric strings are read as the counts they are
    expect([body.usage?.prompt_tokens, body.usage?.completion_tokens]).toEqual([11, 4]);
  });

  test("a counter that is no count (\"eleven\", an object) is ignored: the reply is served, its usage estimated", async () => {
    gw.fake.requests.length = 0;
    gw.fake.handle(() => ({
      json: {
        candidates: [{ content: { role: "model", parts: [{ text: "Counted badly." }] }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: "eleven", candidatesTokenCount: { n: 4 }, totalTokenCount: "-1" },
      },
    }));
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "gem/gemini-test-3", messages: [{ role: "user", content: "hi" }] }),
    });
    const body: any = await res.json();
    expect([res.status, body.choices?.[0]?.message?.content ?? body.error?.message]).toEqual([200, "Counted badly."]);
    expect(gw.fake.requests.length).toBe(1);
    expect(body.usage?.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage?.completion_tokens).toBeGreaterThan(0);
  });
});
