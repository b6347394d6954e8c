/**
 * Claims (`SharedStore.claimOnce`, SPEC D-2): what must happen once across instances (an alert's
 * delivery, src/alerts/alert-claim.ts) is claimed until a time; the first claim is taken, the others
 * are refused while it holds, whichever instance makes them, and once it has ended the next claim is
 * taken. A claim may be a lease (an alert's webhook tries): a refusal then says the holder is still
 * trying and for how long, or that it is done once the lease is settled; a lease never settled (its
 * instance died) is taken over when it lapses. Checked on PostgreSQL with two stores on one database
 * (two instances) and on the embedded store (one instance, process memory), whose clock the test sets.
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
    expect((await a.claimOnce("alert:circuit_open:provider:glm", now + HOUR)).taken).toBe(true);
    expect((await b.claimOnce("alert:circuit_open:provider:glm", now + HOUR)).taken).toBe(false);
    expect((await a.claimOnce("alert:circuit_open:provider:glm", now + HOUR)).taken).toBe(false);
    expect((await b.claimOnce("alert:circuit_open:provider:other", now + HOUR)).taken).toBe(true);
    // A claim whose end has passed (on the database's clock) holds nothing: the next claim is taken.
    expect((await a.claimOnce("alert:ended", now - 1000)).taken).toBe(true);
    expect((await b.claimOnce("alert:ended", now + HOUR)).taken).toBe(true);
    expect((await a.claimOnce("alert:ended", now + HOUR)).taken).toBe(false);
    // Ten claims of one name at once from both instances: exactly one is taken.
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).claimOnce("alert:raced", now + HOUR)));
    expect(got.filter((g) => g.taken)).toHaveLength(1);
    // Claims are not counters: a counter of the same name counts apart.
    expect((await a.addToCounter("alert:raced", HOUR, 1)).total).toBe(1);
    expect(await code(() => a.claimOnce("", now))).toBe("invalid");
    expect(await code(() => a.claimOnce("x", Number.NaN))).toBe("invalid");
    // An operator's unlock ends the account's lock claims on every instance (newuser15 N11): the next
    // claim of the same name is taken; other accounts' claims (la_1 is not la-1's prefix) hold.
    expect((await a.claimOnce("alert:account_locked:account:la-1::402 payment required", now + HOUR)).taken).toBe(true);
    expect((await a.claimOnce("alert:account_locked:account:la_12::402 payment required", now + HOUR)).taken).toBe(true);
    await b.releaseClaims("alert:account_locked:account:la-1:");
    expect((await a.claimOnce("alert:account_locked:account:la-1::402 payment required", now + HOUR)).taken).toBe(true);
    expect((await a.claimOnce("alert:account_locked:account:la_12::402 payment required", now + HOUR)).taken).toBe(false);
    await b.releaseClaims("alert:account_locked:account:la_");
    expect((await a.claimOnce("alert:account_locked:account:la_12::402 payment required", now + HOUR)).taken).toBe(true);
    expect((await b.claimOnce("alert:account_locked:account:la-1::402 payment required", now + HOUR)).taken).toBe(false);
    expect(await code(() => a.releaseClaims(""))).toBe("invalid");
  }, 60_000);

  test("a lease: the other instance hears the holder is still trying and until when, then that it is done once settled; a lease never settled (its instance died) is taken over once it lapses; a claim settled before the retake refuses it even past its end", async () => {
    const url = await pg.createDatabase("claim_leases");
    const a = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
    const b = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
    opened.push(a, b);
    const now = Date.now();
    const lease = { ms: 1_500 };
    const retake = { ms: 1_500, retake: true };
    // Delivered: A leases, B hears A is trying (for at most the lease), A settles, B hears it is done.
    expect(await a.claimOnce("alert:x", now + HOUR, lease)).toEqual({ taken: true });
    const refused = await b.claimOnce("alert:x", now + HOUR, lease);
    expect(refused).toMatchObject({ taken: false, holder: "trying" });
    const left = refused.taken === false && refused.holder === "trying" ? refused.retryInMs : -1;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(1_500);
    // a full claim (as an instance of an earlier version makes it) is refused by the lease too
    expect(await b.claimOnce("alert:x", now + HOUR)).toMatchObject({ taken: false, holder: "trying" });
    await a.settleClaim("alert:x", now + HOUR);
    expect(await b.claimOnce("alert:x", now + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    expect(await b.claimOnce("alert:x", now + HOUR, lease)).toEqual({ taken: false, holder: "done" });
    // Died: A leases and never settles; B claims again, with retake, when it was told the lease ends.
    expect(await a.claimOnce("alert:died", now + HOUR, lease)).toEqual({ taken: true });
    const told = await b.claimOnce("alert:died", now + HOUR, lease);
    if (told.taken || told.holder !== "trying") throw new Error(`expected trying, got ${JSON.stringify(told)}`);
    await Bun.sleep(told.retryInMs + 50);
    expect(await b.claimOnce("alert:died", now + HOUR, retake)).toEqual({ taken: true });
    expect(await a.claimOnce("alert:died", now + HOUR, lease)).toMatchObject({ taken: false, holder: "trying" });
    await b.settleClaim("alert:died", now + HOUR);
    expect(await a.claimOnce("alert:died", now + HOUR, lease)).toEqual({ taken: false, holder: "done" });
    // A circuit change's claim (a minute) settled with its end already past: the instance that was told
    // "trying" hears "done" (not delivered twice); a new claim of the name is a new alert and is taken.
    expect(await a.claimOnce("alert:short", now + HOUR, lease)).toEqual({ taken: true });
    expect(await b.claimOnce("alert:short", now + HOUR, lease)).toMatchObject({ taken: false, holder: "trying" });
    await a.settleClaim("alert:short", Date.now() - 1000);
    expect(await b.claimOnce("alert:short", now + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    expect(await b.claimOnce("alert:short", now + HOUR, lease)).toEqual({ taken: true });
    // An operator's unlock ends the account's lock claims while A holds the lease: the instance told
    // "trying" hears "done" when it claims again (the lock is over), a new lock's claim is taken.
    expect(await a.claimOnce("alert:account_locked:account:x::401", now + HOUR, lease)).toEqual({ taken: true });
    await b.releaseClaims("alert:account_locked:account:x:");
    expect(await b.claimOnce("alert:account_locked:account:x::401", now + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    expect(await b.claimOnce("alert:account_locked:account:x::401", now + HOUR, lease)).toEqual({ taken: true });
    // Ten leases of one name at once from both instances: one taken, the nine others told "trying".
    const got = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b).claimOnce("alert:raced-lease", now + HOUR, lease)));
    expect(got.filter((g) => g.taken)).toHaveLength(1);
    expect(got.filter((g) => !g.taken && g.holder === "trying")).toHaveLength(9);
    // settling a full claim (no lease) changes nothing
    expect(await a.claimOnce("alert:full", now + HOUR)).toEqual({ taken: true });
    await b.settleClaim("alert:full", now - 1000);
    expect(await b.claimOnce("alert:full", now + HOUR, lease)).toEqual({ taken: false, holder: "done" });
    expect(await code(() => a.claimOnce("x", now, { ms: 0 }))).toBe("invalid");
    expect(await code(() => a.settleClaim("", now))).toBe("invalid");
  }, 60_000);

  test("a lease given up (lapseClaim: its instance stopped cleanly before delivering) is taken by the other instance's next retake, long before its end; a settled claim or a full one is not touched", async () => {
    const url = await pg.createDatabase("claim_lapse");
    const a = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
    const b = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
    opened.push(a, b);
    const now = Date.now();
    const lease = { ms: 200_000 };
    const retake = { ms: 200_000, retake: true };
    expect(await a.claimOnce("alert:given-up", now + HOUR, lease)).toEqual({ taken: true });
    expect(await b.claimOnce("alert:given-up", now + HOUR, lease)).toMatchObject({ taken: false, holder: "trying" });
    expect(await b.claimOnce("alert:given-up", now + HOUR, retake)).toMatchObject({ taken: false, holder: "trying" });
    await a.lapseClaim("alert:given-up");
    expect(await b.claimOnce("alert:given-up", now + HOUR, retake)).toEqual({ taken: true });
    // a claim settled is not touched by a give-up
    await b.settleClaim("alert:given-up", now + HOUR);
    await a.lapseClaim("alert:given-up");
    expect(await a.claimOnce("alert:given-up", now + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    expect(await a.claimOnce("alert:full", now + HOUR)).toEqual({ taken: true });
    await a.lapseClaim("alert:full");
    expect(await b.claimOnce("alert:full", now + HOUR, lease)).toEqual({ taken: false, holder: "done" });
    await a.lapseClaim("alert:none"); // no claim: nothing happens
    expect(await code(() => a.lapseClaim(""))).toBe("invalid");
  }, 60_000);
});

describe("claims on the embedded store (one instance)", () => {
  test("taken, refused while it holds, taken again once its end has passed on the store's clock", async () => {
    const clock = fakeClock(Date.UTC(2026, 11, 1, 23, 59, 59, 900));
    const s = openSqliteStore({ path: join(tempDir(), "sy.db"), clock, flushIntervalMs: 60_000 });
    opened.push(s);
    const t = clock.now();
    expect((await s.claimOnce("alert:x", t + 60_000)).taken).toBe(true);
    clock.advance(200); // past midnight UTC: no day window starts a new claim
    expect((await s.claimOnce("alert:x", t + 60_000)).taken).toBe(false);
    clock.set(t + 60_000);
    expect((await s.claimOnce("alert:x", t + 120_000)).taken).toBe(true);
    expect((await s.claimOnce("alert:x", t + 120_000)).taken).toBe(false);
    expect(await code(() => s.claimOnce("", t))).toBe("invalid");
    // released by prefix (an operator's unlock, login or import: src/alerts/alert-claim.ts)
    expect((await s.claimOnce("alert:account_quarantined:account:cx-4:rejected", t + 120_000)).taken).toBe(true);
    expect((await s.claimOnce("alert:account_quarantined:account:cx-40:rejected", t + 120_000)).taken).toBe(true);
    await s.releaseClaims("alert:account_quarantined:account:cx-4:");
    expect((await s.claimOnce("alert:account_quarantined:account:cx-4:rejected", t + 120_000)).taken).toBe(true);
    expect((await s.claimOnce("alert:account_quarantined:account:cx-40:rejected", t + 120_000)).taken).toBe(false);
  });

  test("a lease: refused as 'trying' with the time left on the store's clock, 'done' once settled; taken again with retake once it lapsed; a settled claim past its end refuses a retake", async () => {
    const clock = fakeClock(Date.UTC(2026, 11, 1, 12));
    const s = openSqliteStore({ path: join(tempDir(), "sy.db"), clock, flushIntervalMs: 60_000 });
    opened.push(s);
    const t = clock.now();
    const lease = { ms: 200_000 };
    const retake = { ms: 200_000, retake: true };
    expect(await s.claimOnce("alert:x", t + HOUR, lease)).toEqual({ taken: true });
    clock.advance(1_000);
    expect(await s.claimOnce("alert:x", t + HOUR, lease)).toEqual({ taken: false, holder: "trying", retryInMs: 199_000 });
    expect(await s.claimOnce("alert:x", t + HOUR)).toEqual({ taken: false, holder: "trying", retryInMs: 199_000 });
    await s.settleClaim("alert:x", t + HOUR);
    expect(await s.claimOnce("alert:x", t + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    // never settled: lapses at its end and is taken with retake
    expect(await s.claimOnce("alert:died", t + HOUR, lease)).toEqual({ taken: true });
    clock.advance(200_000);
    expect(await s.claimOnce("alert:died", t + HOUR, retake)).toEqual({ taken: true });
    // settled with an end already past: a retake hears "done", a new claim is taken
    expect(await s.claimOnce("alert:short", clock.now() + 60_000, lease)).toEqual({ taken: true });
    await s.settleClaim("alert:short", clock.now() - 1);
    expect(await s.claimOnce("alert:short", clock.now() + 60_000, retake)).toEqual({ taken: false, holder: "done" });
    expect(await s.claimOnce("alert:short", clock.now() + 60_000, lease)).toEqual({ taken: true });
    // ended by an operator (releaseClaims) during the lease: a retake hears "done"
    expect(await s.claimOnce("alert:account_locked:account:x::401", clock.now() + HOUR, lease)).toEqual({ taken: true });
    await s.releaseClaims("alert:account_locked:account:x:");
    expect(await s.claimOnce("alert:account_locked:account:x::401", clock.now() + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    expect(await code(() => s.claimOnce("x", t, { ms: Number.NaN }))).toBe("invalid");
    expect(await code(() => s.settleClaim("", t))).toBe("invalid");
    // given up (lapseClaim) long before its end: a retake takes it at once; a settled claim is not touched
    expect(await s.claimOnce("alert:given-up", clock.now() + HOUR, lease)).toEqual({ taken: true });
    clock.advance(1_000);
    expect(await s.claimOnce("alert:given-up", clock.now() + HOUR, retake)).toMatchObject({ taken: false, holder: "trying" });
    await s.lapseClaim("alert:given-up");
    expect(await s.claimOnce("alert:given-up", clock.now() + HOUR, retake)).toEqual({ taken: true });
    await s.settleClaim("alert:given-up", clock.now() + HOUR);
    await s.lapseClaim("alert:given-up");
    expect(await s.claimOnce("alert:given-up", clock.now() + HOUR, retake)).toEqual({ taken: false, holder: "done" });
    expect(await code(() => s.lapseClaim(""))).toBe("invalid");
  });
});
