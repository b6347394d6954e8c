/**
 * Account-state writes a real PostgreSQL refuses for a full disk (SQLSTATE 53100, made here by triggers
 * that raise it on INSERT): a removed account/model pairing and an opened provider circuit are kept and
 * written when the database takes writes again, as a lock is (src/store/postgres/db.ts's outbox: a
 * write refused as "cannot serve now", class 53, waits in order with every other write-through while the
 * instance serves from memory; src/accounts/retry-writes.ts is for the embedded store only). A statement
 * the database rejects otherwise (any other SQLSTATE) is tried once, for every kind alike: memory holds
 * until the next re-read (README "Left from session 43's work").
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { classify } from "../../pipeline/classify.ts";
import { AccountRegistry, CIRCUIT_THRESHOLD } from "../../src/accounts/registry.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
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
