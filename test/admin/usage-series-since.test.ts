/**
 * `GET /admin/api/usage?since=…&bucket=…` answers rows (and `cost`) for the requests since `since`;
 * until 2026-12-07 its series' first bucket started at the bucket boundary
 * before `since` (buckets "start at multiples of their width") and counts every request of that whole
 * bucket, those older than `since` included. So for one range the charts and the table disagreed.
 *
 * What a user noticed: on the dashboard's Usage page, "7 days" (bucket 1d in the browser's time
 * zone), the requests and cost bars added up to more than the table's Requests and Cost columns and the
 * Overview's cost tile: the first day's bar also held the requests of that day before the range began
 * (up to 24 h of them); "1 day" (bucket 1h) up to an hour's. Seen: since=1h&bucket=1h,
 * series 8 requests / $0.0749 against rows 5 requests / $0.04395.
 *
 * Expected: the series' buckets add up to the rows (here 1 request, $0.0054: the request inside the
 * range): the first bucket counts only from `since` (src/store/sqlite and postgres usage.ts usageSeries).
 * Before the fix: the series added up to 2 requests and $0.0108: the request stamped before `since` (midway
 * between the first day's bucket start and `since`) was in the first bucket.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";
import { simpleReply } from "../support/fake-upstream.ts";
import { ShiftedClock } from "../support/shifted-clock.ts";


const DAY = 86_400_000;
const clock = new ShiftedClock();
let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(
    `${providersAtFake(["oai", "openai"])}
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
settings:
  pricing:
    oai/gpt-test: { input: 300, output: 300 }
`,
    { clock },
  );
  // 11 + 7 tokens at $300 per million in and out: $0.0054 a request
  gw.fake.handle((req) => simpleReply(req.format!, { text: "ok", model: req.model, usage: { input: 11, output: 7 } }, req.stream));
});
afterAll(async () => {
  await gw?.stop();
});

const ask = async () => {
  const r = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "oai/gpt-test", messages: [{ role: "user", content: "hi" }] }),
  });
  expect(r.status).toBe(200);
  await r.text();
};

test("since=7d&bucket=1d: the series' buckets add up to the rows (one request in range, $0.0054), not also the request before the range in the first day's bucket", async () => {
  const now = Date.now();
  const since = now - 7 * DAY;
  const firstBucket = Math.floor(since / DAY) * DAY; // UTC day (tz_offset=0)
  // A request between the first bucket's start and `since`: before the range, inside its first bucket.
  // (Midway, so that this holds wherever the test's time of day falls, except within seconds of midnight.)
  clock.elapsed = Math.floor((firstBucket + since) / 2) - now;
  await ask();
  clock.elapsed = 0;
  await ask();
  let u: { rows: { requests: number; costUsd?: number }[]; series: { buckets: { requests: number; costUsd: number }[] } } | undefined;
  for (const end = Date.now() + 5000; Date.now() < end; await Bun.sleep(50)) {
    u = (await (await fetch(`${gw.url}/admin/api/usage?since=7d&bucket=1d&tz_offset=0`)).json()) as typeof u;
    if (u!.rows.reduce((a, r) => a + r.requests, 0) >= 1) break;
  }
  const rows = u!.rows.reduce((a: { requests: number; costUsd: number }, r) => ({ requests: a.requests + r.requests, costUsd: a.costUsd + (r.costUsd ?? 0) }), { requests: 0, costUsd: 0 });
  const series = u!.series.buckets.reduce((a, b) => ({ requests: a.requests + b.requests, costUsd: a.costUsd + b.costUsd }), { requests: 0, costUsd: 0 });
  expect(rows).toEqual({ requests: 1, costUsd: 0.0054 });
  expect({ requests: series.requests, costUsd: Number(series.costUsd.toFixed(10)) }).toEqual(rows);
});
