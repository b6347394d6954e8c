/**
 * The PostgreSQL store opened as the gateway opens it (src/store/open.ts) keeps time by the app's clock,
 * as the embedded store does: the times it fills in (a cooldown's or lock's `since`, a key's creation),
 * the ends of cooldowns, locks, circuits, quota windows and bindings when state is read back (another
 * instance's load, a restart), and a rotated key's grace. Before (README "Left from session 41"), it
 * read `Date.now`: with an app clock behind the machine's, a cooldown the app set for 30 s was deleted
 * at the next read as ended, and a rotated key's previous secret outlived its grace on the app's clock.
 * The clock here is settable and starts in 2024, years before this machine's.
 */
import { expect, test } from "bun:test";
import { openStore } from "../../src/store/open.ts";
import type { Store } from "../../src/store/types.ts";
import { fakeClock, postgresForFile, tempDir } from "./helpers.ts";

const pg = postgresForFile();

/** The app's clock: settable, 2024-01-01T00:00:00Z at first. */
function appClock() {
  const c = fakeClock(Date.parse("2024-01-01T00:00:00Z"));
  return { ...c, sleep: (ms: number) => Bun.sleep(ms) };
}

test("state written through one instance is read back by another on the app's clock: live until its end there, gone after", async () => {
  const url = await pg.database("app_clock_state");
  const clock = appClock();
  const t0 = clock.now();
  const open = () => openStore(url, tempDir(), undefined, () => {}, clock, () => {});
  const a = await open();
  const b: Store = await open();
  try {
    await a.setCooldown({ accountId: "acct-1", model: "*", until: t0 + 30_000, reason: "429 rate limit", level: 0 });
    await a.setLock({ accountId: "acct-2", until: t0 + 600_000, reason: "quota exhausted" });
    await a.setCircuit({ providerId: "openai", openUntil: t0 + 300_000, reason: "10 consecutive 5xx" });
    a.setQuota({ accountId: "acct-1", window: "requests", model: "*", remaining: 3, limit: 100, resetAt: t0 + 60_000 });
    a.bind({ key: "conv-1", accountId: "acct-1", expiresAt: t0 + 900_000 });
    await a.flush();

    const read = await b.loadAccountState();
    expect(read.cooldowns).toEqual([{ accountId: "acct-1", model: "*", until: t0 + 30_000, reason: "429 rate limit", level: 0, since: t0 }]);
    expect(read.locks).toEqual([{ accountId: "acct-2", until: t0 + 600_000, reason: "quota exhausted", since: t0 }]);
    expect(read.circuits).toEqual([{ providerId: "openai", openUntil: t0 + 300_000, reason: "10 consecutive 5xx", since: t0 }]);
    expect(read.quotas).toEqual([{ accountId: "acct-1", window: "requests", model: "*", remaining: 3, limit: 100, resetAt: t0 + 60_000, updatedAt: t0 }]);
    expect(read.bindings).toEqual([{ key: "conv-1", accountId: "acct-1", expiresAt: t0 + 900_000 }]);

    // 31 s later on the app's clock: the cooldown has ended, the rest holds; 15 min later everything has.
    clock.advance(31_000);
    const later = await b.loadAccountState();
    expect(later.cooldowns).toEqual([]);
    expect(later.locks.map((l) => l.accountId)).toEqual(["acct-2"]);
    expect(later.quotas).toHaveLength(1);
    clock.advance(900_000);
    const after = await b.loadAccountState();
    expect(after.locks).toEqual([]);
    expect(after.circuits).toEqual([]);
    expect(after.quotas).toEqual([]);
    expect(after.bindings).toEqual([]);
  } finally {
    await a.close();
    await b.close();
  }
}, 60_000);

test("a stored key's creation and rotation times are the app's, and its previous secret is refused once the grace has passed on the app's clock", async () => {
  const url = await pg.database("app_clock_keys");
  const clock = appClock();
  const t0 = clock.now();
  const s = await openStore(url, tempDir(), undefined, () => {}, clock, () => {});
  try {
    const created = await s.createKey("laptop");
    expect(created.createdAt).toBe(t0);
    clock.advance(5_000);
    const rotated = await s.rotateKey("laptop", 60_000);
    expect(rotated.rotatedAt).toBe(t0 + 5_000);
    expect(rotated.previousUntil).toBe(t0 + 65_000);
    const listed = (await s.listKeys()).find((k) => k.name === "laptop");
    expect(listed).toMatchObject({ createdAt: t0, rotatedAt: t0 + 5_000, previousUntil: t0 + 65_000 });

    expect(s.lookup(created.secret)?.name).toBe("laptop"); // within the grace
    clock.advance(59_999);
    expect(s.lookup(created.secret)?.name).toBe("laptop");
    clock.advance(1);
    expect(s.lookup(created.secret)).toBeUndefined(); // the grace's end on the app's clock
    expect(s.lookup(rotated.secret)?.name).toBe("laptop");
  } finally {
    await s.close();
  }
}, 60_000);
