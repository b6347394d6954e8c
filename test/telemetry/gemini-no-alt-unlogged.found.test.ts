/**
 * Found by tryotel44 (report-only): a Gemini `:streamGenerateContent` call without `?alt=sse` is answered
 * a 400 by src/http/server.ts geminiApi before the request reaches the gateway, so it gets no request log
 * line (SPEC O-4: one JSON line per request), no `switchyard_requests_total` count (O-3) and no span (O-5),
 * where the same client's `:generateContent` with a bad body (also a 400) gets all three. Fails now: no
 * line and no count.
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

const BODY = JSON.stringify({ contents: [{ role: "user", parts: [{ text: "hi" }] }] });

test("a streamGenerateContent without alt=sse (refused with a 400) is logged and counted like any other refused request", async () => {
  const res = await fetch(`${gw.url}/v1beta/models/gem/gemini-2.5-flash:streamGenerateContent`, { method: "POST", headers: { "content-type": "application/json" }, body: BODY });
  expect(res.status).toBe(400);
  expect(await res.text()).toContain("alt=sse");
  const lines = gw.logs.map((l) => JSON.parse(l) as { msg?: string; status?: number; endpoint?: string });
  expect(lines.filter((l) => l.msg === "request").map((l) => [l.endpoint, l.status])).toEqual([["gemini", 400]]);
  const metrics = await (await fetch(`${gw.url}/metrics`)).text();
  expect(metrics).toContain('switchyard_requests_total{endpoint="gemini",provider="none",outcome="rejected"} 1');
});
