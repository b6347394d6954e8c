/**
 * An admin change whose statement outlives the store's bound is stopped, so that the 503's "the
 * database cannot be reached, so this was not done" is true (a change held by a table lock used to
 * commit once the lock went: an account, a combo or a revoke answered "not done" was done after all).
 * The statement is cancelled when the bound passes; in a transaction the transaction rolls back, also
 * the statements it had already run. A key rotate held the same way is never written, so there is
 * nothing to undo. A statement that ends just before the cancel lands (here: one that outlives the
 * cancel) answers as done, not 503.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { sha256Hex } from "../../src/store/secrets.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { StoreError } from "../../src/store/types.ts";
import { until } from "../support/until.ts";
import { holdPastCancel, lockTable, postgresForFile } from "./helpers.ts";

const pg = postgresForFile();

/** What the call threw (undefined when it resolved). */
async function thrown(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => undefined,
    (e) => e,
  );
}

/** `call()`'s error, called while `table` is locked on `db`; the lock goes once it settled. */
async function thrownWhileLocked(db: SQL, table: string, call: () => Promise<unknown>): Promise<unknown> {
  const lock = await lockTable(db, table);
  try {
    return await thrown(call());
  } finally {
    await lock.release();
  }
}

/** Polls `read` every 20 ms for `ms`: every answer must equal the first one. @returns the answers seen. */
async function unchanged(read: () => Promise<unknown>, ms: number): Promise<unknown[]> {
  const seen: unknown[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    seen.push(await read());
    await Bun.sleep(20);
  }
  return seen;
}

test("an account, a combo, a setting and a key revoke held by a lock past the bound are answered 503 and, after the lock goes, are not in the database", async () => {
  const url = await pg.database("change_cancel");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: () => {} });
  await s.createKey("ci");
  const db = new SQL(url, { max: 2 });
  const calls: Array<[string, () => Promise<unknown>]> = [
    ["accounts", () => s.upsertAccount({ id: "acct-1", providerId: "openai", priority: 0, credential: { type: "api_key", apiKey: "sk-test" }, disabled: false })],
    ["stored_combos", () => s.putCombo("fast", { targets: ["openai/gpt-5-mini"] })],
    ["stored_combos", () => s.createCombo("slow", { targets: ["openai/gpt-5"] })],
    ["stored_settings", () => s.setSetting("strategy", "fill-first")],
    ["client_keys", () => s.revokeKey("ci")],
  ];
  for (const [table, call] of calls) {
    const err = await thrownWhileLocked(db, table, call);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("unavailable");
  }
  // a late commit would land within a moment of the lock going: nothing does
  await Bun.sleep(2_000);
  expect(await db`SELECT count(*)::int AS n FROM accounts`).toEqual([{ n: 0 }]);
  expect(await db`SELECT count(*)::int AS n FROM stored_combos`).toEqual([{ n: 0 }]);
  expect(await db`SELECT count(*)::int AS n FROM stored_settings`).toEqual([{ n: 0 }]);
  expect(await db`SELECT revoked_at FROM client_keys WHERE name = 'ci'`).toEqual([{ revoked_at: null }]);
  expect(s.health()).toBe(true);
  // and each is done when the database answers
  await s.upsertAccount({ id: "acct-1", providerId: "openai", priority: 0, credential: { type: "api_key", apiKey: "sk-test" }, disabled: false });
  expect(await s.revokeKey("ci")).toBe(true);
  expect((await db`SELECT id FROM accounts`).map((r: { id: string }) => r.id)).toEqual(["acct-1"]);
  await db.close();
  await s.close();
}, 60_000);

