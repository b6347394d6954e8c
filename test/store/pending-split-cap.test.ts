/**
 * Regression test: at the write buffer's cap (rows kept while flushes fail), a request whose failed
 * attempts' usage counted (UsageRecord.split: its row plus one row per billed attempt) was cut apart.
 * `record` checked the cap once, then pushed all its rows (4 rows buffered with maxPending 3), and a
 * failed flush's `putBack` kept the first `maxPending` rows, so a request's own row could stay with only
 * some of its attempts' rows: its call listed and counted, its cost short of the dropped attempts'.
 * Now a request's rows are kept or refused together, within the cap, and the refused count
 * ("refused N usage rows") counts every row of a refused request.
 */
import { expect, test } from "bun:test";
import { PendingWrites } from "../../src/store/pending.ts";
import type { UsageRecord } from "../../pipeline/ports.ts";
import { usage } from "./helpers.ts";

const T = 1_800_000_000_000;

/** Request `id`: its served reply's row and two billed failed attempts' rows. */
const split = (id: string, ts: number): UsageRecord =>
  usage({
    requestId: id,
    ts,
    providerId: "cc",
    model: "m",
    usage: { inputTokens: 2011, outputTokens: 9 },
    costUsd: 0.202,
    split: {
      served: { usage: { inputTokens: 11, outputTokens: 7 }, costUsd: 0.0018 },
      billed: [
        { providerId: "paid", model: "m", usage: { inputTokens: 1000, outputTokens: 1 }, costUsd: 0.1001 },
        { providerId: "paid", model: "m", usage: { inputTokens: 1000, outputTokens: 1 }, costUsd: 0.1001 },
      ],
    },
  });

test("a split request is kept or refused whole at the buffer's cap", () => {
  const p = new PendingWrites(3, () => T, () => {}, undefined, 1_000);
  p.record(usage({ requestId: "A", ts: T, providerId: "paid", model: "m", usage: { inputTokens: 1 }, costUsd: 0.001 }));
  p.record(split("B", T + 1));
  const afterRecord = p.pendingUsage;
  const batch = p.take(); // a flush takes them, and fails
  p.putBack(batch);
  const b = p.take().usage.filter((r) => r[0] === "B").length;
  // actual: 4 rows after record, 2 of B's 3 rows after putBack
  expect({ afterRecord, rowsOfB: b, capKept: afterRecord <= 3, wholeOrNone: b === 0 || b === 3 }).toMatchObject({ capKept: true, wholeOrNone: true });
});

test("a failed flush's rows put back before newer ones never cut a newer split request apart; its rows count as refused", () => {
  const p = new PendingWrites(5, () => T, () => {}, undefined, 1_000);
  p.record(usage({ requestId: "A", ts: T, providerId: "paid", model: "m", usage: { inputTokens: 1 }, costUsd: 0.001 }));
  p.record(split("B", T + 1));
  const batch = p.take(); // 4 rows: a flush takes them, and fails
  p.record(split("C", T + 2)); // 3 rows buffered meanwhile
  p.putBack(batch); // 7 rows for a cap of 5: keeping 5 would keep C's row and 1 of its 2 attempts' rows
  const ids = p.take().usage.map((r) => r[0]);
  expect({ ids, refusedUsage: p.refusedUsage, dropped: p.dropped }).toEqual({ ids: ["A", "B", "B", "B"], refusedUsage: 3, dropped: 3 });
});
