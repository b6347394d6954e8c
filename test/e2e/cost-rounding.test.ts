/**
 * A request's cost and a key's USD budget use as a script reads them: 12 significant digits, not the
 * binary floating-point noise of a sum or product of prices (newuser12a's tryout, G8: the request's log
 * line and span said `"costUsd":0.19999999999999998`, `GET /admin/api/keys` `"used":
 * 0.19999999999999998`, and an alert's `at` carried a fraction of a millisecond). Priced here at
 * $300 per million tokens in and out, the fake upstream's 11 + 7 tokens cost 18 × 0.0003 = $0.0054,
 * which binary floating point computes as 0.005399999999999999.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { DEFAULT_YAML, startGateway, type TestGateway } from "../support/gateway.ts";
import { simpleReply } from "../support/fake-upstream.ts";

const KEY = "sy-test-cost-rounding-000001";
const ADMIN = "sy-test-cost-rounding-admin1";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(`${DEFAULT_YAML}
server: { require_api_key: true }
keys:
  - { name: spender, key: ${KEY}, limits: { budgets: [{ window: 1d, usd: 0.01 }] } }
  - { name: admin, key: ${ADMIN}, scopes: [admin] }
settings:
  pricing:
    oai/gpt-test: { input: 300, output: 300 }
`);
  gw.fake.handle((req) => simpleReply(req.format!, { text: "ok", model: req.model, usage: { input: 11, output: 7 } }, req.stream));
});
afterAll(async () => {
  await gw?.stop();
});

test("the request's log line, its usage row and the key's budget use read $0.0054; the budget alerts' used $0.0108 and their time whole milliseconds", async () => {
  expect((11 * 300 + 7 * 300) * (1 / 1_000_000)).toBe(0.005399999999999999); // the noise the gateway must not pass on
  const ask = async () => {
    const r = await fetch(`${gw.url}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(r.status).toBe(200);
    await r.text();
  };
  await ask();
  const line = gw.logs.map((l) => JSON.parse(l)).find((l) => l.costUsd !== undefined);
  expect(line.costUsd).toBe(0.0054);
  const admin = { authorization: `Bearer ${ADMIN}` };
  const calls = (await (await fetch(`${gw.url}/admin/api/calls?limit=1`, { headers: admin })).json()) as { calls: { costUsd: number }[] };
  expect(calls.calls[0]!.costUsd).toBe(0.0054);

  await ask(); // 2 × 0.0054 = 0.0108 of 0.01: past 80 %, 95 % and all of it, one alert (the used-up one)
  const keys = (await (await fetch(`${gw.url}/admin/api/keys`, { headers: admin })).json()) as { keys: { name: string; use?: { budgets: { used: number }[] } }[] };
  expect(keys.keys.find((k) => k.name === "spender")!.use!.budgets[0]!.used).toBe(0.0108);
  let alerts: { at: number; detail: { used: number; threshold: number; passed?: number[] } }[] = [];
  const read = async () => ((await (await fetch(`${gw.url}/admin/api/alerts`, { headers: admin })).json()) as { alerts: typeof alerts }).alerts;
  for (const end = Date.now() + 10_000; alerts.length < 1 && Date.now() < end; await Bun.sleep(50)) alerts = await read();
  await Bun.sleep(300); // another alert of the same request, were there one, is listed by now
  alerts = await read();
  expect(alerts.map((a) => [a.detail.threshold, a.detail.used, a.detail.passed, Number.isInteger(a.at)])).toEqual([[1, 0.0108, [0.8, 0.95], true]]);
});
