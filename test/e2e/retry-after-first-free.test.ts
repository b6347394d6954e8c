/**
 * Tryout finding (routing): a final 429/503's Retry-After says when the first account is free (SPEC 2.4,
 * 6.3), and a provider's reset time is capped at 6 h like the cooldown it sets (SPEC 6.3). An upstream
 * `retry-after: 86400` on one account must not become the client's Retry-After when the gateway itself
 * holds that account for only 6 h, nor when another account it tried frees up in 30 s.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { accountsOf, providersAtFakePaths } from "../support/configs.ts";
import { postHi, startGateway, type TestGateway } from "../support/gateway.ts";
import { startFakeUpstream, type FakeReply, type ReceivedRequest } from "../support/fake-upstream.ts";

const YAML = `
${providersAtFakePaths(["p", "anthropic"], ["q", "anthropic"])}
${accountsOf(["a", "p", "KEY_A"], ["b", "p", "KEY_B"], ["solo", "q", "KEY_SOLO"])}
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A: "sk-test-aaaaaaaa", KEY_B: "sk-test-bbbbbbbb", KEY_SOLO: "sk-test-solo" }, fake: await startFakeUpstream() });
});
afterAll(async () => {
  await gw?.stop();
});

const dayLimited: FakeReply = { status: 429, headers: { "retry-after": "86400" }, json: { type: "error", error: { type: "rate_limit_error", message: "Rate limited" } } };
const unavailable: FakeReply = { status: 503, json: { type: "error", error: { type: "api_error", message: "service unavailable" } } };
const post = (model: string) => postHi(gw.url, model);

test("one account says wait a day (cooldown capped at 6 h), the other 503s (30 s cooldown): Retry-After is the 30 s, not 86400", async () => {
  gw.fake.handle((r: ReceivedRequest) => (r.headers["x-api-key"] === "sk-test-aaaaaaaa" ? dayLimited : unavailable));
  const res = await post("p/claude-x");
  expect([429, 503]).toContain(res.status);
  const ra = Number(res.headers.get("retry-after"));
  // The next request, a moment later, is told 30 s (every account cooling, the first free in 30 s).
  const again = await post("p/claude-x");
  const raAgain = Number(again.headers.get("retry-after"));
  expect(raAgain).toBeLessThanOrEqual(31);
  expect(ra).toBeGreaterThanOrEqual(25); // present: a missing header read as 0 passed the bound below
  expect(ra).toBeLessThanOrEqual(31);
});

test("a single account's retry-after of a day: the client's Retry-After is at most the 6 h the cooldown lasts", async () => {
  gw.fake.handle(() => dayLimited);
  const res = await post("q/claude-x");
  expect(res.status).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeLessThanOrEqual(6 * 3600);
});

test("both accounts 503 without a wait (30 s cooldown each after same-account retries): the final 503 carries Retry-After for the first to free up", async () => {
  gw.fake.handle(() => unavailable);
  const res = await post("p/claude-y");
  expect(res.status).toBe(503);
  const ra = Number(res.headers.get("retry-after"));
  expect(ra).toBeGreaterThanOrEqual(25);
  expect(ra).toBeLessThanOrEqual(31);
});

test("a 529 without any wait named (the account backs off 2 s): the final 429/503 still says when it is free", async () => {
  gw.fake.handle(() => ({ status: 529, json: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } } }));
  const res = await post("q/claude-529");
  expect([429, 503, 529]).toContain(res.status);
  expect(res.headers.get("retry-after")).toMatch(/^[12]$/);
});

test("an overloaded notice as the first event of a 200 stream (counted as a 503, then backoff): the final answer says when the account is free", async () => {
  const overloaded = 'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n';
  gw.fake.handle(() => ({ status: 200, headers: { "content-type": "text/event-stream" }, sse: overloaded }));
  const res = await post("q/claude-inband");
  expect([429, 503, 529]).toContain(res.status);
  const ra = Number(res.headers.get("retry-after"));
  expect(ra).toBeGreaterThanOrEqual(1);
  expect(ra).toBeLessThanOrEqual(31);
});

test("a 503 with Retry-After: 120 cools the account until then (capped at 6 h), not 30 s: the next request is told about 120 s and makes no call", async () => {
  gw.fake.handle(() => ({ ...unavailable, headers: { "retry-after": "120" } }));
  const first = await post("q/claude-wait");
  expect(first.status).toBe(503);
  expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(115);
  const calls = gw.fake.requests.length;
  const again = await post("q/claude-wait");
  expect(again.status).toBe(503);
  const ra = Number(again.headers.get("retry-after"));
  expect(ra).toBeGreaterThanOrEqual(100);
  expect(ra).toBeLessThanOrEqual(120);
  expect(gw.fake.requests.length).toBe(calls);
});
