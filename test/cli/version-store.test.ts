/**
 * `switchyard version --data-dir DIR` / `--database URL`: before upgrading, an operator can ask the new
 * build what it will do with the store: read it as it is, migrate it (one way) at its next start, or
 * refuse it as newer (exit 1). It reads only: the file keeps its schema (the upgrade tryout of
 * 2026-12-07 had no way to check but to start).
 */
import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { SQL } from "bun";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PG_MIGRATIONS, PG_SCHEMA_VERSION, migratePg } from "../../src/store/postgres/migrations.ts";
import { MIGRATIONS, SCHEMA_VERSION, migrate, schemaVersion } from "../../src/store/sqlite/migrations.ts";
import { SOURCE_CLI } from "../support/instance.ts";
import { startPostgres } from "../support/postgres.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function version(args: string[]): { code: number; lines: string[] } {
  const r = Bun.spawnSync([...SOURCE_CLI, "version", ...args], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir() } });
  return { code: r.exitCode, lines: r.stdout.toString().trim().split("\n").slice(1) };
}

function dataDirAt(schema: number | undefined): { dir: string; path: string } {
  const dir = mkdtempSync(join(tmpdir(), "sy-version-store-"));
  dirs.push(dir);
  const path = join(dir, "switchyard.db");
  if (schema !== undefined) {
    const db = new Database(path);
    db.run("PRAGMA journal_mode = WAL");
    migrate(db, () => 1, MIGRATIONS.filter((m) => m.version <= Math.min(schema, SCHEMA_VERSION)));
    if (schema > SCHEMA_VERSION) db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, 'from a later version', 1)", [schema]);
    db.close();
  }
  return { dir, path };
}

test("--data-dir: the store's schema and whether this build reads it, migrates it (reading only) or refuses it", () => {
  const none = dataDirAt(undefined);
  expect(version(["--data-dir", none.dir])).toEqual({ code: 0, lines: [`store ${none.path}: none yet: a start creates it at schema ${SCHEMA_VERSION}`] });
  const old = dataDirAt(9);
  expect(version(["--data-dir", old.dir])).toEqual({
    code: 0,
    lines: [`store ${old.path}: schema 9: this build migrates it to schema ${SCHEMA_VERSION} at its next start, one way (earlier versions refuse it after; the start keeps the file as it was in ${old.path}.schema-9.bak)`],
  });
  const db = new Database(old.path, { readonly: true });
  expect(schemaVersion(db)).toBe(9); // read, not migrated
  db.close();
  const current = dataDirAt(SCHEMA_VERSION);
  expect(version(["--data-dir", current.dir])).toEqual({ code: 0, lines: [`store ${current.path}: schema ${SCHEMA_VERSION}: this build reads it as it is`] });
  const newer = dataDirAt(SCHEMA_VERSION + 1);
  expect(version(["--data-dir", newer.dir])).toEqual({
    code: 1,
    lines: [`store ${newer.path}: schema ${SCHEMA_VERSION + 1}: newer than this build knows (${SCHEMA_VERSION}): this build refuses it; run the version that wrote it, or a later one`],
  });
  // without either flag: the one line, as before
  expect(version([])).toEqual({ code: 0, lines: [] });
}, 60_000); // five CLI runs from source

test("--database: a URL that does not parse is said to be one, without echoing its password", () => {
  const r = Bun.spawnSync([...SOURCE_CLI, "version", "--database", "postgres://bob:s3cretpw@[bad/db"], { stdout: "pipe", stderr: "pipe", env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: tmpdir() } });
  const out = r.stdout.toString() + r.stderr.toString();
  expect(r.exitCode).toBe(1);
  expect(out).toContain("--database: not a valid URL");
  expect(out).not.toContain("Invalid URL");
  expect(out).not.toContain("s3cretpw");
}, 30_000); // one CLI run from source

test("--database: a shared store's schema, named without its user", async () => {
  const pg = await startPostgres();
  try {
    const url = await pg.createDatabase("version_store");
    const where = `postgres://${new URL(url).host}/version_store`;
    expect(version(["--database", url])).toEqual({ code: 0, lines: [`shared store ${where}: no switchyard tables yet: a start creates them at schema ${PG_SCHEMA_VERSION}`] });
    const sql = new SQL(url, { max: 1 });
    await migratePg(sql, () => 1, PG_MIGRATIONS.filter((m) => m.version <= 21));
    await sql.close();
    const r = version(["--database", url]);
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      `shared store ${where}: schema 21: this build migrates it to schema ${PG_SCHEMA_VERSION} at its next start, one way (instances of earlier versions refuse to start on it after, and one still running serves on without the new steps: see README "Upgrading"; back up with pg_dump first)`,
    ]);
    expect(r.lines[0]).not.toContain("switchyard@");
  } finally {
    await pg.destroy();
  }
}, 120_000); // starting PostgreSQL on a loaded machine
