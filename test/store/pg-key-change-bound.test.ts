/**
 * `keys create` / `keys rotate` whose statement commits after the admin API answered 503 "the database
 * cannot be reached, so this was not done" (a reviewer's finding: it left a key nobody has the secret
 * for: a rotated key whose old secret is refused, a created key whose name a retry is refused). The
 * store cancels a change's statement when its bound passes (pg-change-cancel.test.ts), so this is left
 * for a statement that commits before the cancel lands after the caller stopped waiting for it (here:
 * one held in a trigger that outlives the cancel, then let go) and for a stalled database (its
 * processes paused: nothing reads the cancel; a statement already sent may commit when it is resumed,
 * while the instance counts it as away): the change is undone, so "not done" stays true; with the
 * database away the undo is kept and written when it is back. (In the stall test here, Bun had not
 * sent the rotate yet when it was cancelled: it never runs; the test holds either way.) A user retrying: a second rotate waiting behind the first is
 * stopped by its cancel, the first undone (the secret from before both stays), and a second create
 * while the first's undo is on its way is refused saying so.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { sha256Hex } from "../../src/store/secrets.ts";
import { stallPostgres } from "../support/stall-postgres.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { until } from "../support/until.ts";
import { holdPastCancel, postgresForFile } from "./helpers.ts";

const pg = postgresForFile();

/** What the call threw (undefined when it resolved). */
async function thrown(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e) => e,
  );
}

/**
 * What `call()` threw (undefined when it resolved), called while its `event` on `client_keys` is held
 * past the store's cancel (the commit wins the race); the statement goes on (and commits) once the
 * call settled.
 */
async function thrownPastCancel(db: SQL, event: "INSERT" | "UPDATE", call: () => Promise<unknown>): Promise<unknown> {
  const hold = await holdPastCancel(db, "client_keys", event);
  try {
    return await thrown(call());
  } finally {
    expect(await hold.cancelled()).toBe(true);
    await hold.release();
  }
}

test("a rotate (no grace) whose statement outlives its cancel and commits after the 503 is undone: the old secret is still accepted, here and in the database", async () => {
  const url = await pg.database("rotate_late");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: () => {} });
  const made = await s.createKey("ci");
  const locker = new SQL(url, { max: 2 });
  const err = await thrownPastCancel(locker, "UPDATE", () => s.rotateKey("ci", 0));
  expect(err).toBeInstanceOf(StoreError);
  expect((err as StoreError).code).toBe("unavailable");
  // the statement commits once the lock goes; its undo follows
  await Bun.sleep(300);
  await until(async () => (await locker`SELECT hash FROM client_keys WHERE name = 'ci'`)[0]?.hash === sha256Hex(made.secret), 5_000, "the old secret's hash back in the row", 100);
  const [row] = await locker`SELECT prev_hash, rotated_at FROM client_keys WHERE name = 'ci'`;
  expect(row).toEqual({ prev_hash: null, rotated_at: null });
  await s.refreshKeys();
  expect(s.lookup(made.secret)?.name).toBe("ci");
  // and it rotates when the database answers
  const next = await s.rotateKey("ci", 0);
  expect(s.lookup(next.secret)?.name).toBe("ci");
  expect(s.lookup(made.secret)).toBeUndefined();
  await locker.close();
  await s.close();
}, 60_000);

test("a create whose statement outlives its cancel and commits after the 503 is undone: no key of that name is left, and creating it again works", async () => {
  const url = await pg.database("create_late");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: () => {} });
  const locker = new SQL(url, { max: 2 });
  const err = await thrownPastCancel(locker, "INSERT", () => s.createKey("laptop"));
  expect(err).toBeInstanceOf(StoreError);
  expect((err as StoreError).code).toBe("unavailable");
  await Bun.sleep(300);
  await until(async () => (await locker`SELECT count(*)::int AS n FROM client_keys WHERE name = 'laptop'`)[0]?.n === 0, 5_000, "no row named laptop", 100);
  const again = await s.createKey("laptop");
  expect(s.lookup(again.secret)?.name).toBe("laptop");
  expect((await s.listKeys()).filter((k) => k.name === "laptop").map((k) => k.revokedAt)).toEqual([undefined]);
  await locker.close();
  await s.close();
}, 60_000);

