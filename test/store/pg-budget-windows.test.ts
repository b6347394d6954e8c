/**
 * On PostgreSQL (SPEC D-2) a client key's budget (SPEC 9.6) counts in the shared counters
 * (src/limits/shared-counters.ts); the `key_budget_windows` table of the embedded store's memory
 * counters is neither read nor written. An instance there used to read it at start into memory counters
 * that nothing used, and every usage flush carried an (always empty) upsert into it. Here that table is
 * gone (renamed away): the instance starts without a word about it, a request with a budget is served,
 * its usage row lands and its budget use shows. Before, the start logged "key budget windows could not
 * be read" and every flush failed on the missing table, so no usage row was ever written.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp, type App } from "../../src/app.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { roomInWindow } from "../support/aligned-window.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

let pg: TestPostgres;
let sql: SQL;
let fake: FakeUpstream;
let app: App;
let dir: string;
const logs: string[] = [];
const KEY = "sy-budget-key-on-postgres-0001";

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase("budget_windows");
  // Migrated as a first start would, then the embedded store's budget table taken away.
  await (await openPostgresStore({ url, onError: () => {} })).close();
  sql = new SQL(url, { max: 1 });
  await sql`ALTER TABLE key_budget_windows RENAME TO key_budget_windows_gone`;
  fake = await startFakeUpstream();
  dir = mkdtempSync(join(tmpdir(), "sy-pg-budget-"));
  const configPath = join(dir, "config.yaml");
  writeFileSync(
    configPath,
    `providers:
  - { id: p, kind: anthropic, base_url: "${fake.url}" }
accounts:
  - { id: a, provider: p, api_key: env:UPSTREAM_KEY }
keys:
  - { name: ci, key: env:CI_KEY, limits: { budgets: [{ window: 1d, tokens: 100000 }] } }
`,
  );
  app = await startApp({ configPath, dataDir: dir, host: "127.0.0.1", port: 0, database: url, env: { UPSTREAM_KEY: "sk-upstream-budget", CI_KEY: KEY }, log: (l) => void logs.push(l), fetchImpl: fake.fetch });
}, 120_000);

afterAll(async () => {
  await app?.shutdown(1000);
  await sql?.close();
  await fake?.stop();
  await pg?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a key budget on PostgreSQL", () => {
  test("needs no key_budget_windows table: the start says nothing of it, the usage row lands, the budget use shows", async () => {
    // One 1d window (they end at midnight UTC) from the request to the read of its use: across its end the use is 0 again.
    await roomInWindow(86_400_000, 20_000);
    const res = await fetch(`${app.url}/v1/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: "p/claude-x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }),
    });
    expect(res.status).toBe(200);
    await res.text();
    await app.store.flush();
    expect((await sql`SELECT key_name FROM usage`).map((r: { key_name: string }) => r.key_name)).toEqual(["ci"]);
    expect(logs.filter((l) => l.includes("budget windows"))).toEqual([]);
    const keys = (await (await fetch(`${app.url}/admin/api/keys`)).json()) as { keys: Array<{ name: string; use?: { budgets: Array<{ used: number }> } }> };
    expect(keys.keys.find((k) => k.name === "ci")?.use?.budgets[0]?.used).toBeGreaterThan(0);
  }, 60_000);
});
