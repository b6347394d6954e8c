/**
 * Upgrading the embedded store (a new version started on a data directory an earlier one wrote): the
 * migration is one way (an earlier build refuses a newer schema), so the file as it was is kept beside
 * it as `switchyard.db.schema-<N>.bak`, the start says so once, and a build that finds a file newer
 * than it names that copy as the way back (newuser11's tryout: the upgrade 5 → 9 was silent, with no
 * copy, and the earlier build then refused to start).
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { openStore } from "../../src/store/open.ts";
import { MIGRATIONS, SCHEMA_VERSION, migrate } from "../../src/store/sqlite/migrations.ts";
import { cleanupTempDirs, tempDir, withRaw } from "./helpers.ts";

afterAll(cleanupTempDirs);

const clock = { now: () => Date.parse("2026-12-05T02:30:00Z"), sleep: (ms: number) => Bun.sleep(ms) };
const version = (path: string) => withRaw(path, (db) => (db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number }).v);

test("an upgrade keeps the file as it was, says so once, and a newer file names the copy as the way back", async () => {
  const dataDir = tempDir();
  const path = join(dataDir, "switchyard.db");
  const old = new Database(path);
  old.run("PRAGMA journal_mode = WAL");
  migrate(old, () => 1, MIGRATIONS.filter((m) => m.version <= 5));
  old.run("INSERT INTO client_keys (name, hash, scopes, tag, created_at) VALUES ('kept', 'abc', '[]', NULL, 1)");
  old.close();

  const lines: string[] = [];
  const store = await openStore(undefined, dataDir, undefined, (l) => lines.push(l), clock, () => {});
  expect((await store.listKeys()).map((k) => k.name)).toEqual(["kept"]);
  await store.close();
  const copy = `${path}.schema-5.bak`;
  expect(lines.map((l) => JSON.parse(l))).toEqual([
    {
      level: "warn",
      time: clock.now(),
      msg: `store upgraded from schema 5 to ${SCHEMA_VERSION}: earlier switchyard versions refuse to open it; the file as it was is kept at ${copy} (to go back to an earlier version, stop switchyard, remove ${path}-wal and ${path}-shm (left by a stop that was not clean: SQLite would apply them to the copy and corrupt it), then copy it over the file: cp ${copy} ${path}: what this version stored since is then lost)`,
      path,
      backup: copy,
    },
  ]);
  // the copy is the earlier build's file: its schema, its rows, the database's mode (it holds credentials)
  expect(version(copy)).toBe(5);
  expect(withRaw(copy, (db) => db.query("SELECT name FROM client_keys").all())).toEqual([{ name: "kept" }]);
  expect((statSync(copy).mode & 0o777).toString(8)).toBe("600");
  expect(version(path)).toBe(SCHEMA_VERSION);

  // a start on the current file says nothing and copies nothing more
  lines.length = 0;
  await (await openStore(undefined, dataDir, undefined, (l) => lines.push(l), clock, () => {})).close();
  expect(lines).toEqual([]);
  expect(existsSync(`${path}.schema-${SCHEMA_VERSION}.bak`)).toBe(false);

  // a later version upgraded the file beyond this build: refused, naming the copy this build can open
  withRaw(path, (db) => db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from a later version', 1)", [SCHEMA_VERSION + 1]));
  const refused = await openStore(undefined, dataDir, undefined, () => {}, clock, () => {}).then(
    () => "opened",
    (e: Error) => e.message,
  );
  expect(refused).toBe(
    `database schema version ${SCHEMA_VERSION + 1} is newer than this build supports (${SCHEMA_VERSION}); upgrade switchyard; or, to run this version, put ${copy} (the file as it was before a newer version upgraded it) in place of ${path} (stop switchyard, remove ${path}-wal and ${path}-shm (left by a stop that was not clean: SQLite would apply them to the copy and corrupt it), then copy it over the file: cp ${copy} ${path}): what was stored since is then lost`,
  );
});

test("a new data directory is created at the latest schema with no copy and nothing said", async () => {
  const dataDir = tempDir();
  const lines: string[] = [];
  await (await openStore(undefined, dataDir, undefined, (l) => lines.push(l), clock, () => {})).close();
  expect(lines).toEqual([]);
  expect(version(join(dataDir, "switchyard.db"))).toBe(SCHEMA_VERSION);
  expect(existsSync(join(dataDir, "switchyard.db.schema-0.bak"))).toBe(false);
});

test("when the copy cannot be made the file is left as it was, and the start says why and what to do", async () => {
  const dataDir = tempDir();
  const path = join(dataDir, "switchyard.db");
  const old = new Database(path);
  migrate(old, () => 1, MIGRATIONS.filter((m) => m.version <= 5));
  old.close();
  // something that is not a file stands where the copy goes
  mkdirSync(join(`${path}.schema-5.bak`, "x"), { recursive: true });
  const refused = await openStore(undefined, dataDir, undefined, () => {}, clock, () => {}).then(
    () => "opened",
    (e: Error) => e.message,
  );
  expect(refused).toStartWith(`this version upgrades ${path} from schema 5 to ${SCHEMA_VERSION} (one way: earlier versions cannot open it after), and could not first copy it to ${path}.schema-5.bak (`);
  expect(refused).toEndWith("); nothing was changed: make room for the copy (about the file's size) or remove what stands at that path, then start again");
  expect(version(path)).toBe(5);
});

/**
 * Runs, in a child process, an upgrading open of the store in `dataDir`, then `then` (source text with
 * `store` in scope), then kills the process with SIGKILL: what a new version killed without a clean stop
 * leaves beside switchyard.db (the upgrade tryout: a `-wal` of the new schema that SQLite applied to the
 * copy put back, "database disk image is malformed").
 */
