/**
 * Found (report only): a request whose failed attempts of an unpriced model were billed (their usage
 * reported, UsageRecord.split) is counted as several unpriced requests. Each failed attempt's own usage
 * row (split = 2) carries `unpriced`, and usageSummary's `unpriced` sums that column over every row,
 * shares included, while `requests` counts only split < 2.
 *
 * What a user notices: GET /admin/api/usage?by=key (and the Usage page's Cost title by key, the
 * "no cost: N requests of this period used models without a price" line, the CSV/JSON download) says
 * one key made 1 request but "3 requests used models without a price" — for one request served by
 * house-model after two broken house-model streams (combo of three unpriced targets).
 *
 * (The admin API's description of `unpriced` was changed with the split to "Requests that served tokens
 * with a model that has no price, and billed failed attempts of such a model", but every place a user
 * reads the number still calls it requests: the Usage page's Cost title "3 requests used models without a
 * price", its "no cost: 3 requests of this period …" line, `switchyard usage`'s "$0.01 + 3 unpriced" with
 * the legend "unpriced: requests that used a model without a price", the CSV/JSON download.)
 *
 * Expected: by key { requests: 1, unpriced: 1 } (one request used models without a price).
 * Actual:   by key { requests: 1, unpriced: 3 } (SQLite and PostgreSQL alike).
 * Likely in src/store/sqlite/usage.ts usageSummary (`COALESCE(SUM(unpriced), 0)`) and
 * src/store/postgres/usage.ts (`COUNT(*) FILTER (WHERE unpriced)`): not restricted to isRequestSql().
 */
import { describe, expect, test } from "bun:test";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/types.ts";
import { postgresForFile, tempDir, usage } from "./helpers.ts";

const pg = postgresForFile();
const clock = { now: () => Date.parse("2026-12-08T01:00:00Z"), sleep: (ms: number) => Bun.sleep(ms) };
const T = 1_800_000_000_000;

/** One request: two broken house-model streams billed (usage reported), then house-model served; no price anywhere. */
const rec: UsageRecord = usage({
  requestId: "req-unpriced",
  ts: T + 3,
  requestedModel: "mix",
  providerId: "house",
  model: "house-model",
  accountId: "house-key",
  keyName: "alice",
  usage: { inputTokens: 30, outputTokens: 3 },
  unpriced: true,
  attempts: 3,
  fallback: true,
  split: {
    served: { usage: { inputTokens: 10, outputTokens: 1 }, unpriced: true },
    billed: [
      { providerId: "house", model: "house-model", accountId: "house-key", usage: { inputTokens: 10, outputTokens: 1 }, unpriced: true },
      { providerId: "house", model: "house-model", accountId: "house-key", usage: { inputTokens: 10, outputTokens: 1 }, unpriced: true },
    ],
  },
});

async function byKey(s: Store) {
  s.record(rec);
  await s.flush();
  return (await s.usageSummary({ sinceMs: T, by: "key" })).map((r) => ({ group: r.group, requests: r.requests, unpriced: r.unpriced, inputTokens: r.inputTokens }));
}

const EXPECTED = [{ group: "alice", requests: 1, unpriced: 1, inputTokens: 30 }];

describe("one request with two billed unpriced failed attempts counts as one unpriced request", () => {
  test("SQLite", async () => {
    const s = await openStore(undefined, tempDir(), undefined, () => {}, clock, () => {});
    try {
      expect(await byKey(s)).toEqual(EXPECTED);
    } finally {
      await s.close();
    }
  }, 30_000);

  test("PostgreSQL", async () => {
    const s = await openStore(await pg.database("unpriced_count"), tempDir(), undefined, () => {}, clock, () => {});
    try {
      expect(await byKey(s)).toEqual(EXPECTED);
    } finally {
      await s.close();
    }
  }, 60_000);
});
