/**
 * Review finding (session 45): src/admin/config-writer.ts runs every admin configuration change of an
 * instance one at a time (combos, aliases, settings, accounts, and all client key changes), so one change
 * that waits holds back every unrelated change queued behind it. On PostgreSQL a combo/alias create takes
 * an advisory lock on the folded name (src/store/postgres/routing-objects.ts createIn); while another
 * instance's transaction holds it (played here by a session lock on a connection of the test's own),
 * the create waits for SHARED_ANSWER_MS (10 s) and then answers 503, and a revoke of a leaked client key
 * sent to the same instance meanwhile waits the whole time behind it. Before session 45 the revoke did
 * not wait (no queue; the create waited alone).
 * Expected: DELETE /admin/api/keys/:name answered within 2 s. Before the fix: ~10 s (after the create's 503).
 *
 * Fixed: src/admin/config-writer.ts keeps one queue per kind of object (client keys; combos, aliases and
 * settings; accounts), and a key's revoke, disable, enable and rotate go through none (they check no
 * name), so neither a combo create nor a key create waiting on a name lock holds them back (revoke
 * answered in 11 ms here; 9718 ms with the single queue).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { startInstance, stopInstance, type Instance } from "../support/instance.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

let pg: TestPostgres | undefined;
let a: Instance | undefined;
let db = "";
beforeAll(async () => {
  pg = await startPostgres();
  db = await pg.createDatabase("writer_hol");
  const yaml = `providers:\n  - { id: p, kind: openai, base_url: "http://127.0.0.1:9/v1" }\naccounts:\n  - { id: p-1, provider: p, api_key: env:P_KEY }\n`;
  a = await startInstance({ yaml, env: { P_KEY: "sk-test-account-p" }, args: ["--database", db], timeoutMs: 90_000 });
}, 200_000);
afterAll(async () => {
  await stopInstance(a);
  await pg?.destroy();
});

test("a key revoke is not held back by an unrelated combo create waiting on another instance's name lock", async () => {
  const json = { "content-type": "application/json" };
  expect((await fetch(`${a!.url}/admin/api/keys`, { method: "POST", headers: json, body: JSON.stringify({ name: "leaked" }) })).status).toBe(201);
  const other = new SQL(db);
  const held = await other.reserve();
  await held`SELECT pg_advisory_lock(hashtext(${"routing_name:fast"}))`; // another instance's create of "fast", under way
  const create = fetch(`${a!.url}/admin/api/combos`, { method: "POST", headers: json, body: JSON.stringify({ name: "Fast", targets: [{ model: "p/m" }] }) });
  await Bun.sleep(300);
  const t0 = performance.now();
  const revoke = await fetch(`${a!.url}/admin/api/keys/leaked`, { method: "DELETE" });
  const revokeMs = Math.round(performance.now() - t0);
  const createStatus = (await create).status;
  await held`SELECT pg_advisory_unlock_all()`;
  held.release();
  await other.close();
  expect({ revoke: revoke.status, createStatus }).toEqual({ revoke: 200, createStatus: 503 });
  expect(revokeMs).toBeLessThan(2_000);
}, 60_000);

test("a key revoke and disable are not held back by a key create waiting on another instance's name lock", async () => {
  const json = { "content-type": "application/json" };
  for (const name of ["leaked-2", "leaked-3"]) expect((await fetch(`${a!.url}/admin/api/keys`, { method: "POST", headers: json, body: JSON.stringify({ name }) })).status).toBe(201);
  const other = new SQL(db);
  const held = await other.reserve();
  await held`SELECT pg_advisory_lock(hashtext(${"client_key:ci-bot"}))`; // another instance's create of key "ci-bot", under way
  const create = fetch(`${a!.url}/admin/api/keys`, { method: "POST", headers: json, body: JSON.stringify({ name: "ci-bot" }) });
  await Bun.sleep(300);
  const t0 = performance.now();
  const [revoke, disable] = await Promise.all([fetch(`${a!.url}/admin/api/keys/leaked-2`, { method: "DELETE" }), fetch(`${a!.url}/admin/api/keys/leaked-3/disable`, { method: "POST" })]);
  const ms = Math.round(performance.now() - t0);
  const createStatus = (await create).status;
  await held`SELECT pg_advisory_unlock_all()`;
  held.release();
  await other.close();
  expect({ revoke: revoke.status, disable: disable.status, createStatus }).toEqual({ revoke: 200, disable: 200, createStatus: 503 });
  expect(ms).toBeLessThan(2_000);
}, 60_000);
