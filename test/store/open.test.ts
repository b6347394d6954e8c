/**
 * Opening the store at start (src/store/open.ts): a PostgreSQL database that cannot be reached stops
 * the start with a message naming it (host, port, database; never the password) and what to check.
 * Bun's client alone said "Failed to connect".
 */
import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
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

  test("a value that is no PostgreSQL URL is refused as before", async () => {
    await expect(openStore("mysql://x", "/tmp", undefined, () => {}, realClock, () => {})).rejects.toThrow("--database / server.database must be a postgres:// (or postgresql://) URL");
  });
});
