/**
 * Opening the store at start (src/store/open.ts): a PostgreSQL database that cannot be reached stops
 * the start with a message naming it (host, port, database; never the password) and what to check.
 * Bun's client alone said "Failed to connect". The embedded store in a data directory where a stop on
 * PostgreSQL kept its unwritten rows says that they are not written to it.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realClock } from "../../src/clock.ts";
import { openStore } from "../../src/store/open.ts";

describe("openStore", () => {
  test("PostgreSQL that refuses the connection: the error names the database without its password", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-open-"));
    try {
      // port 1 on loopback: nothing listens there (a privileged port no test binds)
      const err = await openStore("postgres://switchyard:s3cret-pw@127.0.0.1:1/shared", dir, undefined, () => {}, realClock, () => {}).then(
        () => undefined,
        (e: unknown) => e as Error,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err!.message).toStartWith("cannot reach the PostgreSQL database postgres://127.0.0.1:1/shared (");
      expect(err!.message).toContain("the URL given with --database or server.database");
      expect(err!.message).not.toContain("s3cret-pw");
      expect(err!.message).not.toContain("switchyard:");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);

  test("the embedded store in a data directory holding rows a stop on PostgreSQL kept: a warning names the file, which is left alone", async () => {
    const dir = mkdtempSync(join(tmpdir(), "switchyard-open-"));
    try {
      const file = join(dir, "unwritten-rows.jsonl");
      writeFileSync(file, '{"version":1}\n', { mode: 0o600 });
      const lines: string[] = [];
      const store = await openStore(undefined, dir, undefined, (l) => lines.push(l), realClock, () => {});
      await store.close();
      const warn = lines.map((l) => JSON.parse(l)).find((l) => l.path === file);
      expect(warn).toMatchObject({ level: "warn" });
      expect(warn.msg).toContain("written by a start on that database (--database), not to the embedded store");
      expect(existsSync(file)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a value that is no PostgreSQL URL is refused as before", async () => {
    await expect(openStore("mysql://x", "/tmp", undefined, () => {}, realClock, () => {})).rejects.toThrow("--database / server.database must be a postgres:// (or postgresql://) URL");
  });
});
