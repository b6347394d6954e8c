/**
 * The database connection the SQLite roles share (SPEC D-1): opening the file (mode 0600 for it and its
 * `-wal`/`-shm` companions: they hold OAuth tokens and API keys), the pragmas (16 KiB pages for a new file, WAL, `synchronous=NORMAL`),
 * the migrations, and the small helpers every role uses (open check, durable commits, timestamps).
 */
import { Database } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { finiteOrUndefined } from "../rows.ts";
import { StoreError, type SchemaUpgrade } from "../types.ts";
import { migrate, SCHEMA_VERSION, schemaVersion } from "./migrations.ts";

/** Page size of a database this build creates, in bytes (SQLite's default is 4096). */
export const PAGE_SIZE = 16_384;

/** What every SQLite role holds: the connection, the clock and the closed flag. */
export class SqliteContext {
  /** Absolute path of the database file, or ":memory:". */
  readonly path: string;
  readonly db: Database;
  /** Set by the store's `close`; queries then throw StoreError `closed`. */
  closed = false;
  /** The upgrade this open applied to a file an earlier build wrote, with the copy made before it. */
  readonly upgrade: SchemaUpgrade | undefined;

  /**
   * Opens (creating when missing) the database at `path`, sets the pragmas and applies pending
   * migrations. Closes the connection again when any of that fails.
   * @param now ms since the epoch (timestamps, `applied_at` of migrations)
   * @param onError receives failures of background work (flushes, refreshes); messages carry no secrets
   * @throws StoreError `schema` for a newer database; bun:sqlite errors when the file cannot be opened.
   */
  constructor(
    path: string,
    busyTimeoutMs: number | undefined,
    readonly now: () => number,
    readonly onError: (message: string, error: unknown) => void,
  ) {
    const memory = path === ":memory:" || path === "";
    this.path = memory ? ":memory:" : resolve(path);
    if (!memory) prepareFile(this.path);
    this.db = new Database(this.path, { create: true, readwrite: true, strict: true });
    /** The file's schema version before this open (0 until read). */
    let before = 0;
    try {
      const busy = Math.max(0, Math.floor(busyTimeoutMs ?? 5000));
      this.db.run(`PRAGMA busy_timeout = ${busy}`);
      // A new database gets 16 KiB pages (before its first write; an existing file keeps the page size
      // it was created with: WAL mode cannot change it). A flush's rows then fill a quarter as many WAL
      // frames, each a write() of its own: 2.3–2.5 µs less CPU per usage row + trace than 4 KiB pages
      // (docs/performance.md, item 47).
      this.db.run(`PRAGMA page_size = ${PAGE_SIZE}`);
      this.db.run("PRAGMA journal_mode = WAL");
      this.db.run("PRAGMA synchronous = NORMAL");
      this.db.run("PRAGMA foreign_keys = ON");
      this.db.run("PRAGMA journal_size_limit = 67108864");
      before = schemaVersion(this.db);
      // An earlier build refuses a newer schema (migrations.ts), so an upgrade keeps the file as it was.
      const backup = !memory && before > 0 && before < SCHEMA_VERSION ? copyBeforeUpgrade(this.db, this.path, before) : undefined;
      const applied = migrate(this.db, this.now);
      if (before > 0 && applied.length > 0) {
        this.upgrade = { from: before, to: SCHEMA_VERSION, ...(backup ? { backup } : {}) };
        // The migration's pages into the file now, the WAL emptied: a process killed after this leaves
        // only its later writes in switchyard.db-wal, not the new schema (SQLite would apply a stale WAL
        // to the copy put back in the file's place, and corrupt it: see goBackSteps).
        if (!memory) this.db.run("PRAGMA wal_checkpoint(TRUNCATE)");
      }
      if (!memory) tightenModes(this.path);
    } catch (err) {
      this.db.close(false);
      // a file newer than this build: name the copy an upgrade left that this build can open
      throw err instanceof StoreError && before > SCHEMA_VERSION && !memory ? withCopies(err, this.path) : err;
    }
  }