test("an account delete (one transaction) whose later statement is held past the bound rolls back: the rows its first statements deleted are still there", async () => {
  const url = await pg.database("change_cancel_tx");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: () => {} });
  await s.upsertAccount({ id: "acct-1", providerId: "openai", priority: 0, credential: { type: "api_key", apiKey: "sk-test" }, disabled: false });
  await s.setAccountModels("acct-1", ["gpt-5-mini"]);
  const db = new SQL(url, { max: 2 });
  // `DELETE FROM accounts` runs at once; `DELETE FROM bindings`, a later statement, waits on the lock
  const err = await thrownWhileLocked(db, "bindings", () => s.deleteAccount("acct-1"));
  expect((err as StoreError).code).toBe("unavailable");
  await Bun.sleep(2_000);
  expect(await db`SELECT id FROM accounts`).toEqual([{ id: "acct-1" }]);
  expect(await db`SELECT count(*)::int AS n FROM account_models`).toEqual([{ n: 1 }]);
  expect(await s.deleteAccount("acct-1")).toBe(true);
  expect(await db`SELECT count(*)::int AS n FROM accounts`).toEqual([{ n: 0 }]);
  await db.close();
  await s.close();
}, 60_000);

test("a key rotate held by a lock past the bound is answered 503 and never written: the row does not change, so there is nothing to undo", async () => {
  const url = await pg.database("rotate_cancel");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, onError: () => {} });
  const made = await s.createKey("ci");
  const db = new SQL(url, { max: 2 });
  const row = () => db`SELECT hash, prev_hash, rotated_at FROM client_keys WHERE name = 'ci'`.then((r) => JSON.stringify(r));
  const before = await row();
  const err = await thrownWhileLocked(db, "client_keys", () => s.rotateKey("ci", 0));
  expect((err as StoreError).code).toBe("unavailable");
  const seen = await unchanged(row, 3_000);
  expect(new Set(seen)).toEqual(new Set([before]));
  expect(JSON.parse(before)[0].hash).toBe(sha256Hex(made.secret));
  await s.refreshKeys();
  expect(s.lookup(made.secret)?.name).toBe("ci");
  await db.close();
  await s.close();
}, 60_000);

test("a change whose statement ends just after the bound, before its cancel lands, is answered as done (not 503)", async () => {
  const url = await pg.database("change_wins");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 1_000, onError: () => {} });
  const db = new SQL(url, { max: 2 });
  // the INSERT is held in a trigger that outlives a cancel; once the cancel came, it is let go: it
  // ends within the store's wait for the cancel's outcome
  const hold = await holdPastCancel(db, "stored_aliases", "INSERT");
  const t0 = Date.now();
  const put = thrown(s.putAlias("fast", "openai/gpt-5-mini"));
  await until(() => hold.cancelled(), 10_000, "the store to cancel the INSERT", 20);
  await hold.release();
  expect(await put).toBeUndefined();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(1_000);
  expect(await db`SELECT name, target FROM stored_aliases`).toEqual([{ name: "fast", target: "openai/gpt-5-mini" }]);
  await db.close();
  await s.close();
}, 60_000);

test("an instance config publish whose upsert is held past the bound leaves its killed predecessor's row (the delete rolls back with it)", async () => {
  const url = await pg.database("publish_cancel");
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, queryAnswerMs: 500, instanceId: "new-1", onError: () => {} });
  await s.publishInstanceConfig("http://127.0.0.1:1", { "server.port": "1" }, "host-a:1");
  const db = new SQL(url, { max: 2 });
  // the killed predecessor's row, same origin; the live row of this instance held by another transaction
  await db`INSERT INTO instance_configs (instance_id, label, parts, updated_at, origin) VALUES ('old-1', 'http://127.0.0.1:1', '{}', 0, 'host-a:1')`;
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holder = db.begin(async (tx) => {
    await tx`SELECT instance_id FROM instance_configs WHERE instance_id = 'new-1' FOR UPDATE`;
    held();
    await released;
  });
  await isHeld;
  // the DELETE of 'old-1' runs at once, the upsert of 'new-1' waits on the row lock until the cancel
  const err = await thrown(s.publishInstanceConfig("http://127.0.0.1:1", { "server.port": "2" }, "host-a:1"));
  release();
  await holder;
  expect((err as StoreError).code).toBe("unavailable");
  await Bun.sleep(1_000);
  expect(await db`SELECT instance_id, parts FROM instance_configs ORDER BY instance_id`).toEqual([
    { instance_id: "new-1", parts: JSON.stringify({ "server.port": "1" }) },
    { instance_id: "old-1", parts: "{}" },
  ]);
  await db.close();
  await s.close();
}, 60_000);
