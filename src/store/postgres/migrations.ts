/**
 * Versioned schema migrations of the PostgreSQL store (SPEC D-2), separate from the SQLite ones: the
 * same tables with PostgreSQL types (BIGINT ms since the epoch, BOOLEAN, JSONB-free TEXT for JSON so
 * rows round-trip byte for byte), plus what only a shared database needs (leases, counters). Each
 * migration runs once, in its own transaction with the row that records it; the whole run holds a
 * transaction-scoped advisory lock so instances starting together migrate one at a time. Never edit a
 * released migration: append a new one.
 */
import type { SQL } from "bun";
import { StoreError } from "../types.ts";

/** One schema step: SQL text (several statements allowed). */
export interface PgMigration {
  /** 1, 2, 3, … with no gaps. */
  version: number;
  name: string;
  up: string;
}

/** All migrations, in order. */
export const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: "initial schema",
    up: `
      CREATE TABLE client_keys (
        name        TEXT PRIMARY KEY,
        hash        TEXT NOT NULL UNIQUE,
        scopes      TEXT NOT NULL DEFAULT '[]',
        tag         TEXT,
        created_at  BIGINT NOT NULL,
        revoked_at  BIGINT,
        limits      TEXT                              -- JSON KeyLimits (SPEC 9.6), NULL = unlimited
      );
      -- SPEC 9.6: each key's open budget window per window size (tokens and USD since started_at).
      CREATE TABLE key_budget_windows (
        key_name   TEXT NOT NULL,
        "window"   TEXT NOT NULL,
        started_at BIGINT NOT NULL,
        tokens     DOUBLE PRECISION NOT NULL DEFAULT 0,
        usd        DOUBLE PRECISION NOT NULL DEFAULT 0,
        PRIMARY KEY (key_name, "window")
      );
      CREATE TABLE accounts (
        id              TEXT PRIMARY KEY,
        provider_id     TEXT NOT NULL,
        credential      TEXT NOT NULL,
        priority        INTEGER NOT NULL DEFAULT 0,
        max_concurrency INTEGER,
        proxy           TEXT,
        disabled        BOOLEAN NOT NULL DEFAULT FALSE,
        created_at      BIGINT NOT NULL,
        updated_at      BIGINT NOT NULL
      );
      CREATE TABLE account_models (
        account_id    TEXT PRIMARY KEY,
        models        TEXT NOT NULL,
        discovered_at BIGINT NOT NULL
      );
      CREATE TABLE credential_overrides (
        account_id       TEXT PRIMARY KEY,
        base_fingerprint TEXT NOT NULL,
        credential       TEXT NOT NULL,
        updated_at       BIGINT NOT NULL
      );
      CREATE TABLE cooldowns (
        account_id TEXT NOT NULL,
        model      TEXT NOT NULL,
        until      BIGINT NOT NULL,
        reason     TEXT NOT NULL,
        level      INTEGER NOT NULL DEFAULT 0,
        since      BIGINT NOT NULL,
        PRIMARY KEY (account_id, model)
      );
      CREATE TABLE account_locks (
        account_id TEXT PRIMARY KEY,
        until      BIGINT,
        reason     TEXT NOT NULL,
        since      BIGINT NOT NULL
      );
      CREATE TABLE removed_models (
        account_id TEXT NOT NULL,
        model      TEXT NOT NULL,
        reason     TEXT NOT NULL,
        until      BIGINT,
        since      BIGINT NOT NULL,
        PRIMARY KEY (account_id, model)
      );
      CREATE TABLE quarantined_credentials (
        fingerprint TEXT PRIMARY KEY,
        account_id  TEXT,
        reason      TEXT NOT NULL,
        since       BIGINT NOT NULL
      );
      CREATE TABLE provider_circuits (
        provider_id TEXT PRIMARY KEY,
        open_until  BIGINT NOT NULL,
        reason      TEXT,
        since       BIGINT NOT NULL
      );
      CREATE TABLE quota_windows (
        account_id   TEXT NOT NULL,
        "window"     TEXT NOT NULL,
        model        TEXT NOT NULL,
        used_percent DOUBLE PRECISION,
        remaining    DOUBLE PRECISION,
        quota_limit  DOUBLE PRECISION,
        reset_at     BIGINT,
        updated_at   BIGINT NOT NULL,
        PRIMARY KEY (account_id, "window", model)
      );
      CREATE TABLE bindings (
        key        TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX bindings_expires_at ON bindings (expires_at);
      CREATE TABLE usage (
        id                 BIGSERIAL PRIMARY KEY,
        request_id         TEXT NOT NULL,
        ts                 BIGINT NOT NULL,
        client_format      TEXT NOT NULL,
        requested_model    TEXT NOT NULL,
        provider_id        TEXT,
        model              TEXT,
        account_id         TEXT,
        key_name           TEXT,
        input_tokens       BIGINT,
        output_tokens      BIGINT,
        cache_read_tokens  BIGINT,
        cache_write_tokens BIGINT,
        reasoning_tokens   BIGINT,
        estimated          BOOLEAN NOT NULL,
        outcome            TEXT NOT NULL,
        status             INTEGER NOT NULL,
        ttfb_ms            BIGINT,
        total_ms           BIGINT NOT NULL,
        attempts           INTEGER NOT NULL,
        fallback           BOOLEAN NOT NULL,
        cost_usd           DOUBLE PRECISION,          -- SPEC 9.5; NULL when not priced
        unpriced           BOOLEAN NOT NULL DEFAULT FALSE
      );
      CREATE INDEX usage_ts ON usage (ts);
      CREATE INDEX usage_request_id ON usage (request_id);
      CREATE TABLE route_traces (
        seq        BIGSERIAL PRIMARY KEY,
        route_id   TEXT NOT NULL UNIQUE,
        request_id TEXT NOT NULL,
        ts         BIGINT NOT NULL,
        body       TEXT NOT NULL
      );
      CREATE INDEX route_traces_request_id ON route_traces (request_id);
      -- Leases (SPEC D-2): a slot of a scope ("account:ID", "key:NAME") held by one instance until it
      -- is released or expires (the instance died and stopped renewing it).
      CREATE TABLE leases (
        id          TEXT PRIMARY KEY,
        scope       TEXT NOT NULL,
        instance_id TEXT NOT NULL,
        expires_at  BIGINT NOT NULL
      );
      CREATE INDEX leases_scope ON leases (scope, expires_at);
      CREATE INDEX leases_instance ON leases (instance_id);
      -- Fixed-window counters (SPEC 9.6 key limits across instances): one row per name and window start.
      CREATE TABLE counters (
        name         TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        value        DOUBLE PRECISION NOT NULL,
        expires_at   BIGINT NOT NULL,
        PRIMARY KEY (name, window_start)
      );
    `,
  },
  {
    version: 2,
    name: "combos, aliases, settings and account flags from the admin API",
    up: `
      -- SPEC 9.3: objects created through the admin API, next to the config file's read-only ones.
      CREATE TABLE stored_combos (
        name       TEXT PRIMARY KEY,
        spec       TEXT NOT NULL,                    -- JSON combo in the config file's shape
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      CREATE TABLE stored_aliases (
        name       TEXT PRIMARY KEY,
        target     TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
      );
      -- Top-level keys of the settings block set through the admin API (the file's keys win).
      CREATE TABLE stored_settings (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,                    -- JSON
        updated_at BIGINT NOT NULL
      );
      -- Config-file accounts disabled through the admin API (stored accounts use accounts.disabled).
      CREATE TABLE account_flags (
        account_id TEXT PRIMARY KEY,
        disabled   BOOLEAN NOT NULL,
        updated_at BIGINT NOT NULL
      );
    `,
  },
  {
    version: 3,
    name: "token-saver savings per request",
    up: `
      -- SPEC S-4: characters and estimated tokens (characters / 4) the token savers removed from the
      -- body that was served; 0 when they removed nothing (and for rows written before this version).
      ALTER TABLE usage ADD COLUMN saved_chars BIGINT NOT NULL DEFAULT 0,
                        ADD COLUMN saved_tokens BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 4,
    name: "leased key-limit shares and the OAuth refresh lock row",
    up: `
      -- SPEC 9.6, D-2: each instance's share of a client key's limit (rpm, tpm, budget: one row per
      -- window; concurrency: window_start 0). An instance admits from its share in memory and reports
      -- its use; a row whose instance stopped renewing it (expires_at passed) counts only its reported
      -- use (windows) or nothing (concurrency slots), so a dead instance's unused share returns.
      CREATE TABLE quota_shares (
        name         TEXT NOT NULL,
        window_start BIGINT NOT NULL,
        instance_id  TEXT NOT NULL,
        granted      DOUBLE PRECISION NOT NULL,
        used         DOUBLE PRECISION NOT NULL,
        window_end   BIGINT NOT NULL,               -- 0 for concurrency slots (no window)
        expires_at   BIGINT NOT NULL,
        PRIMARY KEY (name, window_start, instance_id)
      );
      CREATE INDEX quota_shares_instance ON quota_shares (instance_id);
      -- Sets one instance's share of a pool to what it asks for, or to what is left (one round trip;
      -- a volatile function sees rows committed while it waited for the pool's lock).
      CREATE FUNCTION switchyard_quota_share(p_name TEXT, p_start BIGINT, p_end BIGINT, p_instance TEXT,
          p_limit DOUBLE PRECISION, p_target DOUBLE PRECISION, p_used DOUBLE PRECISION, p_ttl BIGINT)
        RETURNS TABLE (granted DOUBLE PRECISION, others_used DOUBLE PRECISION, db_now BIGINT)
        LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_now BIGINT := (extract(epoch from clock_timestamp()) * 1000)::bigint;
        v_held DOUBLE PRECISION;
        v_used DOUBLE PRECISION;
        v_grant DOUBLE PRECISION;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('quota:' || p_name || '@' || p_start::text));
        IF p_end = 0 THEN
          SELECT COALESCE(SUM(q.granted), 0), 0 INTO v_held, v_used FROM quota_shares q
            WHERE q.name = p_name AND q.window_start = p_start AND q.instance_id <> p_instance AND q.expires_at > v_now;
        ELSE
          SELECT COALESCE(SUM(CASE WHEN q.expires_at > v_now THEN GREATEST(q.granted, q.used) ELSE q.used END), 0),
                 COALESCE(SUM(q.used), 0)
            INTO v_held, v_used FROM quota_shares q
            WHERE q.name = p_name AND q.window_start = p_start AND q.instance_id <> p_instance;
        END IF;
        v_grant := GREATEST(0, LEAST(p_target, p_limit - v_held));
        INSERT INTO quota_shares (name, window_start, instance_id, granted, used, window_end, expires_at)
          VALUES (p_name, p_start, p_instance, v_grant, p_used, p_end, v_now + p_ttl)
          ON CONFLICT (name, window_start, instance_id)
          DO UPDATE SET granted = excluded.granted, used = excluded.used, expires_at = excluded.expires_at;
        RETURN QUERY SELECT v_grant, v_used, v_now;
      END $$;
      -- SPEC D-2, P-7: one OAuth refresh per account across instances. A row held by one instance until
      -- it deletes it or until expires_at (renewed while the token call runs; a dead holder's row lapses).
      CREATE TABLE refresh_locks (
        account_id  TEXT PRIMARY KEY,
        holder      TEXT NOT NULL,
        expires_at  BIGINT NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: "drop the unread usage request-id index",
    up: `
      -- No query reads usage by request_id (they search usage by ts; a call's route id is found through
      -- route_traces_request_id): the index only cost each usage insert a second B-tree write.
      DROP INDEX IF EXISTS usage_request_id;
    `,
  },
  {
    version: 6,
    name: "flush batch ids: a flush whose outcome is unknown is replayed once",
    up: `
      -- One row per flush statement (src/store/postgres/flush.ts): a flush that got no answer (a stalled
      -- database) may still commit; its replay carries the same id and writes nothing when it did.
      -- Pruned after a week by the instances.
      CREATE TABLE IF NOT EXISTS flush_batches (
        id  TEXT PRIMARY KEY,
        at  BIGINT NOT NULL
      );
      CREATE INDEX IF NOT EXISTS flush_batches_at ON flush_batches (at);
    `,
  },
  {
    version: 7,
    name: "a window's reported quota use never goes back",
    up: `
      -- An instance's statements about one share travel on different pooled connections: a report sent
      -- before a refill could commit after it and write back the smaller use, so other instances counted
      -- less than was spent (until the next report, or for the rest of the window once the key was idle
      -- there). A window's use only grows, so the larger value is kept; concurrency slots (window_end 0)
      -- are held, not used up, and keep the value sent. Same function as version 4 otherwise.
      CREATE OR REPLACE FUNCTION switchyard_quota_share(p_name TEXT, p_start BIGINT, p_end BIGINT, p_instance TEXT,
          p_limit DOUBLE PRECISION, p_target DOUBLE PRECISION, p_used DOUBLE PRECISION, p_ttl BIGINT)
        RETURNS TABLE (granted DOUBLE PRECISION, others_used DOUBLE PRECISION, db_now BIGINT)
        LANGUAGE plpgsql VOLATILE AS $$
      DECLARE
        v_now BIGINT := (extract(epoch from clock_timestamp()) * 1000)::bigint;
        v_held DOUBLE PRECISION;
        v_used DOUBLE PRECISION;
        v_grant DOUBLE PRECISION;
      BEGIN
        PERFORM pg_advisory_xact_lock(hashtext('quota:' || p_name || '@' || p_start::text));
        IF p_end = 0 THEN
          SELECT COALESCE(SUM(q.granted), 0), 0 INTO v_held, v_used FROM quota_shares q
            WHERE q.name = p_name AND q.window_start = p_start AND q.instance_id <> p_instance AND q.expires_at > v_now;
        ELSE
          SELECT COALESCE(SUM(CASE WHEN q.expires_at > v_now THEN GREATEST(q.granted, q.used) ELSE q.used END), 0),
                 COALESCE(SUM(q.used), 0)
            INTO v_held, v_used FROM quota_shares q
            WHERE q.name = p_name AND q.window_start = p_start AND q.instance_id <> p_instance;
        END IF;
        v_grant := GREATEST(0, LEAST(p_target, p_limit - v_held));
        INSERT INTO quota_shares (name, window_start, instance_id, granted, used, window_end, expires_at)
          VALUES (p_name, p_start, p_instance, v_grant, p_used, p_end, v_now + p_ttl)
          ON CONFLICT (name, window_start, instance_id)
          DO UPDATE SET granted = excluded.granted,
                        used = CASE WHEN excluded.window_end = 0 THEN excluded.used ELSE GREATEST(quota_shares.used, excluded.used) END,
                        expires_at = excluded.expires_at;
        RETURN QUERY SELECT v_grant, v_used, v_now;
      END $$;
    `,
  },
  {
    version: 8,
    name: "client key generations",
    up: `
      -- SPEC 9.6: a key created with the name of a revoked key is a new key: one generation more, so its
      -- id (pipeline/key-id.ts, name#N) names its own budget windows and quota pools (key:ID:…), which
      -- start fresh. Existing keys are generation 0, whose id is the name: their windows stay theirs.
      ALTER TABLE client_keys ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 9,
    name: "lock credential fingerprints",
    up: `
      -- SPEC 6.3 "until changed": the fingerprint (hex SHA-256, never the key) of the API key a lock was set
      -- under; a lock whose account now holds another key is cleared. NULL: an OAuth account's lock, or one
      -- set before this version (cleared by switchyard accounts unlock).
      ALTER TABLE account_locks ADD COLUMN fingerprint TEXT;
    `,
  },
  {
    version: 10,
    name: "dashboard sessions",
    up: `
      -- SPEC 9.4: signed-in dashboards, shared by every instance (a session one issued is valid on all; a
      -- sign-out on one ends it on all). Hashes only: the session token's (the cookie value) and the
      -- sign-in key's (as client_keys holds it), never either.
      CREATE TABLE dashboard_sessions (
        token_hash TEXT PRIMARY KEY,
        subject    TEXT NOT NULL,
        key_hash   TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
      );
      CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);
      CREATE INDEX dashboard_sessions_subject ON dashboard_sessions (subject);
    `,
  },
  {
    version: 11,
    name: "key rotation",
    up: `
      -- switchyard keys rotate: the secret a rotated key had (its hex SHA-256, never the secret) and until
      -- when (ms) it is still accepted; NULL when there is none or no grace was given.
      ALTER TABLE client_keys ADD COLUMN prev_hash TEXT;
      ALTER TABLE client_keys ADD COLUMN prev_until BIGINT;
    `,
  },
  {
    version: 12,
    name: "client key history",
    up: `
      -- A key created with the name of a revoked key is a row of its own (name, generation): the revoked
      -- key's row stays, with its dates, for \`keys list\` (newuser12a G2: it was overwritten). One active
      -- key per name (the partial unique index).
      ALTER TABLE client_keys DROP CONSTRAINT client_keys_pkey;
      ALTER TABLE client_keys ADD PRIMARY KEY (name, generation);
      CREATE UNIQUE INDEX client_keys_active_name ON client_keys (name) WHERE revoked_at IS NULL;
    `,
  },
  {
    version: 13,
    name: "client keys disabled",
    up: `
      -- switchyard keys disable|enable: when (ms) an active key was disabled; NULL while it is not.
      ALTER TABLE client_keys ADD COLUMN disabled_at BIGINT;
    `,
  },
  {
    version: 14,
    name: "instance configs",
    up: `
      -- newuser12a G24: each running instance's values of the config that counts in the shared pool
      -- (client keys' limits, settings.pricing, …; src/shared-config.ts), so another can say where they
      -- differ. parts: JSON {path: JSON text}; no secret (a key's secret as a short hash fingerprint).
      CREATE TABLE instance_configs (
        instance_id TEXT PRIMARY KEY,
        label       TEXT NOT NULL,
        parts       TEXT NOT NULL,
        updated_at  BIGINT NOT NULL
      );
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
    name: "deployment salts, instance config origins",
    up: `
      -- review14 R8: random values made once per database by the first instance that needs one
      -- (name → value; 'instance_configs': the salt of a config key secret's fingerprint in
      -- instance_configs, so that no table of guesses precomputed for one deployment serves another).
      CREATE TABLE deployment_salts (
        name       TEXT PRIMARY KEY,
        value      TEXT NOT NULL,
        created_at BIGINT NOT NULL
      );
      -- Where an instance runs (a hash of its host and data directory, one live instance per data
      -- directory): an instance started again there replaces the row its killed predecessor left.
      ALTER TABLE instance_configs ADD COLUMN origin TEXT;
    `,
  },
  {
    version: 18,
    name: "transport per request",
    up: `
      -- try17's tryout: how the request reached the gateway, 'http' (an HTTP request of its own) or
      -- 'websocket' (a response.create frame on Codex's Responses WebSocket, SPEC 2.5). NULL for rows
      -- written before this version, and for those an instance of an earlier version still writes on
      -- an upgraded shared store (its insert names its own columns): read as unknown, never guessed.
      ALTER TABLE usage ADD COLUMN transport TEXT;
    `,
  },
  {
    version: 19,
    name: "client key prefixes",
    up: `
      -- try18 D4 (SPEC 9.4 "keys show a prefix only"): the current secret's first characters (sy-mHYRP,
      -- src/store/secrets.ts keyPrefix; never enough to use it), written at create and rotate, so a
      -- pasted secret can be matched to its key. NULL for keys stored before: their secret is unknown.
      ALTER TABLE client_keys ADD COLUMN prefix TEXT;
    `,
  },
  {
    version: 20,
    name: "client key rotation times",
    up: `
      -- try18 D16: when (ms) the key's secret was last replaced (switchyard keys rotate), so a rotation
      -- whose answer was lost (a reload, a closed tab) still shows on the Keys page and in the admin API.
      -- NULL for a key never rotated, for one rotated before this version, and left as it was by a
      -- rotation through an instance of an earlier version still running on the upgraded schema.
      ALTER TABLE client_keys ADD COLUMN rotated_at BIGINT;
    `,
  },
  {
    version: 21,
    name: "unpriced requests per budget share",
    up: `
      -- review19 R5: a USD budget's share also counts the requests of its window that a model without
      -- a price served (its cost cannot be counted), reported with its use every second, so every
      -- instance lists the window's count (the sum over its shares) without reading the usage rows.
      -- 0 for rows written before, and in rows an instance of an earlier version still reports.
      ALTER TABLE quota_shares ADD COLUMN unpriced BIGINT NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 22,
    name: "key budget windows open at first use",
    up: `
      -- SPEC 2.3 "budgets: fixed windows aligned to the first use", as on the embedded store: a key
      -- budget's current window (its pool name in quota_shares, key:ID:budget:WINDOW:UNIT), opened by the
      -- key's first counted request after the previous one ended and lasting the window's length. Every
      -- instance opens it with one upsert that keeps a start whose end has not passed (on the database's
      -- clock), so instances opening it at once agree on one start. Until this version windows were
      -- aligned to multiples of their length since the epoch; the windows of that alignment still open
      -- (their use counted in quota_shares) are kept as they are, to their aligned end, so an upgrade
      -- neither resets a key's budget use nor counts it twice; the next window opens at first use.
      -- An instance of an earlier version still running on the upgraded schema keeps its aligned windows.
      CREATE TABLE budget_window_starts (
        name         TEXT PRIMARY KEY,
        window_start BIGINT NOT NULL,
        window_end   BIGINT NOT NULL
      );
      INSERT INTO budget_window_starts (name, window_start, window_end)
        SELECT DISTINCT ON (name) name, window_start, window_end FROM quota_shares
          WHERE name LIKE 'key:%:budget:%' AND window_end > (extract(epoch from clock_timestamp()) * 1000)::bigint
          ORDER BY name, window_start DESC;
    `,
  },
  {
    version: 23,
    name: "quota windows by API key",
    up: `
      -- The API key a quota window was read with, as 16 hex characters of its SHA-256 (never the key):
      -- a start with another key in the config file leaves the old key's windows out (a new key is a new
      -- quota), and an instance still on the old key (a rolling re-key) writes windows the others leave
      -- out. NULL for OAuth and keyless accounts and for windows stored before this version (an instance
      -- of an earlier version still running on the upgraded schema writes them so).
      ALTER TABLE quota_windows ADD COLUMN credential TEXT;
    `,
  },
  {
    version: 24,
    name: "web searches per request",
    up: `
      -- How many server-side web searches were priced into the request's cost (Usage.webSearches:
      -- Anthropic's server_tool_use.web_search_requests, the web_search_call items of a Responses reply),
      -- so GET /admin/api/calls shows them beside the cost. NULL for rows written before this version,
      -- for requests that made none, and in rows an instance of an earlier version still writes on the
      -- upgraded schema (its insert names its own columns).
      ALTER TABLE usage ADD COLUMN web_searches BIGINT;
    `,
  },
  {
    version: 25,
    name: "failed attempts' usage under their own provider",
    up: `
      -- A request whose failed attempts' usage their providers reported (and billed) is one row per
      -- attempt, each under the provider, model and account it was made with, so usage by provider,
      -- model and account, and money spent against subscriptions' use, count it where it was spent:
      -- 0 a whole request (every row before this version, and the rows an instance of an earlier
      -- version still writes on the upgraded schema), 1 a request's row holding its served reply's
      -- share, 2 a failed attempt's share (summed, but no request: not counted nor listed).
      ALTER TABLE usage ADD COLUMN split SMALLINT NOT NULL DEFAULT 0;
    `,
  },
];

/** The schema version this build writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;

/** Advisory lock key held while migrating (an arbitrary constant: "sy-migr"). */
const MIGRATION_LOCK = 0x73792d6d;

/**
 * Applies every migration not yet recorded in `schema_migrations`, under an advisory lock.
 * @param now ms since the epoch, recorded as `applied_at`
 * @returns the versions applied by this call
 * @throws StoreError `schema` when the database records a version newer than this build knows
 */
export async function migratePg(sql: SQL, now: () => number, migrations: readonly PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  const latest = migrations.length ? migrations[migrations.length - 1]!.version : 0;
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx.unsafe(
      "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)",
    );
    const [row] = await tx`SELECT COALESCE(MAX(version), 0)::int AS v FROM schema_migrations`;
    const have = Number(row?.v ?? 0);
    if (have > latest) {
      throw new StoreError("schema", `database schema version ${have} is newer than this build supports (${latest}); upgrade switchyard`);
    }
    const applied: number[] = [];
    for (const m of migrations) {
      if (m.version <= have) continue;
      await tx.unsafe(m.up);
      await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${Math.round(now())})`;
      applied.push(m.version);
    }
    return applied;
  });
}
