/**
 * Account-state writes a real PostgreSQL refuses for a full disk (SQLSTATE 53100, made here by triggers
 * that raise it on INSERT): a removed account/model pairing and an opened provider circuit are kept and
 * written when the database takes writes again, as a lock is (src/store/postgres/db.ts's outbox: a
 * write refused as "cannot serve now", class 53, waits in order with every other write-through while the
 * instance serves from memory; src/accounts/retry-writes.ts is for the embedded store only). A statement
 * the database rejects otherwise (any other SQLSTATE) is src/accounts/shared-state-writes.ts's: a
 * transient rejection (40001, 40P01, 55P03, 57014) is tried again, a few times with a backoff; any other
 * (P0001 raised by a trigger here) is dropped at once with an `error` line and counted (until session 43
 * every such rejection was tried once, silently).
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { classify } from "../../pipeline/classify.ts";
import { AccountRegistry, CIRCUIT_THRESHOLD } from "../../src/accounts/registry.ts";
import { STATE_WRITE_TRIES } from "../../src/accounts/shared-state-writes.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import type { Store } from "../../src/store/types.ts";
import { account, providerOf } from "../accounts/helpers.ts";
import { until } from "../support/until.ts";
import { postgresForFile } from "./helpers.ts";

const pg = postgresForFile();
const TABLES = ["removed_models", "provider_circuits", "account_locks"];

test("a removal, a circuit and a lock refused for a full disk are kept and written once the database takes writes again", async () => {
  const url = await pg.database("state_refused");
  const errors: string[] = [];
  const store = await openPostgresStore({ url, onError: (m: string) => void errors.push(m) });
  const admin = new SQL(url, { max: 1 });
  try {
    await admin.unsafe(`CREATE FUNCTION refuse_full() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$ LANGUAGE plpgsql`);
    for (const t of TABLES) await admin.unsafe(`CREATE TRIGGER full_${t} BEFORE INSERT ON ${t} FOR EACH ROW EXECUTE FUNCTION refuse_full()`);
    const clock = { now: () => Date.now(), sleep: (ms: number) => Bun.sleep(ms) };
    const p = providerOf("p");
    const registry = new AccountRegistry(store, clock);
    registry.setAccounts([account("a1"), account("a2")], new Map([["p", p]]));
    const reply = (status: number, type: string, message: string) => classify({ status, bodyText: JSON.stringify({ type: "error", error: { type, message } }), now: clock.now() });
    registry.failure(registry.list()[0]!, p, "claude-x", reply(404, "not_found_error", "model: claude-x")); // a1's pairing of claude-x removed
    for (let i = 0; i < CIRCUIT_THRESHOLD; i++) registry.failure(registry.list()[1]!, p, "claude-x", reply(500, "api_error", "boom")); // p's circuit opens
    registry.failure(registry.list()[1]!, p, "claude-x", reply(401, "authentication_error", "invalid x-api-key")); // a2 locked
    expect(registry.circuitOpen("p")).toBe(true);
    await until(() => !store.health(), 10_000, "the store to find the database unable to write", 50);
    const rows = async () => ({
      removed: (await admin`SELECT account_id, model FROM removed_models`).map((r: { account_id: string; model: string }) => `${r.account_id} ${r.model}`),
      circuits: (await admin`SELECT provider_id FROM provider_circuits`).map((r: { provider_id: string }) => r.provider_id),
      locks: (await admin`SELECT account_id FROM account_locks`).map((r: { account_id: string }) => r.account_id),
    });
    expect(await rows()).toEqual({ removed: [], circuits: [], locks: [] });
    await Bun.sleep(1500); // probes meanwhile: each replays the kept writes, refused again
    expect(await rows()).toEqual({ removed: [], circuits: [], locks: [] });
    for (const t of TABLES) await admin.unsafe(`DROP TRIGGER full_${t} ON ${t}`); // room again
    await until(() => store.health(), 20_000, "the database to be reachable again", 50);
    expect(await rows()).toEqual({ removed: ["a1 claude-x"], circuits: ["p"], locks: ["a2"] });
    // The operator reads the outage and its end, and nothing kept was rejected.
    expect(errors).toEqual([
      "database unreachable (could not extend file: No space left on device): serving from memory; writes are kept and replayed when it returns",
      "database reachable again: kept writes replayed, catching up",
    ]);
    registry.close();
  } finally {
    await admin.close();
    await store.close(() => 0);
  }
}, 60_000);

test("an unlock, a circuit closed and a restore by hand, each refused with 40001 twice, land on the third try instead of failing", async () => {
  const url = await pg.database("state_by_hand");
  const store = await openPostgresStore({ url, onError: () => {} });
  const admin = new SQL(url, { max: 1 });
  try {
    const lines: string[] = [];
    const r = registryOn(store, lines);
    r.remove();
    r.openCircuit();
    r.lock();
    const counts = async () => Promise.all(TABLES.map(async (t) => Number((await admin.unsafe(`SELECT count(*)::int AS n FROM ${t}`))[0].n)));
    await until(async () => (await counts()).every((n) => n === 1), 10_000, "the removal, circuit and lock rows", 20);
    for (const t of TABLES) {
      await admin.unsafe(`CREATE SEQUENCE ${t}_tries`);
      await admin.unsafe(`CREATE FUNCTION busy_${t}() RETURNS trigger AS $$ BEGIN IF nextval('${t}_tries') <= 2 THEN RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001'; END IF; RETURN OLD; END $$ LANGUAGE plpgsql`);
      await admin.unsafe(`CREATE TRIGGER busy BEFORE DELETE ON ${t} FOR EACH ROW EXECUTE FUNCTION busy_${t}()`);
    }
    expect(await r.registry.unlock("a2")).toMatchObject({ reason: expect.any(String) });
    expect(await r.registry.closeCircuit("p")).toMatchObject({ state: "open" });
    expect(await r.registry.restorePairings("a1", "claude-x")).toEqual(["claude-x"]);
    expect(await counts()).toEqual([0, 0, 0]);
    for (const t of TABLES) expect(Number((await admin.unsafe(`SELECT last_value FROM ${t}_tries`))[0].last_value)).toBe(3);
    expect(r.registry.snapshot().locks).toEqual([]);
    expect(r.registry.circuitOpen("p")).toBe(false);
    expect(lines).toEqual([]); // nothing lost, nothing said
    r.registry.close();
  } finally {
    await admin.close();
    await store.close(() => 0);
  }
}, 60_000);

/** A registry of accounts a1 and a2 of provider p on `store`, its log lines in `lines`, and the failures that write each kind of row. */
function registryOn(store: Store, lines: string[]) {
  const clock = { now: () => Date.now(), sleep: (ms: number) => Bun.sleep(ms) };
  const p = providerOf("p");
  const registry = new AccountRegistry(store, clock, { log: (line) => void lines.push(line) });
  registry.setAccounts([account("a1"), account("a2")], new Map([["p", p]]));
  const reply = (status: number, type: string, message: string) => classify({ status, bodyText: JSON.stringify({ type: "error", error: { type, message } }), now: clock.now() });
  return {
    registry,
    remove: () => registry.failure(registry.list()[0]!, p, "claude-x", reply(404, "not_found_error", "model: claude-x")), // a1's pairing of claude-x removed
    openCircuit: () => {
      for (let i = 0; i < CIRCUIT_THRESHOLD; i++) registry.failure(registry.list()[1]!, p, "claude-x", reply(500, "api_error", "boom"));
    },
    lock: () => registry.failure(registry.list()[1]!, p, "claude-x", reply(401, "authentication_error", "invalid x-api-key")), // a2 locked
  };
}

