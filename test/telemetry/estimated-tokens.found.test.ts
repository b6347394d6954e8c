/**
 * Found by tryotel44 (report-only): a reply whose provider reported no usage is recorded with estimated
 * token counts (usage row `estimated: true`, SPEC O-1), but `/metrics` adds those estimates to
 * `switchyard_tokens_total`, whose HELP says "Tokens as the provider reported them", with nothing that
 * tells them apart. Fails now: the estimated counts appear in the counter.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(async () => {
  await gw?.stop();
});

// A Chat stream without a usage chunk (a provider that sends none): the gateway estimates the tokens.
const chunk = (delta: object, finish: string | null) =>
  `data: ${JSON.stringify({ id: "chatcmpl-1", object: "chat.completion.chunk", created: 1, model: "gpt-4o", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const SSE = chunk({ role: "assistant", content: "hello there, this reply has no usage at all" }, null) + chunk({}, "stop") + "data: [DONE]\n\n";

test("tokens a provider never reported (estimated) are not counted in switchyard_tokens_total as provider-reported", async () => {
  gw.fake.handle(() => ({ sse: SSE }));
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/gpt-4o", stream: true, messages: [{ role: "user", content: "say hello" }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  // the usage row says the numbers are estimates (SPEC O-1) ...
  gw.app.settle();
  const requestId = res.headers.get("x-request-id")!;
  let row: { estimated: boolean; usage: { outputTokens?: number } } | undefined;
  for (const end = Date.now() + 10_000; !row && Date.now() < end; await Bun.sleep(50)) {
    const body = (await (await fetch(`${gw.url}/admin/api/calls?limit=50`)).json()) as { calls: Array<{ requestId: string; estimated: boolean; usage: { outputTokens?: number } }> };
    row = body.calls.find((c) => c.requestId === requestId);
  }
  expect(row?.estimated).toBe(true);
  expect(row!.usage.outputTokens).toBeGreaterThan(0);
  // ... and the counter documented as "Tokens as the provider reported them" must not carry them
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  const tokenLines = metrics.split("\n").filter((l) => l.startsWith('switchyard_tokens_total{provider="oai",model="gpt-4o"'));
  expect(tokenLines).toEqual([]);
});
