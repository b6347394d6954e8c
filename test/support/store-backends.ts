/**
 * Both store backends for a test file that checks the same behaviour on each (SPEC D-1, D-2): the
 * embedded SQLite store on a fresh file, and the shared PostgreSQL store on a fresh database of the
 * file's own throwaway PostgreSQL server.
 */
import type { Clock } from "../../pipeline/ports.ts";
import { openPostgresStore } from "../../src/store/postgres/store.ts";
import { openSqliteStore } from "../../src/store/sqlite/store.ts";
import type { Store } from "../../src/store/types.ts";
import { postgresForFile, tempDir } from "../store/helpers.ts";
import { join } from "node:path";

/** One backend: its name (for the describe block) and how to open a fresh, empty store of it. */
export interface StoreBackend {
  name: "sqlite" | "postgres";
  /**
   * Opens a fresh, empty store (a new SQLite file in a temp dir, or a new database on the file's
   * PostgreSQL), with a flush interval of 60 s (the tests flush or close themselves) and `clock` when
   * given; `reopen` opens the same database again, as a restart would.
   */
  open(clock?: Pick<Clock, "now">): Promise<{ store: Store; reopen: () => Promise<Store> }>;
  /**
   * As `open`, on a database that `setUp` first fills as an earlier version would have (a migration
   * test's "database of the previous schema"): it gets the new SQLite file's path, or the new
   * PostgreSQL database's URL, with nothing in it yet.
   */
  openPrepared(setUp: (where: { path: string } | { url: string }) => Promise<void>): Promise<{ store: Store; reopen: () => Promise<Store> }>;
}

/**
 * The two backends, SQLite first. Call it once at the top level of a test file: it registers the
 * file's PostgreSQL ({@link postgresForFile}: started in `beforeAll`, destroyed with the file's temp
 * dirs in `afterAll`), whose databases are named `prefix_1`, `prefix_2`, … (`prefix`: a SQL
 * identifier).
 */
export function storeBackends(prefix: string): StoreBackend[] {
  const pg = postgresForFile();
  return [
    {
      name: "sqlite",
      async open(clock) {
        const path = join(tempDir(), "sy.db");
        const open = async () => openSqliteStore({ path, clock, flushIntervalMs: 60_000 });
        return { store: await open(), reopen: open };
      },
      async openPrepared(setUp) {
        const path = join(tempDir(), "sy.db");
        await setUp({ path });
        const open = async () => openSqliteStore({ path, flushIntervalMs: 60_000 });
        return { store: await open(), reopen: open };
      },
    },
    {
      name: "postgres",
      async open(clock) {
        const url = await pg.database(prefix);
        const open = () => openPostgresStore({ url, clock, flushIntervalMs: 60_000, onError: () => {} });
        return { store: await open(), reopen: open };
      },
      async openPrepared(setUp) {
        const url = await pg.database(prefix);
        await setUp({ url });
        const open = () => openPostgresStore({ url, flushIntervalMs: 60_000, onError: () => {} });
        return { store: await open(), reopen: open };
      },
    },
  ];
}
