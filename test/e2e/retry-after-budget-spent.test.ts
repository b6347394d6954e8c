/**
 * A final 429/503's Retry-After when `max_attempts` (SPEC 6.1) ends the request while an account that
 * may serve now was left untried (SPEC 2.4, 6.3: Retry-After says when an account is free). It named the
 * end of the earliest cooldown of the accounts tried (30 s here) though a retry would be served at once
 * by the untried account; now it is 1 s. When every account is cooling, it is still the earliest end.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { accountsOf, providersAtFakePaths } from "../support/configs.ts";
import { postHi, startGateway, type TestGateway } from "../support/gateway.ts";
import { startFakeUpstream, type FakeReply } from "../support/fake-upstream.ts";

const YAML = `
${providersAtFakePaths(["p", "anthropic"])}
${accountsOf(["a", "p", "KEY_A"], ["b", "p", "KEY_B"], ["c", "p", "KEY_C"])}
settings:
  max_attempts: 2
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb", KEY_C: "sk-test-cccccccc" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const limited: FakeReply = { status: 429, headers: { "retry-after": "30" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
const post = () => postHi(gw.url, "p/claude-x");
const keysCalled = () => new Set(gw.fake.requests.map((r) => r.headers["x-api-key"]));

test("max_attempts spent with an eligible account untried: Retry-After 1 (a retry is served now), not the 30 s cooldown of the accounts tried", async () => {
  gw.fake.handle(() => limited);
  const res = await post();
  expect(res.status).toBe(429);
  // Two accounts tried (each cooling 30 s), the third not tried and free.
  expect({ calls: gw.fake.requests.length, accounts: keysCalled().size }).toEqual({ calls: 2, accounts: 2 });
  expect(res.headers.get("retry-after")).toBe("1");
});

test("then every account cooling: Retry-After is the earliest cooldown's end (about 30 s)", async () => {
  gw.fake.handle(() => limited);
  // The retry is served by the account left untried (it answers 429 too): now all three are cooling.
  const res = await post();
  expect(res.status).toBe(429);
  expect({ calls: gw.fake.requests.length, accounts: keysCalled().size }).toEqual({ calls: 3, accounts: 3 });
  const ra = Number(res.headers.get("retry-after"));
  expect(ra).toBeGreaterThanOrEqual(25);
  expect(ra).toBeLessThanOrEqual(31);
  // And a request that finds them all cooling makes no call and says the same.
  const again = await post();
  expect(again.status).toBe(429);
  expect(gw.fake.requests.length).toBe(3);
  const raAgain = Number(again.headers.get("retry-after"));
  expect(raAgain).toBeGreaterThanOrEqual(25);
  expect(raAgain).toBeLessThanOrEqual(31);
});

test("max_attempts spent on a combo's first target while the next target may serve: Retry-After 1", async () => {
  const combo = await startGateway(
    `
providers:
  - { id: p, kind: anthropic, base_url: "{{FAKE}}/p" }
  - { id: q, kind: anthropic, base_url: "{{FAKE}}/q" }
accounts:
  - { id: a, provider: p, api_key: env:KEY_A }
  - { id: b, provider: p, api_key: env:KEY_B }
  - { id: c, provider: q, api_key: env:KEY_C }
combos:
  - name: pq
    targets: [{ model: p/claude-x }, { model: q/claude-x }]
settings:
  max_attempts: 2
`,
    { env: { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb", KEY_C: "sk-test-cccccccc" }, fake: await startFakeUpstream() },
  );
  try {
    combo.fake.handle(() => limited);
    const res = await fetch(`${combo.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "pq", max_tokens: 20, messages: [{ role: "user", content: "hi" }] }) });
    expect(res.status).toBe(429);
    expect(combo.fake.requests.map((r) => r.path.split("/")[1])).toEqual(["p", "p"]);
    expect(res.headers.get("retry-after")).toBe("1");
  } finally {
    await combo.stop();
  }
});
