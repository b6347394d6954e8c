import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import { cleanupTempDirs, tempDir, usage, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

async function readUntil(stream: ReadableStream<Uint8Array>, marker: string, timeoutMs: number): Promise<string> {
  const reader = stream.getReader();
  const dec = new TextDecoder();
  let text = "";
  const deadline = Date.now() + timeoutMs;
  while (!text.includes(marker)) {
    const left = deadline - Date.now();
    if (left <= 0) throw new Error(`child did not print ${marker}; got ${JSON.stringify(text)}`);
    const r = await Promise.race([reader.read(), Bun.sleep(left).then(() => null)]);
    if (!r || r.done) throw new Error(`child ended before ${marker}; got ${JSON.stringify(text)}`);
    text += dec.decode(r.value, { stream: true });
  }
  reader.releaseLock();
  return text;
}

test("kill -9 loses at most the last flush interval", async () => {
  const path = join(tempDir(), "sy.db");
  const interval = 1000;

  // the parent writes and waits past the interval (no close)
  const parent = openSqliteStore({ path, flushIntervalMs: 100 });
  for (let i = 0; i < 20; i++) parent.record(usage({ requestId: `parent-${i}` }));
  await Bun.sleep(300);
  expect(parent.stats().pendingUsage).toBe(0);

  // a child process records, waits past its interval, records more, and is killed with SIGKILL
  const child = Bun.spawn([process.execPath, join(import.meta.dir, "fixtures", "crash-child.ts"), path, String(interval), "30", "25"], {
    stdout: "pipe",
    stderr: "inherit",
  });
  await readUntil(child.stdout, "ready", 15_000);
  child.kill("SIGKILL");
  await child.exited;
  expect(child.signalCode).toBe("SIGKILL");
  parent.close();

  const store = openSqliteStore({ path });
  const count = (prefix: string) =>
    withRaw(path, (db) => (db.query("SELECT COUNT(*) AS n FROM usage WHERE request_id LIKE ?").get(`${prefix}%`) as { n: number }).n);
  expect(count("parent-")).toBe(20);
  expect(count("child-a-")).toBe(30); // flushed before the kill: all there
  const lost = 25 - count("child-b-"); // recorded within the last interval: may be lost, never half-written
  expect([0, 25]).toContain(lost);
  expect(store.recentTraces(100)).toHaveLength(30);
  // the cooldown was written through just before the kill
  expect(store.loadAccountState().cooldowns.map((c) => c.reason)).toEqual(["before kill"]);
  expect(withRaw(path, (db) => (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check)).toBe("ok");
  store.close();
}, 30_000);
