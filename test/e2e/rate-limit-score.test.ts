/**
 * The `scored` account strategy after a 429 and after a 500, through the real gateway (SPEC A-3, 6.3):
 * two providers of two accounts each, a1 before a2 and b1 before b2 by priority. A 429 cools a1 (its
 * Retry-After) and a2 serves; once the cooldown has ended, a new conversation goes to a1 again: the rate
 * limit was the cooldown's business. Until 2026-12-07 it also counted as a failure in a1's decayed
 * success rate (half-life 5 minutes), so new conversations went to a2 for minutes after. A 500 still
 * counts: b1 stays behind b2 after its 30 s cooldown.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Clock } from "../../pipeline/ports.ts";
import { realClock } from "../../src/clock.ts";
import type { ReceivedRequest } from "../support/fake-upstream.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const ENV = { K1: "sk-score-a-one", K2: "sk-score-a-two", K3: "sk-score-b-one", K4: "sk-score-b-two" };
const NAMES: Record<string, string> = { [ENV.K1]: "a1", [ENV.K2]: "a2", [ENV.K3]: "b1", [ENV.K4]: "b2" };
const who = (r: ReceivedRequest) => NAMES[r.headers["x-api-key"] ?? ""] ?? "?";
/** The real clock, moved forward by `shift` (ms) when the test says so. */
const clock: Clock & { shift: number } = { shift: 0, now: () => Date.now() + clock.shift, sleep: realClock.sleep };
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `
${providersAtFake(["p", "anthropic"], ["q", "anthropic"])}
accounts:
  - { id: a1, provider: p, api_key: env:K1, priority: 1 }
  - { id: a2, provider: p, api_key: env:K2, priority: 2 }
  - { id: b1, provider: q, api_key: env:K3, priority: 1 }
  - { id: b2, provider: q, api_key: env:K4, priority: 2 }
`,
    { env: ENV, clock },
  );
});
afterAll(() => gw?.stop());

/** One request of a new conversation (its own first message, so no binding steers it): who was tried. */
async function ask(model: string, text: string): Promise<string[]> {
  const from = gw.fake.requests.length;
  const res = await fetch(`${gw.url}/v1/messages`, {
    method: "POST",
    headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" },
    body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: text }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
  return gw.fake.requests.slice(from).map(who);
}

// The first account's first reply comes after its cooldown, so no latency of its own is compared with
// the second's (a local fake's few milliseconds differ at random, and the scored formula weighs their ratio).
test("after a 429 whose cooldown ended, a new conversation goes to the first account again", async () => {
  gw.fake.enqueue({ status: 429, headers: { "retry-after": "20" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } });
  expect(await ask("p/claude-x", "one")).toEqual(["a1", "a2"]);
  expect(await ask("p/claude-x", "two")).toEqual(["a2"]); // a1 cooling down
  clock.shift += 60_000; // the cooldown is over; a failure then would still weigh 87 %
  expect(await ask("p/claude-x", "three")).toEqual(["a1"]);
});

test("after a 500 whose cooldown ended, new conversations still go to the second account for minutes", async () => {
  gw.fake.enqueue({ status: 500, json: { type: "error", error: { type: "api_error", message: "boom" } } });
  expect(await ask("q/claude-x", "one")).toEqual(["b1", "b2"]);
  clock.shift += 60_000; // past its 30 s cooldown
  expect(await ask("q/claude-x", "two")).toEqual(["b2"]);
  clock.shift += 4 * 60_000;
  expect(await ask("q/claude-x", "three")).toEqual(["b2"]);
});