test("a rotate (no grace) sent to a stalled database, answered 503: once it is resumed and counts as back, the old secret is still accepted (the rotate was stopped, or undone if it committed)", async () => {
  const url = await pg.database("rotate_stall");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 1_000, onError: () => {} });
  const made = await s.createKey("ci");
  const stall = stallPostgres(pg.server());
  let err: unknown;
  try {
    err = await thrown(s.rotateKey("ci", 0));
    // the stall check's SELECT 1 goes unanswered too: degraded mode
    await until(() => !s.health(), 10_000, "the store to count the database as away", 100);
  } finally {
    stall.resume();
  }
  expect((err as StoreError).code).toBe("unavailable");
  await until(() => s.health(), 20_000, "the database to count as back", 100);
  const reader = new SQL(url, { max: 1 });
  await until(async () => (await reader`SELECT hash FROM client_keys WHERE name = 'ci'`)[0]?.hash === sha256Hex(made.secret), 5_000, "the old secret's hash back in the row", 100);
  await s.refreshKeys();
  expect(s.lookup(made.secret)?.name).toBe("ci");
  await reader.close();
  await s.close();
}, 90_000);

// A user retries a rotate answered 503 while the first one's statement, which outlived its cancel, still
// holds the row: the retry waits on the row lock past its own bound and is stopped by its cancel; the
// first commits once let go and is undone, so the key keeps the secret from before both (and the
// first one's secret, which nobody was shown, is not left as the previous one). Both committing late
// (two commits that win their races) is left to undo-rotates.test.ts.
for (const grace of [0, 600_000]) {
  test(`a rotate (grace ${grace} ms) retried after its 503 while the first outlives its cancel: the retry is stopped, the first undone; the key keeps the secret from before both`, async () => {
    const url = await pg.database(`rotate_twice_${grace}`);
    const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: () => {} });
    const made = await s.createKey("ci");
    const old = sha256Hex(made.secret);
    const locker = new SQL(url, { max: 2 });
    const hold = await holdPastCancel(locker, "client_keys", "UPDATE");
    let first: unknown;
    let retry: unknown;
    try {
      first = await thrown(s.rotateKey("ci", grace));
      retry = await thrown(s.rotateKey("ci", grace));
    } finally {
      await hold.release();
    }
    expect([(first as StoreError).code, (retry as StoreError).code]).toEqual(["unavailable", "unavailable"]);
    // the first commits, then its undo lands; the row then stays as it is
    await until(async () => (await locker`SELECT hash FROM client_keys WHERE name = 'ci'`)[0]?.hash === old, 5_000, "the first secret's hash back in the row", 100);
    await Bun.sleep(1_000);
    const [row] = await locker`SELECT hash, prev_hash, prev_until, rotated_at FROM client_keys WHERE name = 'ci'`;
    expect(row).toEqual({ hash: old, prev_hash: null, prev_until: null, rotated_at: null });
    await s.refreshKeys();
    expect(s.lookup(made.secret)?.name).toBe("ci");
    await locker.close();
    await s.close();
  }, 60_000);
}

test("a create retried while the late write of the first (answered 503) is still being undone is refused saying so: try again in a few seconds", async () => {
  const url = await pg.database("create_twice");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 1_500, onError: () => {} });
  // the undo's DELETE waits while the test holds advisory lock 4242 (a trigger takes it)
  const holder = new SQL(url, { max: 1 });
  await holder.unsafe(`CREATE FUNCTION hold_delete() RETURNS trigger AS $$ BEGIN PERFORM pg_advisory_xact_lock(4242); RETURN OLD; END $$ LANGUAGE plpgsql;
                       CREATE TRIGGER hold_delete BEFORE DELETE ON client_keys FOR EACH ROW EXECUTE FUNCTION hold_delete();`);
  await holder`SELECT pg_advisory_lock(4242)`;
  const locker = new SQL(url, { max: 2 });
  const err = await thrownPastCancel(locker, "INSERT", () => s.createKey("laptop"));
  expect((err as StoreError).code).toBe("unavailable");
  await until(async () => (await locker`SELECT count(*)::int AS n FROM client_keys WHERE name = 'laptop'`)[0]?.n === 1, 5_000, "the late create committed", 20);
  const dup = await thrown(s.createKey("laptop"));
  expect((dup as StoreError).code).toBe("conflict");
  expect((dup as StoreError).message).toContain("this is its late write, being undone: try again in a few seconds");
  await holder`SELECT pg_advisory_unlock(4242)`;
  await until(async () => (await locker`SELECT count(*)::int AS n FROM client_keys WHERE name = 'laptop'`)[0]?.n === 0, 20_000, "no row named laptop", 100);
  await until(() => s.health(), 20_000, "the store to count the database as reachable", 100);
  const again = await s.createKey("laptop");
  expect(s.lookup(again.secret)?.name).toBe("laptop");
  await holder.close();
  await locker.close();
  await s.close();
}, 60_000);
