/**
 * Found by a provider tryout (session 45; fixed that session): replies the upstream sent with HTTP 200 but the gateway
 * could not use (a stream that ends before any event, a body that is not JSON) count as "upstream 5xx"
 * toward the provider's circuit (SPEC 6.3: 10 consecutive 5xx from one provider → circuit open 5 min),
 * and every same-account retry counts too: three client requests for three models whose server (an
 * aggregator such as LiteLLM or OpenRouter, where each model has its own backend) answers 200 with an
 * empty stream (4 attempts each, 12 "5xx") open the circuit of the WHOLE provider, and the
 * next request for another model of that provider, which the server answers fine, gets 503 "Provider
 * oai is not being called until …: its circuit is open after consecutive upstream 5xx errors" without
 * the upstream being called. The upstream never sent a 5xx. (Seen in the tryout with a text/plain
 * stream, an HTML login page with 200, an OpenAI error body with 200 and an empty stream: each opened
 * the provider's circuit after three requests.) Likely in the attempt loop's failure recording
 * (pipeline/attempt-loop.ts → src/accounts/circuits.ts), which counts the gateway's own 502 for a
 * malformed 200 like an upstream 5xx.
 *
 * Expected: only what the provider answered with a 5xx (or a connection failure) counts toward its
 * circuit; the other model is served.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { fakeProviders } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(fakeProviders([["oai", "openai"]]));
  // The models "broken-…" answer 200 with an empty event stream; every other model answers normally.
  gw.fake.handle((req) => (req.model?.startsWith("broken") ? { sse: "" } : simpleReply("openai-chat", { text: "Served.", model: req.model }, req.stream)));
});
afterAll(async () => {
  gw?.fake.handle(undefined);
  await gw?.stop();
});

const chat = (model: string) =>
  fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model, stream: true, messages: [{ role: "user", content: "hi" }] }),
  });

test("three requests for models that answer 200 with an empty stream leave the provider's other models served", async () => {
  for (let i = 0; i < 3; i++) {
    const res = await chat(`oai/broken-${i}`);
    await res.text();
    expect(res.status).toBe(502);
  }
  const callsBefore = gw.fake.requests.length;
  const res = await chat("oai/healthy");
  const text = await res.text();
  expect([res.status, text.slice(0, 160)]).toEqual([200, expect.stringContaining("data: ")]);
  expect(text).toContain("Served.");
  expect(gw.fake.requests.length).toBe(callsBefore + 1);
});
