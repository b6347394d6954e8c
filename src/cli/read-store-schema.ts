/**
 * `switchyard version --data-dir DIR` / `switchyard version --database postgres://…`: the schema version
 * the store records and what this build does with it (SPEC 2.2 "version and build info"), so an operator
 * can check before upgrading: reads it as it is, migrates it at its next start (one way: earlier
 * versions refuse it from then on), or refuses it (newer than this build knows). Reads only: the SQLite
 * file is opened read-only (nothing migrated, no WAL checkpointed; SQLite may leave an empty -wal and
 * -shm beside a file that had none, as any reader of a WAL database does), PostgreSQL is sent SELECTs.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";

/** One line for the operator, and the exit code: 1 when this build refuses the store or cannot read it. */
export interface StoreSchemaReport {
  line: string;
  exitCode: 0 | 1;
}

/**
 * What this build does with the store of `where`: PostgreSQL for a `database` URL, else the data
 * directory's `switchyard.db`. Never throws: a store it cannot read is a line saying why, exit 1.
 * The PostgreSQL URL is named by host, port and database only (never its user or password).
 */
export async function readStoreSchema(where: { dataDir: string; database?: string }): Promise<StoreSchemaReport> {
  if (where.database !== undefined) return readPostgres(where.database);
  const path = join(where.dataDir, "switchyard.db");
  const { SCHEMA_VERSION, schemaVersion } = await import("../store/sqlite/migrations.ts");
  if (!existsSync(path)) return { line: `store ${path}: none yet: a start creates it at schema ${SCHEMA_VERSION}`, exitCode: 0 };
  let version: number;
  try {
    const { Database } = await import("bun:sqlite");
    const db = new Database(path, { readonly: true });
    try {
      version = schemaVersion(db);
    } finally {
      db.close(false);
    }
  } catch (e) {
    return { line: `store ${path}: cannot be read (${e instanceof Error ? e.message : String(e)})`, exitCode: 1 };
  }
  return verdict(`store ${path}`, version, SCHEMA_VERSION, `earlier versions refuse it after; the start keeps the file as it was in ${path}.schema-${version}.bak`);
}

async function readPostgres(url: string): Promise<StoreSchemaReport> {
  const { isPostgresUrl } = await import("../store/postgres/url.ts");
  if (!isPostgresUrl(url)) return { line: "--database must be a postgres:// (or postgresql://) URL", exitCode: 1 };
  const { PG_SCHEMA_VERSION } = await import("../store/postgres/migrations.ts");
  let name: string;
  let sql: import("bun").SQL;
  try {
    const safe = new URL(url);
    name = `shared store postgres://${safe.host}${safe.pathname}`;
    const { SQL } = await import("bun");
    sql = new SQL(url, { max: 1, connectionTimeout: 10 });
  } catch {
    // Neither the URL nor the error's message is echoed: the URL may carry a password.
    return { line: "--database: not a valid URL", exitCode: 1 };
  }
  let version: number;
  try {
    const [table] = await sql`SELECT to_regclass('schema_migrations') IS NOT NULL AS present`;
    version = table?.present ? Number((await sql`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_migrations`)[0]?.v ?? 0) : 0;
  } catch (e) {
    return { line: `${name}: cannot be read (${e instanceof Error ? e.message : String(e)})`, exitCode: 1 };
  } finally {
    await sql.close().catch(() => {});
  }
  return verdict(name, version, PG_SCHEMA_VERSION, "instances of earlier versions refuse to start on it after, and one still running serves on without the new steps: see README \"Upgrading\"; back up with pg_dump first");
}

/** The line for a store at `version` read by a build that knows schemas up to `latest`. */
function verdict(name: string, version: number, latest: number, oneWay: string): StoreSchemaReport {
  if (version === 0) return { line: `${name}: no switchyard tables yet: a start creates them at schema ${latest}`, exitCode: 0 };
  if (version === latest) return { line: `${name}: schema ${version}: this build reads it as it is`, exitCode: 0 };
  if (version < latest) return { line: `${name}: schema ${version}: this build migrates it to schema ${latest} at its next start, one way (${oneWay})`, exitCode: 0 };
  return { line: `${name}: schema ${version}: newer than this build knows (${latest}): this build refuses it; run the version that wrote it, or a later one`, exitCode: 1 };
}
