/**
 * Versioned schema migrations of the SQLite store (SPEC D-1). Each migration has a number and runs
 * once, inside its own IMMEDIATE transaction together with the row that records it in
 * `schema_migrations`, so a crash mid-migration leaves the database at the previous version and the
 * next start simply retries. Never edit a released migration: append a new one.
 */
import type { Database } from "bun:sqlite";
import type { TraceParams } from "../rows.ts";
import { StoreError } from "../types.ts";
import { BLOCK_MAX, encodeBlock } from "./trace-ring.ts";

/** One schema step. `up` is SQL (several statements allowed) or a function for data migrations. */
export interface Migration {
  /** 1, 2, 3, … with no gaps. */
  version: number;
  name: string;
  up: string | ((db: Database) => void);
}

/** All migrations, in order. Times are INTEGER ms since the epoch; booleans are 0/1. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial schema",
    up: `
      -- Client keys created with \`keys create\`: the SHA-256 of the secret, never the secret.
      CREATE TABLE client_keys (
        name        TEXT PRIMARY KEY,
        hash        TEXT NOT NULL UNIQUE,      -- hex SHA-256 of the secret
        scopes      TEXT NOT NULL DEFAULT '[]',-- JSON array of strings
        tag         TEXT,
        created_at  INTEGER NOT NULL,
        revoked_at  INTEGER
      ) STRICT;

      -- Accounts created through the CLI, admin API or login.
      CREATE TABLE accounts (
        id              TEXT PRIMARY KEY,
        provider_id     TEXT NOT NULL,
        credential      TEXT NOT NULL,         -- JSON Credential (holds tokens: file is 0600)
        priority        INTEGER NOT NULL DEFAULT 0,
        max_concurrency INTEGER,
        proxy           TEXT,
        disabled        INTEGER NOT NULL DEFAULT 0,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL
      ) STRICT;

      -- Models each account (config or stored) advertised through discovery (SPEC P-6).
      CREATE TABLE account_models (
        account_id    TEXT PRIMARY KEY,
        models        TEXT NOT NULL,           -- JSON array of upstream model ids
        discovered_at INTEGER NOT NULL
      ) STRICT;

      -- Account state (SPEC 6.3). No foreign keys: config accounts have no row in \`accounts\`.
      CREATE TABLE cooldowns (
        account_id TEXT NOT NULL,
        model      TEXT NOT NULL,              -- upstream model id or '*'
        until      INTEGER NOT NULL,
        reason     TEXT NOT NULL,
        level      INTEGER NOT NULL DEFAULT 0,
        since      INTEGER NOT NULL,
        PRIMARY KEY (account_id, model)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE account_locks (
        account_id TEXT PRIMARY KEY,
        until      INTEGER,                    -- NULL = until changed
        reason     TEXT NOT NULL,
        since      INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE removed_models (
        account_id TEXT NOT NULL,
        model      TEXT NOT NULL,
        reason     TEXT NOT NULL,
        until      INTEGER,                    -- NULL = until restored
        since      INTEGER NOT NULL,
        PRIMARY KEY (account_id, model)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE quarantined_credentials (
        fingerprint TEXT PRIMARY KEY,          -- hex SHA-256 of the refresh token or API key
        account_id  TEXT,
        reason      TEXT NOT NULL,
        since       INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE provider_circuits (
        provider_id TEXT PRIMARY KEY,
        open_until  INTEGER NOT NULL,
        reason      TEXT,
        since       INTEGER NOT NULL
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE quota_windows (
        account_id   TEXT NOT NULL,
        window       TEXT NOT NULL,
        model        TEXT NOT NULL,            -- upstream model id or '*'
        used_percent REAL,
        remaining    REAL,
        quota_limit  REAL,
        reset_at     INTEGER,
        updated_at   INTEGER NOT NULL,
        PRIMARY KEY (account_id, window, model)
      ) STRICT, WITHOUT ROWID;

      CREATE TABLE bindings (
        key        TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX bindings_expires_at ON bindings (expires_at);

      -- One row per request (SPEC O-1). Token columns are NULL when the provider did not report them.
      CREATE TABLE usage (
        id                 INTEGER PRIMARY KEY,
        request_id         TEXT NOT NULL,
        ts                 INTEGER NOT NULL,
        client_format      TEXT NOT NULL,
        requested_model    TEXT NOT NULL,
        provider_id        TEXT,
        model              TEXT,
        account_id         TEXT,
        key_name           TEXT,
        input_tokens       INTEGER,
        output_tokens      INTEGER,
        cache_read_tokens  INTEGER,
        cache_write_tokens INTEGER,
        reasoning_tokens   INTEGER,
        estimated          INTEGER NOT NULL,
        outcome            TEXT NOT NULL,
        status             INTEGER NOT NULL,
        ttfb_ms            INTEGER,
        total_ms           INTEGER NOT NULL,
        attempts           INTEGER NOT NULL,
        fallback           INTEGER NOT NULL
      ) STRICT;
      CREATE INDEX usage_ts ON usage (ts);
      CREATE INDEX usage_request_id ON usage (request_id);

      -- Route traces (SPEC O-2), a ring bounded by seq at flush time.
      CREATE TABLE route_traces (
        seq        INTEGER PRIMARY KEY,
        route_id   TEXT NOT NULL UNIQUE,
        request_id TEXT NOT NULL,
        ts         INTEGER NOT NULL,
        body       TEXT NOT NULL               -- JSON RouteTrace
      ) STRICT;
      CREATE INDEX route_traces_request_id ON route_traces (request_id);
    `,
  },
  {
    version: 2,
    name: "credential overrides of config-file accounts",
    up: `
      -- A config-file OAuth account's credential after a refresh (SPEC P-7: rotated refresh tokens are
      -- persisted before use). Applies only while the file still holds the credential it was refreshed
      -- from (base_fingerprint = hex SHA-256 of that access token); editing the file supersedes it.
      CREATE TABLE credential_overrides (
        account_id       TEXT PRIMARY KEY,
        base_fingerprint TEXT NOT NULL,
        credential       TEXT NOT NULL,        -- JSON Credential (holds tokens: file is 0600)
        updated_at       INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 3,
    name: "cost per request, client key limits and budget windows",
    up: `
      -- SPEC 9.5: cost in USD (NULL when nothing was served or the model has no price) and whether a
      -- model that served tokens had no price.
      ALTER TABLE usage ADD COLUMN cost_usd REAL;
      ALTER TABLE usage ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0;
      -- SPEC 9.6: a stored key's limits, JSON KeyLimits (NULL = unlimited).
      ALTER TABLE client_keys ADD COLUMN limits TEXT;
      -- SPEC 9.6: each key's open budget window per window size, persisted lazily so budgets survive
      -- a restart. Tokens and USD spent since started_at (the first use).
      CREATE TABLE key_budget_windows (
        key_name   TEXT NOT NULL,
        window     TEXT NOT NULL,              -- 5h | 1d | 7d | 30d
        started_at INTEGER NOT NULL,
        tokens     REAL NOT NULL DEFAULT 0,
        usd        REAL NOT NULL DEFAULT 0,
        PRIMARY KEY (key_name, window)
      ) STRICT;
    `,
  },
  {
    version: 4,
    name: "combos, aliases, settings and account flags from the admin API",
    up: `
      -- SPEC 9.3: objects created through the admin API, next to the config file's read-only ones.
      CREATE TABLE stored_combos (
        name       TEXT PRIMARY KEY,
        spec       TEXT NOT NULL,              -- JSON combo in the config file's shape
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      CREATE TABLE stored_aliases (
        name       TEXT PRIMARY KEY,
        target     TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
      -- Top-level keys of the settings block set through the admin API (the file's keys win).
      CREATE TABLE stored_settings (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,              -- JSON
        updated_at INTEGER NOT NULL
      ) STRICT;
      -- Config-file accounts disabled through the admin API (stored accounts use accounts.disabled).
      CREATE TABLE account_flags (
        account_id TEXT PRIMARY KEY,
        disabled   INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
      ) STRICT;
    `,
  },
  {
    version: 5,
    name: "token-saver savings per request",
    up: `
      -- SPEC S-4: characters and estimated tokens (characters / 4) the token savers removed from the
      -- body that was served; 0 when they removed nothing (and for rows written before this version).
      ALTER TABLE usage ADD COLUMN saved_chars INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE usage ADD COLUMN saved_tokens INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 6,
    name: "drop the unread usage request-id index",
    up: `
      -- No query reads usage by request_id (EXPLAIN QUERY PLAN of every usage and trace query: they
      -- search usage by ts, and a call's route id through route_traces_request_id). The index only
      -- cost each usage insert a second B-tree write: 0.6 us of the ~2.8 us a usage row's insert takes.
      DROP INDEX IF EXISTS usage_request_id;
    `,
  },
  {
    version: 7,
    name: "route-trace ring as generation tables",
    up: [1, 2, 3, 4]
      .map(
        (g) => `
      -- SPEC O-2: generation ${g} of the trace ring (src/store/sqlite/trace-ring.ts); route_traces is
      -- generation 0 and keeps its rows. The oldest generation is emptied whole when the newest is full.
      CREATE TABLE route_traces_${g} (
        seq        INTEGER PRIMARY KEY,
        route_id   TEXT NOT NULL UNIQUE,
        request_id TEXT NOT NULL,
        ts         INTEGER NOT NULL,
        body       TEXT NOT NULL               -- JSON RouteTrace
      ) STRICT;
      CREATE INDEX route_traces_${g}_request_id ON route_traces_${g} (request_id);`,
      )
      .join("\n"),
  },
  {
    version: 8,
    name: "route-trace ring as compressed blocks",
    up: (db) => {
      // SPEC O-2: the ring as one row per flush (src/store/sqlite/trace-ring.ts): the traces' lines
      // compressed together, with the block's route id and request id ranges for the lookups.
      db.run(`CREATE TABLE trace_blocks (
        seq         INTEGER PRIMARY KEY,
        n           INTEGER NOT NULL,          -- traces in the block
        min_route   TEXT NOT NULL,
        max_route   TEXT NOT NULL,
        min_request TEXT NOT NULL,
        max_request TEXT NOT NULL,
        body        BLOB NOT NULL              -- zstd of one line per trace: JSON route id, tab, JSON request id, tab, JSON RouteTrace
      ) STRICT`);
      // The generation tables' traces (migration 7), oldest first, become blocks; then the tables go.
      const tables = ["route_traces", ...[1, 2, 3, 4].map((g) => `route_traces_${g}`)];
      const rows = db
        .query(`SELECT route_id, request_id, ts, body FROM (${tables.map((t) => `SELECT seq, route_id, request_id, ts, body FROM ${t}`).join(" UNION ALL ")}) ORDER BY seq`)
        .values() as TraceParams[];
      const insert = db.prepare("INSERT INTO trace_blocks (n, min_route, max_route, min_request, max_request, body) VALUES (?, ?, ?, ?, ?, ?)");
      for (let i = 0; i < rows.length; i += BLOCK_MAX) {
        const b = encodeBlock(rows.slice(i, i + BLOCK_MAX));
        insert.run(b.n, b.minRoute, b.maxRoute, b.minRequest, b.maxRequest, b.body);
      }
      insert.finalize();
      for (const t of tables) db.run(`DROP TABLE ${t}`);
    },
  },
  {
    version: 9,
    name: "client key generations",
    up: `
      -- SPEC 9.6: a key created with the name of a revoked key is a new key: one generation more, so its
      -- id (pipeline/key-id.ts, name#N) counts its limits and budget windows afresh. Existing keys are
      -- generation 0, whose id is the name: their budget windows (key_budget_windows.key_name) stay theirs.
      ALTER TABLE client_keys ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "lock credential fingerprints",
    up: `
      -- SPEC 6.3 "until changed": the fingerprint (hex SHA-256, never the key) of the API key a lock was set
      -- under; a lock whose account now holds another key is cleared. NULL: an OAuth account's lock, or one
      -- set before this version (cleared by switchyard accounts unlock).
      ALTER TABLE account_locks ADD COLUMN fingerprint TEXT;
    `,
  },
  {
    version: 11,
    name: "dashboard sessions",
    up: `
      -- SPEC 9.4: signed-in dashboards, kept in the store (not in one process's memory). Hashes only: the
      -- session token's (the cookie value) and the sign-in key's (as client_keys holds it), never either.
      CREATE TABLE dashboard_sessions (
        token_hash TEXT PRIMARY KEY,
        subject    TEXT NOT NULL,
        key_hash   TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
      CREATE INDEX dashboard_sessions_subject ON dashboard_sessions (subject);
    `,
  },
  {
    version: 12,
    name: "key rotation",
    up: `
      -- switchyard keys rotate: the secret a rotated key had (its hex SHA-256, never the secret) and until
      -- when (ms) it is still accepted; NULL when there is none or no grace was given.
      ALTER TABLE client_keys ADD COLUMN prev_hash TEXT;
      ALTER TABLE client_keys ADD COLUMN prev_until INTEGER;
    `,
  },
  {
    version: 13,
    name: "client key history",
    up: `
      -- A key created with the name of a revoked key is a row of its own (name, generation): the revoked
      -- key's row stays, with its dates, for \`keys list\` (newuser12a G2: it was overwritten). One active
      -- key per name (the partial unique index).
      CREATE TABLE client_keys_v13 (
        name        TEXT NOT NULL,
        generation  INTEGER NOT NULL DEFAULT 0,
        hash        TEXT NOT NULL UNIQUE,      -- hex SHA-256 of the secret
        scopes      TEXT NOT NULL DEFAULT '[]',-- JSON array of strings
        tag         TEXT,
        created_at  INTEGER NOT NULL,
        revoked_at  INTEGER,
        limits      TEXT,
        prev_hash   TEXT,
        prev_until  INTEGER,
        PRIMARY KEY (name, generation)
      ) STRICT;
      INSERT INTO client_keys_v13 (name, generation, hash, scopes, tag, created_at, revoked_at, limits, prev_hash, prev_until)
        SELECT name, generation, hash, scopes, tag, created_at, revoked_at, limits, prev_hash, prev_until FROM client_keys;
      DROP TABLE client_keys;
      ALTER TABLE client_keys_v13 RENAME TO client_keys;
      CREATE UNIQUE INDEX client_keys_active_name ON client_keys (name) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 14,
    name: "client keys disabled",
    up: `
      -- switchyard keys disable|enable: when (ms) an active key was disabled; NULL while it is not.
      ALTER TABLE client_keys ADD COLUMN disabled_at INTEGER;
    `,
  },
  {
    version: 15,
    name: "rate-limited attempts per request",
    up: `
      -- The accounts that answered an attempt of the request with 429 (JSON array of account ids, one
      -- per such attempt), so Usage by account counts a rate limit against the account that was hit.
      ALTER TABLE usage ADD COLUMN rate_limited TEXT;
    `,
  },
  {
    version: 16,
    name: "instance per request",
    up: `
      -- newuser12a G11: which of several instances on one store served the request: its name
      -- (server.instance_name, else host:port) and its id (a UUID per process, OpenTelemetry's
      -- service.instance.id). NULL for rows written before this version.
      ALTER TABLE usage ADD COLUMN instance TEXT;
      ALTER TABLE usage ADD COLUMN instance_id TEXT;
    `,
  },
  {
    version: 17,
    name: "transport per request",
    up: `
      -- try17's tryout: how the request reached the gateway, 'http' (an HTTP request of its own) or
      -- 'websocket' (a response.create frame on Codex's Responses WebSocket, SPEC 2.5). NULL for rows
      -- written before this version: read as unknown, never guessed.
      ALTER TABLE usage ADD COLUMN transport TEXT;
    `,
  },
  {
    version: 18,
    name: "client key prefixes",
    up: `
      -- try18 D4 (SPEC 9.4 "keys show a prefix only"): the current secret's first characters (sy-mHYRP,
      -- src/store/secrets.ts keyPrefix; never enough to use it), written at create and rotate, so a
      -- pasted secret can be matched to its key. NULL for keys stored before: their secret is unknown.
      ALTER TABLE client_keys ADD COLUMN prefix TEXT;
    `,
  },
  {
    version: 19,
    name: "client key rotation times",
    up: `
      -- try18 D16: when (ms) the key's secret was last replaced (switchyard keys rotate), so a rotation
      -- whose answer was lost (a reload, a closed tab) still shows on the Keys page and in the admin API.
      -- NULL for a key never rotated, and for one rotated before this version.
      ALTER TABLE client_keys ADD COLUMN rotated_at INTEGER;
    `,
  },
  {
    version: 20,
    name: "unpriced requests per budget window",
    up: `
      -- review19 R5: the requests of a key's budget window that a model without a price served (a USD
      -- budget cannot count their cost), counted as they settle and kept with the window's spend, so
      -- GET /admin/api/keys lists them without reading the usage rows. 0 for windows stored before.
      ALTER TABLE key_budget_windows ADD COLUMN unpriced INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 21,
    name: "quota windows by API key",
    up: `
      -- The API key a quota window was read with, as 16 hex characters of its SHA-256 (never the key):
      -- a start with another key in the config file leaves the old key's windows out (a new key is a new
      -- quota). NULL for OAuth and keyless accounts and for windows stored before this version.
      ALTER TABLE quota_windows ADD COLUMN credential TEXT;
    `,
  },
  {
    version: 22,
    name: "web searches per request",
    up: `
      -- How many server-side web searches were priced into the request's cost (Usage.webSearches:
      -- Anthropic's server_tool_use.web_search_requests, the web_search_call items of a Responses reply),
      -- so GET /admin/api/calls shows them beside the cost. NULL for rows written before this version
      -- and for requests that made none.
      ALTER TABLE usage ADD COLUMN web_searches INTEGER;
    `,
  },
  {
    version: 23,
    name: "failed attempts' usage under their own provider",
    up: `
      -- A request whose failed attempts' usage their providers reported (and billed) is one row per
      -- attempt, each under the provider, model and account it was made with, so usage by provider,
      -- model and account, and money spent against subscriptions' use, count it where it was spent:
      -- 0 a whole request (every row before this version), 1 a request's row holding its served
      -- reply's share, 2 a failed attempt's share (summed, but no request: not counted nor listed).
      ALTER TABLE usage ADD COLUMN split INTEGER NOT NULL DEFAULT 0;
    `,
  },
];

/** The schema version this build writes. */
export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The schema version `db` records (0 for a new database, whose `schema_migrations` does not exist yet). */
export function schemaVersion(db: Database): number {
  const table = db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get();
  if (!table) return 0;
  return (db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null }).v ?? 0;
}