/** The log lines as objects, without their time. */
const withoutTime = (lines: string[]) => lines.map((l) => {
  const { time, ...rest } = JSON.parse(l) as { time: number; kind?: string } & Record<string, unknown>;
  expect(typeof time).toBe("number");
  return rest;
});

test("a removal, a circuit and a lock the database rejects with P0001 are each said in an error line and counted as lost, not tried again", async () => {
  const url = await pg.database("state_rejected");
  const storeErrors: string[] = [];
  const store = await openPostgresStore({ url, onError: (m: string) => void storeErrors.push(m) });
  const admin = new SQL(url, { max: 1 });
  try {
    await admin.unsafe(`CREATE SEQUENCE tries`);
    await admin.unsafe(`CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN PERFORM nextval('tries'); RAISE EXCEPTION 'refused by policy' USING ERRCODE = 'P0001'; END $$ LANGUAGE plpgsql`);
    for (const t of TABLES) await admin.unsafe(`CREATE TRIGGER refuse_${t} BEFORE INSERT ON ${t} FOR EACH ROW EXECUTE FUNCTION refuse()`);
    const lines: string[] = [];
    const r = registryOn(store, lines);
    r.remove();
    r.openCircuit();
    r.lock();
    expect(r.registry.circuitOpen("p")).toBe(true);
    await until(() => lines.length >= 3, 10_000, "three rejected-write lines", 20);
    await Bun.sleep(1500); // longer than a transient rejection's tries: none comes
    const tail = "the change is lost (the database keeps no row of it, other instances do not see it, and this one forgets it at its next re-read of the state; counted in switchyard_store_dropped_total)";
    // in the order the answers came (three statements on a pool): sorted by kind
    expect(withoutTime(lines).sort((a, b) => String(a.kind).localeCompare(String(b.kind)))).toEqual([
      { level: "error", msg: `the database rejected the write of provider p's circuit (SQLSTATE P0001: refused by policy), not tried again: ${tail}`, kind: "circuit", providerId: "p", sqlstate: "P0001", error: "refused by policy", tries: 1 },
      { level: "error", msg: `the database rejected the write of account a2's lock (SQLSTATE P0001: refused by policy), not tried again: ${tail}`, kind: "lock", accountId: "a2", sqlstate: "P0001", error: "refused by policy", tries: 1 },
      { level: "error", msg: `the database rejected the write of account a1's removed pairing of model claude-x (SQLSTATE P0001: refused by policy), not tried again: ${tail}`, kind: "removal", accountId: "a1", model: "claude-x", sqlstate: "P0001", error: "refused by policy", tries: 1 },
    ]);
    // each statement reached the database once
    expect(Number((await admin`SELECT last_value FROM tries`)[0].last_value)).toBe(3);
    for (const t of TABLES) expect(Number((await admin.unsafe(`SELECT count(*)::int AS n FROM ${t}`))[0].n)).toBe(0);
    // counted: the stop's lost state changes and switchyard_store_dropped_total (src/app.ts adds it to the store's count)
    expect(r.registry.lostStateWrites).toBe(3);
    expect(r.registry.retryWrites()).toBe(3);
    // not an outage: the store said nothing and is healthy
    expect(storeErrors).toEqual([]);
    expect(store.health()).toBe(true);
    r.registry.close();
  } finally {
    await admin.close();
    await store.close(() => 0);
  }
}, 60_000);

