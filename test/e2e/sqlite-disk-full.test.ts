/**
 * A gateway on the embedded store whose disk fills up (the SRE tryout of 2026-12-07, a 2 MB tmpfs):
 * simulated without root by `PRAGMA max_page_count` on the store's connection, which makes SQLite's
 * writes fail with "database or disk is full" as a full file system does. Before: `/health` said
 * {"status":"ok","db":"ok"} while every flush failed, each failed flush wrote a plain-text line on
 * stderr (about one a second) and none said when writes worked again, and a stop that could not write
 * the buffered usage rows was a clean one (exit 0, an info `stopped` line). Now /health says
 * `db: "failing"` (200: the instance serves, as on an unreachable PostgreSQL), the store logs one JSON
 * warn line per outage and an info line once a write works again, and such a stop logs an error line
 * counting the rows lost and exits 1.
 */
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { providersAtFake } from "../support/configs.ts";
import { startGateway, type TestGateway } from "../support/gateway.ts";

const YAML = `
${providersAtFake(["oai", "openai"])}
accounts:
  - { id: oai-1, provider: oai, api_key: env:FAKE_KEY }
`;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startGateway(YAML);
});
afterAll(async () => {
  await gw?.stop();
});

/** The store's connection (private): the test's stand-in for the file system under it. */
const connection = () => (gw.app.store as unknown as { ctx: { db: Database } }).ctx.db;

/** Lets the database file grow no more (its free pages used up first), or again. */
function diskFull(full: boolean): void {
  const db = connection();
  if (!full) return void db.run("PRAGMA max_page_count = 1000000");
  db.run("VACUUM");
  db.run(`PRAGMA max_page_count = ${(db.query("PRAGMA page_count").get() as { page_count: number }).page_count}`);
}

/** Sends requests (answered by the fake) until a flush of their usage rows fails; at most 600. */
async function requestsUntilAFlushFails(): Promise<void> {
  const before = gw.app.store.stats().flushErrors;
  for (let sent = 0; sent < 600; sent += 20) {
    const replies = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${gw.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "oai/fake-model", messages: [{ role: "user", content: "hi ".repeat(50) }] }) }),
      ),
    );
    for (const r of replies) expect(r.status).toBe(200);
    gw.app.settle();
    gw.app.store.flush();
    if (gw.app.store.stats().flushErrors > before) return;
  }
  throw new Error("no flush failed");
}

const health = async () => {
  const r = await fetch(`${gw.url}/health`);
  return [r.status, await r.json()];
};
const storeLines = () => gw.logs.filter((l) => l.includes('"msg":"store: ')).map((l) => JSON.parse(l) as { level: string; msg: string });

test("writes failing: /health says db failing (200, serving), one JSON warn line per outage, an info line when writes work again", async () => {
  expect(await health()).toEqual([200, { status: "ok", db: "ok" }]);
  diskFull(true);
  await requestsUntilAFlushFails();
  for (let i = 0; i < 3; i++) gw.app.store.flush(); // the timer's flushes, once a second, fail as well
  expect(gw.app.store.stats().flushErrors).toBeGreaterThanOrEqual(4);
  expect(await health()).toEqual([200, { status: "ok", db: "failing" }]);
  let lines = storeLines();
  expect(lines).toHaveLength(1);
  expect(lines[0]!.level).toBe("warn");
  expect(lines[0]!.msg).toStartWith("store: database writes failing (");
  expect(lines[0]!.msg).toContain("full");

  diskFull(false);
  gw.app.store.flush();
  expect(gw.app.store.stats().pendingUsage).toBe(0);
  expect(await health()).toEqual([200, { status: "ok", db: "ok" }]);
  lines = storeLines();
  expect(lines).toHaveLength(2);
  expect(lines[1]!.level).toBe("info");
  expect(lines[1]!.msg).toStartWith("store: database writes work again: ");
}, 60_000);

test("a stop while the disk is full: the usage rows it could not write are counted lost in an error line, and the stop fails (exit 1)", async () => {
  diskFull(true);
  await requestsUntilAFlushFails();
  const waiting = gw.app.store.stats().pendingUsage;
  expect(waiting).toBeGreaterThan(0);
  const traces = gw.app.store.stats().pendingTraces;
  expect(await gw.app.shutdown(1000)).toBe(false);
  const lost = gw.logs.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.level === "error" && String(l.msg).startsWith("stopping while writes to "));
  expect(lost).toMatchObject({ usage: waiting, traces });
  expect(String(lost!.msg)).toContain(`${waiting} usage rows`);
  expect(String(lost!.msg)).toContain("are lost");
  expect(gw.app.store.stats().dropped).toBe(waiting + traces); // switchyard_store_dropped_total: usage rows and traces
}, 60_000);
