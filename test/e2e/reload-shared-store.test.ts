/**
 * A config reload on the shared store (SPEC 2.3, D-2): the new file's accounts are in force together
 * with the configuration that routes to them. The account list used to be rebuilt only after the
 * store's re-read of stored accounts and account state (on PostgreSQL a few round trips), so a reload
 * that added a provider with its account and pointed an alias at it answered every request arriving
 * meanwhile with 503 "No account is configured for provider …" (found trying reloads under load: ~1,500
 * of ~2,700 requests in 28 reloads). Here the store's `accounts` table is locked while the reload is
 * applied, so that re-read waits for the test to let it go, however fast the machine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startApp, type App } from "../../src/app.ts";
import { startFakeUpstream, type FakeUpstream } from "../support/fake-upstream.ts";
import { startPostgres, type TestPostgres } from "../support/postgres.ts";

let pg: TestPostgres;
let sql: SQL;
let fake: FakeUpstream;
let app: App;
let dir: string;
let configPath: string;

/** Provider `p<n>` with its one account, and alias `work` pointing at it. */
const config = (n: number) => `
providers:
  - { id: p${n}, kind: anthropic, base_url: "${fake.url}/p${n}" }
accounts:
  - { id: a${n}, provider: p${n}, api_key: env:UPSTREAM_KEY }
aliases:
  work: p${n}/claude-x
`;

beforeAll(async () => {
  pg = await startPostgres();
  const url = await pg.createDatabase("reload_shared");
  sql = new SQL(url);
  fake = await startFakeUpstream();
  dir = mkdtempSync(join(tmpdir(), "sy-reload-shared-"));
  configPath = join(dir, "config.yaml");
  writeFileSync(configPath, config(1));
  app = await startApp({ configPath, dataDir: dir, host: "127.0.0.1", port: 0, database: url, env: { UPSTREAM_KEY: "sk-upstream-reload" }, log: () => {}, fetchImpl: fake.fetch });
}, 120_000);

afterAll(async () => {
  await app?.shutdown(1000);
  await sql?.close();
  await fake?.stop();
  await pg?.destroy();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const ask = () => fetch(`${app.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "work", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) });

describe("a reload on PostgreSQL", () => {
  test("a provider added with its account serves the next request, while the store's re-read of accounts is still held", async () => {
    expect((await ask()).status).toBe(200);
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const lock = sql.begin(async (tx) => {
      await tx`LOCK TABLE accounts IN ACCESS EXCLUSIVE MODE`;
      locked();
      await held;
    });
    await isLocked;
    try {
      writeFileSync(configPath, config(2));
      const reload = await fetch(`${app.url}/admin/api/config/reload`, { method: "POST" });
      expect(reload.status).toBe(200);
      await reload.text();
      const res = await ask();
      const text = await res.text();
      expect({ status: res.status, text: text.slice(0, 200) }).toEqual({ status: 200, text: expect.stringContaining("fake upstream") });
      expect(fake.requests.at(-1)!.path).toBe("/p2/v1/messages");
    } finally {
      release();
      await lock;
    }
    // And after the re-read the same.
    expect((await ask()).status).toBe(200);
  }, 60_000);

  test("--database starts and reloads a file whose server.database names an unset variable (the flag wins; a warning says so)", async () => {
    const dir2 = mkdtempSync(join(tmpdir(), "sy-reload-shared-flag-"));
    const path2 = join(dir2, "config.yaml");
    const file = (n: number) => `server: { database: env:SY_DB_NOT_SET }\n${config(n)}`;
    writeFileSync(path2, file(1));
    const lines: string[] = [];
    const app2 = await startApp({ configPath: path2, dataDir: dir2, host: "127.0.0.1", port: 0, database: await pg.createDatabase("reload_shared_flag"), env: { UPSTREAM_KEY: "sk-upstream-reload" }, log: (l) => lines.push(l), fetchImpl: fake.fetch });
    try {
      expect(lines.join("\n")).toContain("environment variable SY_DB_NOT_SET is not set; the --database given to start is used");
      const res = await fetch(`${app2.url}/v1/messages`, { method: "POST", body: JSON.stringify({ model: "work", max_tokens: 10, messages: [{ role: "user", content: "hi" }] }) });
      expect(res.status).toBe(200);
      await res.text();
      writeFileSync(path2, file(3));
      const reload = await fetch(`${app2.url}/admin/api/config/reload`, { method: "POST" });
      const body = (await reload.json()) as { reloaded: boolean; restartNeeded: unknown[]; warnings: { path: string; message: string }[] };
      expect({ status: reload.status, reloaded: body.reloaded, restartNeeded: body.restartNeeded, warnings: body.warnings.map((w) => w.path) }).toEqual({ status: 200, reloaded: true, restartNeeded: [], warnings: ["server.database"] });
    } finally {
      await app2.shutdown(1000);
      rmSync(dir2, { recursive: true, force: true });
    }
  }, 60_000);
});
