/**
 * What a stop while PostgreSQL is away could not write (README "Running several instances"): kept in
 * the data directory's `unwritten-rows.jsonl` (mode 0600) and written by the next open, once (each batch
 * keeps its flush id: a batch written already, by a start that died before it removed the file or by
 * the flush in the air at the stop that committed after all, writes nothing again); when
 * that file cannot be written, the rows are lost and counted in `switchyard_store_dropped_total`, the
 * batch that was in the air too (it was not counted before). A throwaway PostgreSQL whose usage table a
 * test connection locks: the store's flush goes unanswered, as with a stalled database.
 */
import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { GatewayMetrics } from "../../src/http/metrics.ts";
import { UNWRITTEN_FILE } from "../../src/store/postgres/keep-unwritten.ts";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/store.ts";
import { postgresForFile, tempDir, trace, usage } from "./helpers.ts";

const pg = postgresForFile();

/** The usage table locked by another connection until `release`: the store's flushes to it go unanswered. */
async function lockUsage(sql: SQL): Promise<{ release: () => Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const holder = sql.begin(async (tx) => {
    await tx`LOCK TABLE usage IN ACCESS EXCLUSIVE MODE`;
    locked();
    await released;
  });
  await isLocked;
  return {
    release: async () => {
      release();
      await holder.catch(() => {});
    },
  };
}

/**
 * A store whose flush of 3 usage rows and 3 traces is in the air (unanswered: the usage table is locked
 * through `sql` and the store is away), with 2 more usage rows buffered after it.
 */
async function storeWithRowsInTheAir(url: string, file: string, errors: string[], sql: SQL): Promise<{ s: PostgresStore; lock: { release: () => Promise<void> } }> {
  const s = await openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: 300, unwrittenFile: file, onError: (m) => errors.push(m) });
  const lock = await lockUsage(sql);
  for (let i = 0; i < 3; i++) {
    s.record(usage({ requestId: `air-${i}` }));
    s.save(trace(i, { requestId: `air-${i}` }));
  }
  await s.flush();
  expect(s.health()).toBe(false);
  s.record(usage({ requestId: "buffered-0" }));
  s.record(usage({ requestId: "buffered-1" }));
  return { s, lock };
}

const count = async (sql: SQL, where = "true") => ((await sql.unsafe(`SELECT count(*)::int AS n FROM usage WHERE ${where}`))[0] as { n: number }).n;

/** switchyard_store_dropped_total as GET /metrics would say it for this store. */
async function droppedMetric(s: PostgresStore): Promise<number> {
  const m = new GatewayMetrics({ accounts: () => ({ accounts: [], providers: new Map(), cooldowns: [] }), circuit: () => ({ state: "closed" }), store: () => s.stats(), inflight: () => 0 });
  const hit = /^switchyard_store_dropped_total (\d+)$/m.exec(await m.text());
  return Number(hit?.[1]);
}

