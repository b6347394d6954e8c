/**
 * `GET /admin/api/usage` and `GET /admin/api/calls` with the dashboard's filters and time buckets
 * (SPEC 9.3, 9.4) through the real gateway: the buckets of the last hour count the requests just made,
 * filters by model, account and outcome narrow rows, series and calls alike, and bad parameters are
 * 400s naming them.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["p", "anthropic"])}
accounts:
  - id: a1
    provider: p
    api_key: env:KEY_A1
settings:
  flight_recorder: { enabled: true }
`;

let gw: TestGateway;
const ids: Record<string, string> = {};
beforeAll(async () => {
  gw = await startGateway(YAML, { env: { KEY_A1: "sk-test-account-one" } });
  const send = async (model: string) => {
    const res = await fetch(`${gw.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model, max_tokens: 20, messages: [{ role: "user", content: "hi" }] }),
    });
    await res.text();
    return res.headers.get("x-request-id")!;
  };
  ids.a1 = await send("p/claude-a");
  ids.a2 = await send("p/claude-a");
  gw.fake.enqueue({ status: 400, json: { type: "error", error: { type: "invalid_request_error", message: "no" } } });
  ids.b = await send("p/claude-b");
});
afterAll(async () => {
  await gw?.stop();
});

const get = async (path: string) => {
  const res = await fetch(`${gw.url}/admin/api${path}`);
  return { status: res.status, body: (await res.json()) as any };
};
const total = (buckets: Array<{ requests: number }>) => buckets.reduce((n, b) => n + b.requests, 0);

describe("GET /usage", () => {
  test("the last hour in one-minute buckets, every bucket present, the requests in the current one", async () => {
    const { status, body } = await get("/usage?since=1h");
    expect(status).toBe(200);
    expect(body.series.bucketMs).toBe(60_000);
    expect(body.series.buckets.length).toBeGreaterThanOrEqual(60);
    expect(body.series.buckets.length).toBeLessThanOrEqual(61);
    for (let i = 1; i < body.series.buckets.length; i++) expect(body.series.buckets[i].t - body.series.buckets[i - 1].t).toBe(60_000);
    expect(total(body.series.buckets)).toBe(3);
    expect(body.series.buckets.reduce((n: number, b: any) => n + b.errors, 0)).toBe(1);
    expect(body.series.buckets.reduce((n: number, b: any) => n + b.inputTokens, 0)).toBe(body.rows.reduce((n: number, r: any) => n + r.inputTokens, 0));
    expect(body.rows.map((r: any) => [r.group, r.requests, r.errors])).toEqual([
      ["p/claude-a", 2, 0],
      ["p/claude-b", 1, 1],
    ]);
  });

  test("a request no model served (the upstream refused it) has no usage to estimate: not counted as estimated, its call not marked so", async () => {
    const { body } = await get("/usage?since=1h");
    expect(body.rows.map((r: any) => [r.group, r.estimated])).toEqual([
      ["p/claude-a", 0],
      ["p/claude-b", 0],
    ]);
    const [call] = (await get("/calls?outcome=error")).body.calls;
    expect([call.requestId, call.estimated]).toEqual([ids.b, false]);
  });

  test("the default bucket for a day is an hour; a chosen bucket is used", async () => {
    expect((await get("/usage")).body.series).toMatchObject({ bucketMs: 3_600_000 });
    const five = (await get("/usage?since=1h&bucket=5m")).body.series;
    expect(five.bucketMs).toBe(300_000);
    expect(total(five.buckets)).toBe(3);
  });

  test("filters narrow rows and series", async () => {
    const a = (await get("/usage?since=1h&model=p/claude-a&by=account")).body;
    expect(a.filter).toEqual({ model: "p/claude-a" });
    expect(a.rows.map((r: any) => [r.group, r.requests])).toEqual([["a1", 2]]);
    expect(total(a.series.buckets)).toBe(2);
    const errors = (await get("/usage?since=1h&outcome=error")).body;
    expect(errors.rows.map((r: any) => r.group)).toEqual(["p/claude-b"]);
    expect(total(errors.series.buckets)).toBe(1);
    expect(total((await get("/usage?since=1h&account=nobody")).body.series.buckets)).toBe(0);
  });

  test("bad parameters are 400s naming them", async () => {
    for (const [q, param] of [["bucket=2m", "bucket"], ["outcome=nope", "outcome"], ["since=yesterday", "since"], ["model=", "model"]]) {
      const r = await get(`/usage?${q}`);
      expect({ q, status: r.status, param: r.body.error?.param }).toEqual({ q, status: 400, param });
    }
    // The field is named once at the start of the message, not twice ("by: by must …").
    expect((await get("/usage?by=nope")).body.error.message).toBe("by must be model, account, key, provider or instance");
    expect((await get("/usage?since=yesterday")).body.error.message).toBe("since must look like 30m, 24h or 7d (a whole number above 0 and s, m, h or d)");
    // an empty window is refused, not answered with nothing used (usage --since 0h listed nothing)
    for (const since of ["0h", "00m"]) {
      const zero = await get(`/usage?since=${since}`);
      expect({ status: zero.status, message: zero.body.error.message }).toEqual({ status: 400, message: "since must look like 30m, 24h or 7d (a whole number above 0 and s, m, h or d)" });
    }
    expect((await get("/usage?since=01h")).status).toBe(200);
    const tooMany = await get("/usage?since=30d&bucket=1m");
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.message).toBe("since 30d in buckets of 1m makes more than 2000 buckets; choose a wider bucket or a shorter since");
  });

  test("a since longer than 2000 days without a bucket (the CLI's usage --since 3000d) keeps its rows whole and its series to the newest 2000 days", async () => {
    const long = await get("/usage?since=3000d");
    expect(long.status).toBe(200);
    expect(long.body.rows.map((r: any) => [r.group, r.requests])).toEqual([
      ["p/claude-a", 2],
      ["p/claude-b", 1],
    ]);
    expect(long.body.series.bucketMs).toBe(86_400_000);
    expect(long.body.series.buckets.length).toBeLessThanOrEqual(2000);
    expect(total(long.body.series.buckets)).toBe(3);
    expect(long.body.series.to - long.body.series.from).toBeLessThanOrEqual(2000 * 86_400_000);
  });
});

describe("GET /calls", () => {
  test("filters by model and outcome; says which calls the flight recorder holds", async () => {
    const all = (await get("/calls?since=1h")).body.calls;
    expect(all.map((c: any) => c.requestId)).toEqual([ids.b, ids.a2, ids.a1]);
    expect(all.every((c: any) => c.recorded === true)).toBe(true);
    expect((await get("/calls?outcome=error")).body.calls.map((c: any) => c.requestId)).toEqual([ids.b]);
    expect((await get("/calls?model=claude-a&limit=1")).body.calls.map((c: any) => c.requestId)).toEqual([ids.a2]);
    expect((await get("/calls?account=a1&outcome=ok")).body.calls.length).toBe(2);
    const bad = await get("/calls?outcome=maybe");
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe("outcome");
  });

  test("a page at a time: older and newer cursors, the filter kept; bad cursors are 400s naming them", async () => {
    const first = (await get("/calls?limit=1")).body;
    expect(first.calls.map((c: any) => c.requestId)).toEqual([ids.b]);
    expect(first.newer).toBeUndefined();
    const second = (await get(`/calls?limit=1&before=${first.older}`)).body;
    expect(second.calls.map((c: any) => c.requestId)).toEqual([ids.a2]);
    const third = (await get(`/calls?limit=1&before=${second.older}`)).body;
    expect([third.calls.map((c: any) => c.requestId), third.older]).toEqual([[ids.a1], undefined]);
    expect((await get(`/calls?limit=1&after=${third.newer}`)).body.calls.map((c: any) => c.requestId)).toEqual([ids.a2]);
    // with a filter: model claude-a has two calls
    const a = (await get("/calls?limit=1&model=claude-a")).body;
    const a2 = (await get(`/calls?limit=1&model=claude-a&before=${a.older}`)).body;
    expect([a2.calls.map((c: any) => c.requestId), a2.older, typeof a2.newer]).toEqual([[ids.a1], undefined, "string"]);
    for (const [q, param] of [["before=yesterday", "before"], ["after=1.2.3", "after"], [`before=${first.older}&after=${first.older}`, "after"]]) {
      const r = await get(`/calls?${q}`);
      expect({ q, status: r.status, param: r.body.error.param }).toEqual({ q, status: 400, param });
    }
  });

  test("id: the call with that request id or route id only, wherever it is in the list; an unknown id finds none", async () => {
    const a1 = (await get(`/calls?limit=1&id=${ids.a1}`)).body;
    expect([a1.calls.map((c: any) => c.requestId), a1.older, a1.newer]).toEqual([[ids.a1], undefined, undefined]);
    const routeId = a1.calls[0].routeId as string;
    expect(routeId).toMatch(/^sy_/);
    expect((await get(`/calls?id=${routeId}`)).body.calls.map((c: any) => c.requestId)).toEqual([ids.a1]);
    // the other filters still apply
    expect((await get(`/calls?id=${ids.a1}&outcome=error`)).body.calls).toEqual([]);
    expect((await get("/calls?id=sy_nothing_like_it")).body.calls).toEqual([]);
    const bad = await get("/calls?id=");
    expect([bad.status, bad.body.error.param]).toEqual([400, "id"]);
  });
});
