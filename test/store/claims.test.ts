/**
 * Claims (`SharedStore.claimOnce`, SPEC D-2): what must happen once across instances (an alert's
 * delivery, src/alerts/alert-claim.ts) is claimed until a time; the first claim is taken, the others
 * are refused while it holds, whichever instance makes them, and once it has ended the next claim is
 * taken. Checked on PostgreSQL with two stores on one database (two instances) and on the embedded
 * store (one instance, process memory), whose clock the test sets.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/types.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";
import { cleanupTempDirs, code, fakeClock, tempDir } from "./helpers.ts";

let pg: TestPostgres;
const opened: Store[] = [];

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);

afterAll(async () => {
  for (const s of opened) await s.close();
  await pg?.destroy();
  cleanupTempDirs();
});

const HOUR = 3_600_000;

describe("claims on PostgreSQL: two instances on one database", () => {
  test("the first claim is taken, the other instance's refused while it holds, an ended one taken again; claims made at once: one taken", async () => {
    const url = await pg.createDatabase("claims");
    const a = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
    const b = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
    opened.push(a, b);
    const now = Date.now();
    expect(await a.claimOnce("alert:circuit_open:provider:glm", now + HOUR)).toBe(true);
    expect(await b.claimOnce("alert:circuit_open:provider:glm", now + HOUR)).toBe(false);
    expect(await a.claimOnce("alert:circuit_open:provider:glm", now + HOUR)).toBe(false);
    expect(await b.claimOnce("alert:circuit_open:provider:other", now + HOUR)).toBe(true);
    // A claim whose end has passed (on the database's clock) holds nothing: the next claim is taken.
    expect(await a.claimOnce("alert:ended", now - 1000)).toBe(true);
    expect(await b.claimOnce("alert:ended", now + HOUR)).toBe(true);
    expect(await a.claimOnce("alert:ended", now + HOUR)).toBe(false);
    // Ten claims of one name at once from both instances: exactly one is taken.
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).claimOnce("alert:raced", now + HOUR)));
    expect(got.filter(Boolean)).toHaveLength(1);
    // Claims are not counters: a counter of the same name counts apart.
    expect((await a.addToCounter("alert:raced", HOUR, 1)).total).toBe(1);
    expect(await code(() => a.claimOnce("", now))).toBe("invalid");
    expect(await code(() => a.claimOnce("x", Number.NaN))).toBe("invalid");
    // An operator's unlock ends the account's lock claims on every instance (newuser15 N11): the next
    // claim of the same name is taken; other accounts' claims (la_1 is not la-1's prefix) hold.
    expect(await a.claimOnce("alert:account_locked:account:la-1::402 payment required", now + HOUR)).toBe(true);
    expect(await a.claimOnce("alert:account_locked:account:la_12::402 payment required", now + HOUR)).toBe(true);
    await b.releaseClaims("alert:account_locked:account:la-1:");
    expect(await a.claimOnce("alert:account_locked:account:la-1::402 payment required", now + HOUR)).toBe(true);
    expect(await a.claimOnce("alert:account_locked:account:la_12::402 payment required", now + HOUR)).toBe(false);
    await b.releaseClaims("alert:account_locked:account:la_");
    expect(await a.claimOnce("alert:account_locked:account:la_12::402 payment required", now + HOUR)).toBe(true);
    expect(await b.claimOnce("alert:account_locked:account:la-1::402 payment required", now + HOUR)).toBe(false);
    expect(await code(() => a.releaseClaims(""))).toBe("invalid");
  }, 60_000);
});

describe("claims on the embedded store (one instance)", () => {
  test("taken, refused while it holds, taken again once its end has passed on the store's clock", async () => {
    const clock = fakeClock(Date.UTC(2026, 11, 1, 23, 59, 59, 900));
    const s = openSqliteStore({ path: join(tempDir(), "sy.db"), clock, flushIntervalMs: 60_000 });
    opened.push(s);
    const t = clock.now();
    expect(await s.claimOnce("alert:x", t + 60_000)).toBe(true);
    clock.advance(200); // past midnight UTC: no day window starts a new claim
    expect(await s.claimOnce("alert:x", t + 60_000)).toBe(false);
    clock.set(t + 60_000);
    expect(await s.claimOnce("alert:x", t + 120_000)).toBe(true);
    expect(await s.claimOnce("alert:x", t + 120_000)).toBe(false);
    expect(await code(() => s.claimOnce("", t))).toBe("invalid");
    // released by prefix (an operator's unlock, login or import: src/alerts/alert-claim.ts)
    expect(await s.claimOnce("alert:account_quarantined:account:cx-4:rejected", t + 120_000)).toBe(true);
    expect(await s.claimOnce("alert:account_quarantined:account:cx-40:rejected", t + 120_000)).toBe(true);
    await s.releaseClaims("alert:account_quarantined:account:cx-4:");
    expect(await s.claimOnce("alert:account_quarantined:account:cx-4:rejected", t + 120_000)).toBe(true);
    expect(await s.claimOnce("alert:account_quarantined:account:cx-40:rejected", t + 120_000)).toBe(false);
  });
});
