/**
 * `GET /admin/api/usage` time series (SPEC 9.4 charts; contract in the admin API notes): every bucket
 * from `now − since` to now, zeros included, the requests of each bucket summed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway();
});
afterAll(() => gw?.stop());

const get = async (q: string) => {
  const r = await fetch(`${gw.url}/admin/api/usage${q}`);
  return { status: r.status, body: (await r.json()) as any };
};

describe("GET /usage series", () => {
  test("two requests land in the current bucket; the other buckets are zeros", async () => {
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${gw.url}/v1/messages`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "anth/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) });
      expect(r.status).toBe(200);
      await r.text();
    }
    const { status, body } = await get("?since=1h&bucket=1m");
    expect(status).toBe(200);
    const s = body.series;
    expect(s.bucketMs).toBe(60_000);
    expect(s.buckets.length).toBeGreaterThanOrEqual(60);
    expect(s.buckets.length).toBeLessThanOrEqual(61);
    for (let i = 1; i < s.buckets.length; i++) expect(s.buckets[i].t - s.buckets[i - 1].t).toBe(60_000);
    expect(s.buckets[0].t % 60_000).toBe(0);
    const total = s.buckets.reduce((n: number, b: { requests: number }) => n + b.requests, 0);
    expect(total).toBe(2);
    const last = s.buckets.at(-1);
    const prev = s.buckets.at(-2);
    expect(last.requests + prev.requests).toBe(2);
    expect(last.inputTokens + prev.inputTokens).toBe(22); // the fake upstream reports 11 input tokens per reply
    expect(body.rows.reduce((n: number, r: { requests: number }) => n + r.requests, 0)).toBe(2);
  });

  test("10 s buckets over the last 30 minutes (the dashboard's request rate) hold the same two requests", async () => {
    const { status, body } = await get("?since=30m&bucket=10s");
    expect(status).toBe(200);
    const s = body.series;
    expect(s.bucketMs).toBe(10_000);
    expect(s.buckets.length).toBeGreaterThanOrEqual(180);
    expect(s.buckets.length).toBeLessThanOrEqual(181);
    for (let i = 1; i < s.buckets.length; i++) expect(s.buckets[i].t - s.buckets[i - 1].t).toBe(10_000);
    expect(s.buckets.reduce((n: number, b: { requests: number }) => n + b.requests, 0)).toBe(2);
  });

  test("the default bucket gives at most about 60 buckets; a series too fine for its range is a 400", async () => {
    expect((await get("?since=24h")).body.series.bucketMs).toBe(3_600_000);
    expect((await get("?since=1h")).body.series.bucketMs).toBe(60_000);
    expect((await get("?since=7d")).body.series.bucketMs).toBe(86_400_000);
    const tooFine = await get("?since=30d&bucket=1m");
    expect(tooFine.status).toBe(400);
    expect(tooFine.body.error.message).toContain("buckets");
    const bad = await get("?bucket=2m");
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain("bucket must be 10s, 1m, 5m, 15m, 1h or 1d");
  });
});