describe("a stop while the database does not answer", () => {
  test("the rows are kept in unwritten-rows.jsonl (0600, no secret), nothing is dropped; the next open writes them (not a binding lapsed since) and removes the file; a start that died before removing it writes none twice", async () => {
    const url = await pg.database("keep");
    const dir = tempDir();
    const file = join(dir, UNWRITTEN_FILE);
    const errors: string[] = [];
    const sql = new SQL(url, { max: 2 });
    let lock: { release: () => Promise<void> } | undefined;
    try {
      const { s, lock: l } = await storeWithRowsInTheAir(url, file, errors, sql);
      lock = l;
      // conversation bindings: one still valid at the next start, one lapsed by then (not written back)
      const lapsesAt = Date.now() + 1500;
      s.bind({ key: "conv-live", accountId: "acct-1", expiresAt: Date.now() + 600_000 });
      s.bind({ key: "conv-lapsed", accountId: "acct-1", expiresAt: lapsesAt });
      const result = await s.close(Date.now() + 500);
      expect(result).toEqual({ usage: 0, traces: 0, state: 0, kept: { file, usage: 5, traces: 3, state: 2 } });
      expect(s.stats().dropped).toBe(0);
      expect(await droppedMetric(s)).toBe(0);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      const text = readFileSync(file, "utf8");
      expect(text.trim().split("\n")).toHaveLength(1 + 5 + 3 + 2);
      expect(text).toContain("buffered-1");
      // what the database would hold: the key's name, never a request's body or a credential
      expect(text).not.toContain("Bearer");
      await lock.release();
      expect(await count(sql)).toBe(0);
      while (Date.now() <= lapsesAt) await Bun.sleep(50);
      const infos: string[] = [];
      const reopen = () => openPostgresStore({ url, flushIntervalMs: 60_000, unwrittenFile: file, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
      const again = await reopen();
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
        expect(await count(sql)).toBe(5);
        expect(await count(sql, "request_id LIKE 'air-%'")).toBe(3);
        expect(((await sql`SELECT count(*)::int AS n FROM route_traces`)[0] as { n: number }).n).toBe(3);
        expect(infos.some((m) => m.includes("5 usage rows, 3 route traces and 1 routing state changes") && m.includes("the file is removed"))).toBe(true);
        expect(((await sql`SELECT key FROM bindings ORDER BY key`) as { key: string }[]).map((r) => r.key)).toEqual(["conv-live"]);
      } finally {
        await again.close();
      }
      // A start that wrote them and died before it removed the file: the next writes none of them again.
      writeFileSync(file, text, { mode: 0o600 });
      const third = await reopen();
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
      } finally {
        await third.close();
      }
      expect(await count(sql)).toBe(5);
      expect(errors.filter((m) => m.includes(UNWRITTEN_FILE))).toEqual([]);
    } finally {
      await lock?.release();
      await sql.close();
    }
  }, 60_000);

  test("lines of the file that cannot be read are not deleted with it: once the rest is written the file is kept as unwritten-rows.jsonl.unreadable-<ms> (0600), and a stop replacing it first keeps such a copy", async () => {
    const url = await pg.database("keep");
    const dir = tempDir();
    const file = join(dir, UNWRITTEN_FILE);
    const errors: string[] = [];
    const sql = new SQL(url, { max: 2 });
    let lock: { release: () => Promise<void> } | undefined;
    const damaged = ['{"batch":"hand-edited","usage":[1,2', "not json at all"];
    const asides = () => readdirSync(dir).filter((n) => /^unwritten-rows\.jsonl\.unreadable-\d+$/.test(n));
    try {
      const { s, lock: l } = await storeWithRowsInTheAir(url, file, errors, sql);
      lock = l;
      expect((await s.close(Date.now() + 500))?.kept?.usage).toBe(5);
      appendFileSync(file, damaged.join("\n") + "\n");
      // The next start cannot write either (the table still locked), and its stop keeps a row of its own.
      const infos: string[] = [];
      const open = (answerMs?: number) => openPostgresStore({ url, flushIntervalMs: 60_000, flushAnswerMs: answerMs, unwrittenFile: file, onError: (m) => errors.push(m), onInfo: (m) => infos.push(m) });
      const second = await open(300);
      await second.flush();
      second.record(usage({ requestId: "second-start" }));
      expect((await second.close(Date.now() + 500))?.kept?.usage).toBe(6);
      const [copy] = asides();
      expect(copy).toBeDefined();
      expect(statSync(join(dir, copy!)).mode & 0o777).toBe(0o600);
      for (const line of damaged) expect(readFileSync(join(dir, copy!), "utf8")).toContain(line);
      expect(errors.some((m) => m.includes("2 lines could not be read") && m.includes(join(dir, copy!)))).toBe(true);
      expect(readFileSync(file, "utf8")).toContain("second-start");
      // The database answers again: the readable rows are written, the damaged file is kept aside, not deleted.
      appendFileSync(file, damaged[1] + "\n");
      await lock.release();
      lock = undefined;
      await Bun.sleep(5); // a later ms than the first copy's name
      const third = await open();
      try {
        for (const end = Date.now() + 10_000; existsSync(file) && Date.now() < end; ) await Bun.sleep(50);
        expect(existsSync(file)).toBe(false);
        expect(await count(sql)).toBe(6);
      } finally {
        await third.close();
      }
      const kept = asides().filter((n) => n !== copy);
      expect(kept).toHaveLength(1);
      expect(statSync(join(dir, kept[0]!)).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(dir, kept[0]!), "utf8")).toContain(damaged[1]);
      expect(errors.some((m) => m.includes("1 lines of") && m.includes(`kept as ${join(dir, kept[0]!)}`))).toBe(true);
      expect(infos.some((m) => m.includes(`the file is kept as ${join(dir, kept[0]!)}`))).toBe(true);
    } finally {
      await lock?.release();
      await sql.close();
    }
  }, 60_000);

  test("when the file cannot be written (a directory stands at its path) the rows are lost: counted in switchyard_store_dropped_total, the flush in the air too, and the reason is logged", async () => {
    const url = await pg.database("keep");
    const dir = tempDir();
    const file = join(dir, UNWRITTEN_FILE);
    const errors: string[] = [];
    const sql = new SQL(url, { max: 2 });
    let lock: { release: () => Promise<void> } | undefined;
    try {
      const { s, lock: l } = await storeWithRowsInTheAir(url, file, errors, sql);
      lock = l;
      mkdirSync(join(file, "in-the-way"), { recursive: true }); // after the open: the disk fails at the stop
      const result = await s.close(Date.now() + 500);
      expect(result).toEqual({ usage: 5, traces: 3, state: 0 });
      expect(await droppedMetric(s)).toBe(8);
      expect(errors.some((m) => m.startsWith(`could not keep the unwritten rows in ${file}`))).toBe(true);
      expect(statSync(file).isDirectory()).toBe(true);
    } finally {
      await lock?.release();
      await sql.close();
    }
  }, 60_000);
});
