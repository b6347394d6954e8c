/**
 * Regression test: a request whose failed attempts of an unpriced model were billed (their usage
 * reported, UsageRecord.split) counted as several unpriced requests: usageSummary's `unpriced` summed
 * the column over every row, each failed attempt's own row (split = 2) included, while `requests`
 * counted only split < 2. GET /admin/api/usage?by=key (the Usage page's Cost title and "no cost: N
 * requests of this period used models without a price" line, `switchyard usage`'s "N unpriced" with its
 * legend "requests that used a model without a price", the downloads) said one key made 1 request of
 * which "3 requests used models without a price" (SQLite and PostgreSQL alike). Now each group counts
 * the requests with an unpriced row in it, once each: by key 1; by model a priced model's request whose
 * failed attempts were at an unpriced model counts under that model (beside its own requests).
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

/** Another request of bob's: served by a priced model after two billed failed attempts at house-model. */
const priced: UsageRecord = usage({
  requestId: "req-partly",
  ts: T + 5,
  requestedModel: "mix",
  providerId: "paid",
  model: "paid-model",
  accountId: "paid-key",
  keyName: "bob",
  usage: { inputTokens: 30, outputTokens: 3 },
  costUsd: 0.01,
  unpriced: true,
  attempts: 3,
  fallback: true,
  split: {
    served: { usage: { inputTokens: 10, outputTokens: 1 }, costUsd: 0.01 },
    billed: [
      { providerId: "house", model: "house-model", accountId: "house-key", usage: { inputTokens: 10, outputTokens: 1 }, unpriced: true },
      { providerId: "house", model: "house-model", accountId: "house-key", usage: { inputTokens: 10, outputTokens: 1 }, unpriced: true },
    ],
  },
});

async function byKey(s: Store) {
  s.record(rec);
  s.record(priced);
  await s.flush();
  const read = async (by: "key" | "model") =>
    (await s.usageSummary({ sinceMs: T, by })).map((r) => ({ group: r.group, requests: r.requests, unpriced: r.unpriced, inputTokens: r.inputTokens }));
  return { key: await read("key"), model: await read("model") };
}

const EXPECTED = {
  key: [
    { group: "alice", requests: 1, unpriced: 1, inputTokens: 30 },
    { group: "bob", requests: 1, unpriced: 1, inputTokens: 30 },
  ],
  model: [
    { group: "house/house-model", requests: 1, unpriced: 2, inputTokens: 50 },
    { group: "paid/paid-model", requests: 1, unpriced: 0, inputTokens: 10 },
  ],
};

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