test("a lock refused with 40001 (serialization failure) twice lands on the third try; a removal refused with it every time is said after its last try", async () => {
  const url = await pg.database("state_serialize");
  const store = await openPostgresStore({ url, onError: () => {} });
  const admin = new SQL(url, { max: 1 });
  try {
    await admin.unsafe(`CREATE SEQUENCE lock_tries`);
    await admin.unsafe(`CREATE SEQUENCE removal_tries`);
    await admin.unsafe(`CREATE FUNCTION busy_twice() RETURNS trigger AS $$ BEGIN IF nextval('lock_tries') <= 2 THEN RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await admin.unsafe(`CREATE FUNCTION busy_always() RETURNS trigger AS $$ BEGIN PERFORM nextval('removal_tries'); RAISE EXCEPTION 'could not serialize access due to concurrent update' USING ERRCODE = '40001'; END $$ LANGUAGE plpgsql`);
    await admin.unsafe(`CREATE TRIGGER busy BEFORE INSERT ON account_locks FOR EACH ROW EXECUTE FUNCTION busy_twice()`);
    await admin.unsafe(`CREATE TRIGGER busy BEFORE INSERT ON removed_models FOR EACH ROW EXECUTE FUNCTION busy_always()`);
    const lines: string[] = [];
    const r = registryOn(store, lines);
    r.lock();
    r.remove();
    await until(async () => (await admin`SELECT account_id FROM account_locks`).length === 1, 10_000, "the lock to land", 20);
    expect((await admin`SELECT account_id, reason FROM account_locks`).map((x: { account_id: string }) => x.account_id)).toEqual(["a2"]);
    expect(Number((await admin`SELECT last_value FROM lock_tries`)[0].last_value)).toBe(3);
    await until(() => lines.length >= 1, 10_000, "the removal's line", 20);
    await Bun.sleep(500);
    expect(withoutTime(lines)).toEqual([
      {
        level: "error",
        msg: `the database rejected the write of account a1's removed pairing of model claude-x (SQLSTATE 40001: could not serialize access due to concurrent update), after ${STATE_WRITE_TRIES} tries: the change is lost (the database keeps no row of it, other instances do not see it, and this one forgets it at its next re-read of the state; counted in switchyard_store_dropped_total)`,
        kind: "removal",
        accountId: "a1",
        model: "claude-x",
        sqlstate: "40001",
        error: "could not serialize access due to concurrent update",
        tries: STATE_WRITE_TRIES,
      },
    ]);
    expect(Number((await admin`SELECT last_value FROM removal_tries`)[0].last_value)).toBe(STATE_WRITE_TRIES);
    expect(r.registry.lostStateWrites).toBe(1);
    r.registry.close();
  } finally {
    await admin.close();
    await store.close(() => 0);
  }
}, 60_000);
