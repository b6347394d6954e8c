/**
 * A query the caller waits for (the admin API's) is bounded (a team-operator tryout: with PostgreSQL
 * stalled, `GET /admin/api/keys` never answered): unanswered within the store's bound it throws
 * StoreError `unavailable` (the admin API's 503), and a `SELECT 1` then tells a stalled database from a
 * slow statement: a statement held by a lock while the database answers leaves the instance in normal
 * operation (no "database unreachable", health true), and the statement completes once the lock goes.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { lockTable, postgresForFile } from "./helpers.ts";

const pg = postgresForFile();

test("a read held by a lock past the bound throws unavailable; the database still answers, so the store stays healthy and the next read answers", async () => {
  const url = await pg.database("read_bound");
  const errors: string[] = [];
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: (m) => errors.push(m) });
  const locker = new SQL(url, { max: 1 });
  const { release } = await lockTable(locker, "stored_combos");
  try {
    const t0 = Date.now();
    const err = await s.listCombos().then(
      () => undefined,
      (e) => e,
    );
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("unavailable");
    expect(Date.now() - t0).toBeLessThan(3_000);
    await Bun.sleep(1_000); // the stall check's SELECT 1 answers
    expect(s.health()).toBe(true);
    expect(errors.filter((m) => m.includes("database unreachable"))).toEqual([]);
  } finally {
    await release();
    await locker.close();
  }
  expect(await s.listCombos()).toEqual([]);
  await s.close();
}, 60_000);

test("more slow reads than the pool has connections, held by a lock: the database still answers, so no \"database unreachable\" and the store stays healthy", async () => {
  const url = await pg.database("read_bound_pool");
  const errors: string[] = [];
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, maxConnections: 4, onError: (m) => errors.push(m) });
  const locker = new SQL(url, { max: 1 });
  let release: () => void = () => {};
  const held = new Promise<void>((r) => (release = r));
  const lock = locker.begin(async (tx) => {
    await tx`LOCK TABLE stored_combos IN ACCESS EXCLUSIVE MODE`;
    await Promise.race([held, Bun.sleep(12_000)]); // released by the test, at the latest after 12 s
  });
  let reads: Array<Promise<unknown>> = [];
  try {
    await Bun.sleep(200);
    // 6 reads on a pool of 4: every pool connection waits on the lock until it goes
    reads = Array.from({ length: 6 }, () => s.listCombos().then(() => "answered", (e) => (e as StoreError).code));
    expect(await Promise.all(reads)).toEqual(Array(6).fill("unavailable"));
    // past the stall check's bound (PROBE_ANSWER_MS, 5 s) with every pool connection still waiting
    await Bun.sleep(6_500);
    expect(s.health()).toBe(true);
    expect(errors.filter((m) => m.includes("database unreachable"))).toEqual([]);
  } finally {
    release();
    await lock.catch(() => {});
    await locker.close();
  }
  expect(await s.listCombos()).toEqual([]);
  await s.close();
}, 60_000);

test("a write-through change held by a lock past the bound resolves (kept, degraded mode); once the lock goes the probe writes it and the database counts as back", async () => {
  const url = await pg.database("write_bound");
  const errors: string[] = [];
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: (m) => errors.push(m) });
  const locker = new SQL(url, { max: 1 });
  const { release } = await lockTable(locker, "cooldowns");
  const until = Date.now() + 3_600_000;
  try {
    const t0 = Date.now();
    await s.setCooldown({ accountId: "acct-1", model: "*", until, reason: "429 rate limit", level: 0 });
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(s.health()).toBe(false);
    expect(errors.some((m) => m.includes("database unreachable") && m.includes("did not answer a write"))).toBe(true);
  } finally {
    await release();
  }
  const deadline = Date.now() + 15_000;
  while (!s.health() && Date.now() < deadline) await Bun.sleep(100);
  expect(s.health()).toBe(true);
  const rows = await locker`SELECT account_id, until FROM cooldowns`;
  expect(rows.map((r: { account_id: string; until: unknown }) => [r.account_id, Number(r.until)])).toEqual([["acct-1", until]]);
  await locker.close();
  await s.close();
}, 60_000);
