/**
 * A start that upgrades the data directory's store says so before it says it listens: the upgrade
 * warning (stdout, gathered into the request log's buffer) came after the `switchyard listening` line
 * (stderr) in a log that joins both (`switchyard start > gw.log 2>&1`, journald), with an earlier
 * timestamp, so an operator reading top-down saw the gateway listening before being told that its file
 * was migrated one way (the upgrade tryout of 2026-12-07).
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS, migrate } from "../../src/store/sqlite/migrations.ts";
import { SOURCE_CLI } from "../support/instance.ts";

const dataDir = mkdtempSync(join(tmpdir(), "switchyard-upgrade-start-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

test("the store's upgrade warning comes before `switchyard listening` in a log of stdout and stderr together", async () => {
  const old = new Database(join(dataDir, "switchyard.db"));
  old.run("PRAGMA journal_mode = WAL");
  migrate(old, () => 1, MIGRATIONS.filter((m) => m.version <= 9));
  old.close();
  const logPath = join(dataDir, "gw.log");
  const fd = openSync(logPath, "a");
  // one file for both streams, as `> gw.log 2>&1` gives
  const proc = Bun.spawn([...SOURCE_CLI, "start", "--host", "127.0.0.1", "--port", "0", "--data-dir", dataDir], {
    cwd: dataDir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dataDir },
    stdin: "ignore",
    stdout: fd,
    stderr: fd,
  });
  closeSync(fd);
  const messages = () =>
    readFileSync(logPath, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => (JSON.parse(l) as { msg: string }).msg);
  try {
    while (!messages().includes("switchyard listening")) {
      if (proc.exitCode !== null) throw new Error(`switchyard did not start:\n${readFileSync(logPath, "utf8")}`);
      await Bun.sleep(20);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
  const said = messages();
  const upgraded = said.findIndex((m) => m.startsWith("store upgraded from schema 9 to "));
  expect(upgraded).toBeGreaterThanOrEqual(0);
  expect(upgraded).toBeLessThan(said.indexOf("switchyard listening"));
}, 60_000); // a start from source on a loaded machine takes seconds