  /** @throws StoreError `closed` once the store is closed. */
  assertOpen(): void {
    if (this.closed) throw new StoreError("closed", "the store is closed");
  }

  /** Runs `fn` with `synchronous=FULL` (fsync of the WAL at commit), for credentials (SPEC P-7). */
  durably<T>(fn: () => T): T {
    this.db.run("PRAGMA synchronous = FULL");
    try {
      return fn();
    } finally {
      this.db.run("PRAGMA synchronous = NORMAL");
    }
  }

  /** The given `since` rounded, or now when it is absent or not finite. */
  since(v: number | undefined): number {
    return Math.round(finiteOrUndefined(v) ?? this.now());
  }
}

/**
 * Copies the database at `path` (schema version `version`) to `<path>.schema-<version>.bak` before an
 * upgrade, with `VACUUM INTO` (a consistent copy of a WAL database, one file), mode 0600 as the
 * database (it holds credentials). A copy of the same version left by an earlier upgrade is replaced.
 * @returns the copy's path
 * @throws StoreError `schema` saying why when the copy cannot be written (the upgrade then does not run)
 */
function copyBeforeUpgrade(db: Database, path: string, version: number): string {
  const copy = `${path}.schema-${version}.bak`;
  try {
    rmSync(copy, { force: true });
    db.query("VACUUM INTO ?").run(copy);
    chmodSync(copy, 0o600);
  } catch (err) {
    throw new StoreError(
      "schema",
      `this version upgrades ${path} from schema ${version} to ${SCHEMA_VERSION} (one way: earlier versions cannot open it after), and could not first copy it to ${copy} (${err instanceof Error ? err.message : String(err)}); nothing was changed: make room for the copy (about the file's size) or remove what stands at that path, then start again`,
    );
  }
  return copy;
}

/**
 * How to put the copy an upgrade made ({@link copyBeforeUpgrade}) back in place of the database at
 * `path`, as the start's warning and a newer file's refusal say it: with switchyard stopped, remove the
 * `-wal` and `-shm` files beside the database first (a process killed with SIGKILL leaves its last
 * writes there; SQLite applies a WAL to whatever file stands at `path`, so the copy would be corrupted:
 * "database disk image is malformed"), then copy (not move: the copy stays for another try).
 * @returns a clause of a sentence, e.g. "stop switchyard, remove /d/switchyard.db-wal and … then cp …"
 */
export function goBackSteps(copy: string, path: string): string {
  return `stop switchyard, remove ${path}-wal and ${path}-shm (left by a stop that was not clean: SQLite would apply them to the copy and corrupt it), then copy it over the file: cp ${copy} ${path}`;
}

/**
 * A newer file's `schema` error, naming the copies of it that upgrades left ({@link copyBeforeUpgrade})
 * which this build can open: the way back to this version.
 */
function withCopies(err: StoreError, path: string): StoreError {
  const prefix = `${basename(path)}.schema-`;
  let copies: string[] = [];
  try {
    copies = readdirSync(dirname(path))
      .filter((f) => f.startsWith(prefix) && f.endsWith(".bak") && Number(f.slice(prefix.length, -4)) <= SCHEMA_VERSION)
      .sort((a, b) => Number(b.slice(prefix.length, -4)) - Number(a.slice(prefix.length, -4)));
  } catch {
    return err;
  }
  if (copies.length === 0) return err;
  const copy = join(dirname(path), copies[0]!);
  return new StoreError("schema", `${err.message}; or, to run this version, put ${copy} (the file as it was before a newer version upgraded it) in place of ${path} (${goBackSteps(copy, path)}): what was stored since is then lost`);
}

/** Creates the parent directory (0700) and the database file (0600) before SQLite opens it. */
function prepareFile(path: string): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  closeSync(openSync(path, "a", 0o600));
  chmodSync(path, 0o600);
}

/**
 * Sets 0600 on the database file and its -wal/-shm companions. SQLite creates the companions with the
 * database file's mode, so this only repairs files left by an older, looser setup.
 */
function tightenModes(path: string): void {
  for (const p of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(p, 0o600);
    } catch {
      // absent: fine
    }
  }
}
