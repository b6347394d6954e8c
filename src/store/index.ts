/**
 * The store (SPEC D-1, D-2): the `Store` port (one interface per role, `./types.ts`) and its embedded
 * SQLite backend (`./sqlite/`). `openSqliteStore({ path })` is the default backend; everything else
 * depends only on `Store`.
 */
export * from "./types.ts";
export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from "./sqlite/store.ts";
export { credentialFingerprint, generateKeySecret, KEY_SECRET_PREFIX } from "./secrets.ts";
export { MIGRATIONS, SCHEMA_VERSION, migrate, type Migration } from "./sqlite/migrations.ts";