async function killedAfterUpgrade(dataDir: string, then: string): Promise<void> {
  const open = join(import.meta.dir, "../../src/store/open.ts");
  const code = `import { openStore } from ${JSON.stringify(open)};
const store = await openStore(undefined, ${JSON.stringify(dataDir)}, undefined, () => {}, { now: () => Date.now(), sleep: (ms) => Bun.sleep(ms) }, () => {});
${then}
process.kill(process.pid, "SIGKILL");`;
  const proc = Bun.spawn([process.execPath, "-e", code], { stdout: "ignore", stderr: "pipe" });
  expect(await proc.exited).not.toBe(0);
}

/** What an earlier build sees opening `path`: its schema version and SQLite's integrity check. */
const asEarlierBuild = (path: string) =>
  withRaw(path, (db) => {
    try {
      return { schema: (db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number }).v, integrity: (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check };
    } catch (e) {
      return { error: (e as Error).message };
    }
  });

function oldDataDir(): { dataDir: string; path: string; copy: string } {
  const dataDir = tempDir();
  const path = join(dataDir, "switchyard.db");
  const old = new Database(path);
  old.run("PRAGMA journal_mode = WAL");
  migrate(old, () => 1, MIGRATIONS.filter((m) => m.version <= 9));
  old.run("INSERT INTO client_keys (name, hash, scopes, tag, created_at) VALUES ('kept', 'abc', '[]', NULL, 1)");
  old.close();
  return { dataDir, path, copy: `${path}.schema-9.bak` };
}

test("the steps the warning gives to go back, followed after the new version was killed, leave the file the earlier version wrote", async () => {
  const { dataDir, path, copy } = oldDataDir();
  // killed after writing something in the new schema: its WAL holds pages of it
  await killedAfterUpgrade(dataDir, `await store.createKey("made-after");`);
  expect(existsSync(`${path}-wal`)).toBe(true);
  // remove the -wal and -shm, then cp (not mv) the copy over the file
  rmSync(`${path}-wal`, { force: true });
  rmSync(`${path}-shm`, { force: true });
  copyFileSync(copy, path);
  expect(asEarlierBuild(path)).toEqual({ schema: 9, integrity: "ok" });
  expect(withRaw(path, (db) => db.query("SELECT name FROM client_keys").all())).toEqual([{ name: "kept" }]);
  expect(existsSync(copy)).toBe(true);
});

test("an upgrade checkpoints its migration: a new version killed right after it leaves no WAL of the new schema beside the file", async () => {
  const { dataDir, path, copy } = oldDataDir();
  await killedAfterUpgrade(dataDir, "");
  // the copy put back with the killed instance's -wal and -shm still there opens as the earlier schema
  copyFileSync(copy, path);
  expect(asEarlierBuild(path)).toEqual({ schema: 9, integrity: "ok" });
});