/**
 * Applies every migration not yet recorded in `schema_migrations`, each in its own IMMEDIATE
 * transaction; re-checks inside the transaction so two processes opening the same file at once apply
 * each migration exactly once. Idempotent.
 * @param now ms since the epoch, recorded as `applied_at`
 * @returns the versions applied by this call (empty when the schema was current)
 * @throws StoreError `schema` when the database records a version newer than this build knows
 */
export function migrate(db: Database, now: () => number, migrations: readonly Migration[] = MIGRATIONS): number[] {
  db.run(
    "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
  );
  const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
  const current = (): number =>
    (db.query("SELECT MAX(version) AS v FROM schema_migrations").get() as { v: number | null }).v ?? 0;
  const have = current();
  if (have > latest) {
    throw new StoreError(
      "schema",
      `database schema version ${have} is newer than this build supports (${latest}); upgrade switchyard`,
    );
  }
  const applied: number[] = [];
  for (const m of migrations) {
    if (m.version <= have) continue;
    db.transaction(() => {
      const done = db.query("SELECT 1 FROM schema_migrations WHERE version = ?").get(m.version);
      if (done) return;
      if (typeof m.up === "string") db.run(m.up);
      else m.up(db);
      db.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)").run(
        m.version,
        m.name,
        Math.round(now()),
      );
      applied.push(m.version);
    }).immediate();
  }
  return applied;
}
