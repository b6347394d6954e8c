/**
 * Review finding (session 45): the PostgreSQL check-and-insert of a combo/alias name now takes its
 * advisory lock on the folded name (`routing_name:` + NFC lower case, src/store/postgres/routing-objects.ts
 * createIn), where the build before this session took it on the exact name (`routing_name:` + name). No
 * schema version marks the change, so during a rolling upgrade an instance of the previous build (still
 * serving on the same database, as README "Upgrading" says such instances do) and an upgraded one no
 * longer exclude each other for the SAME name: an old instance's create of alias `Fast` (checked free under
 * `routing_name:Fast`) and a new instance's create of combo `Fast` (under `routing_name:fast`) both commit,
 * leaving a combo and an alias of one name, which the lock was introduced to prevent (newuser15 N8).
 * The same holds for client keys (`client_key:` + name became `client_key:` + lower-cased name).
 *
 * Here the old instance's transaction is played with the previous build's statements (git show
 * c4c7e180:src/store/postgres/routing-objects.ts), paused after its check. Expected: the upgraded store's
 * createCombo waits for that transaction and answers false (the name is taken). Before the fix: it answers true
 * at once, and both rows commit.
 *
 * Fixed: a create takes the locks of the exact and of the folded name, sorted (src/store/postgres/name-locks.ts),
 * for combos/aliases and client keys; two upgraded instances creating `Fast` and `FAST` at once (each
 * needing `routing_name:fast`) still finish, one refused.
 */
import { expect, test } from "bun:test";
import { SQL } from "bun";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { postgresForFile } from "./helpers.ts";

const pg = postgresForFile();

test("a create of the same name by a previous-build instance and an upgraded one: one of them is refused", async () => {
  const url = await pg.database("mixed_lock");
  const store = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
  const old = new SQL(url);
  let resume!: () => void;
  const paused = new Promise<void>((r) => (resume = r));
  let checked!: () => void;
  const checkedFree = new Promise<void>((r) => (checked = r));
  // The previous build's createIn("alias", "Fast", ...), paused between its check and its insert.
  const oldCreate = old.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${"routing_name:Fast"}))`;
    const [taken] = await tx`SELECT (EXISTS (SELECT 1 FROM stored_combos WHERE name = ${"Fast"}) OR EXISTS (SELECT 1 FROM stored_aliases WHERE name = ${"Fast"})) AS taken`;
    checked();
    await paused;
    if (taken?.taken) return false;
    const now = Date.now();
    await tx`INSERT INTO stored_aliases (name, target, created_at, updated_at) VALUES (${"Fast"}, ${"p/m"}, ${now}, ${now})`;
    return true;
  });
  await checkedFree;
  const newCreate = Promise.resolve(store.createCombo("Fast", { name: "Fast", targets: [{ model: "p/m" }] }));
  const first = await Promise.race([newCreate.then((v) => `answered ${v}`), Bun.sleep(1500).then(() => "waiting")]);
  resume();
  const [oldMade, newMade] = await Promise.all([oldCreate, newCreate]);
  const both = { combos: (await store.listCombos()).map((c) => c.name), aliases: (await store.listAliases()).map((a) => a.name) };
  await old.close();
  await store.close();
  expect({ first, made: [oldMade, newMade].filter(Boolean).length, both }).toEqual({ first: "waiting", made: 1, both: { combos: [], aliases: ["Fast"] } });
}, 60_000);

test("a key created by a previous-build instance and an upgraded one under the same name: one of them is refused", async () => {
  const url = await pg.database("mixed_key_lock");
  const store = await openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
  const old = new SQL(url);
  let resume!: () => void;
  const paused = new Promise<void>((r) => (resume = r));
  let checked!: () => void;
  const checkedFree = new Promise<void>((r) => (checked = r));
  // The previous build's createKey("ci-Bot"), paused between its check and its insert.
  const oldCreate = old.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(hashtext(${"client_key:ci-Bot"}))`;
    const [row] = await tx`SELECT COUNT(*) FILTER (WHERE revoked_at IS NULL)::int AS active FROM client_keys WHERE name = ${"ci-Bot"}`;
    checked();
    await paused;
    if (Number(row?.active ?? 0) > 0) return false;
    await tx`INSERT INTO client_keys (name, generation, hash, scopes, tag, created_at, revoked_at, limits, prefix)
             VALUES (${"ci-Bot"}, ${1}, ${"0".repeat(64)}, ${"[]"}, ${null}, ${Date.now()}, NULL, ${null}, ${null})`;
    return true;
  });
  await checkedFree;
  const newCreate = Promise.resolve(store.createKey("ci-Bot")).then(
    () => "created",
    (e: Error) => `refused: ${e.message}`,
  );
  const first = await Promise.race([newCreate.then((v) => `answered ${v}`), Bun.sleep(1500).then(() => "waiting")]);
  resume();
  const [oldMade, newMade] = await Promise.all([oldCreate, newCreate]);
  const rows = (await old`SELECT name FROM client_keys WHERE revoked_at IS NULL`) as Array<{ name: string }>;
  await old.close();
  await store.close();
  expect({ first, oldMade, newMade, rows: rows.map((r) => r.name) }).toEqual({ first: "waiting", oldMade: true, newMade: 'refused: a key named "ci-Bot" already exists', rows: ["ci-Bot"] });
}, 60_000);

test("two upgraded instances creating look-alike names at once do not deadlock: one is created, the others refused", async () => {
  const url = await pg.database("folded_lock_order");
  const stores = await Promise.all([0, 1, 2].map(() => openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} })));
  for (let round = 0; round < 5; round++) {
    const names = [`Fast${round}`, `FAST${round}`, `fAsT${round}`];
    const made = await Promise.all(names.map((n, i) => (i === 1 ? stores[i]!.createAlias(n, "p/m") : stores[i]!.createCombo(n, { name: n, targets: [{ model: "p/m" }] }))));
    expect(made.filter(Boolean).length).toBe(1);
  }
  const all = [...(await stores[0]!.listCombos()).map((c) => c.name), ...(await stores[0]!.listAliases()).map((a) => a.name)];
  await Promise.all(stores.map((s) => s.close()));
  expect(all.length).toBe(5);
}, 60_000);
