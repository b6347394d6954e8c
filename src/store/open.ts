/**
 * Opening the store a gateway runs on (SPEC D-1, D-2): the embedded SQLite file in the data directory,
 * or PostgreSQL for a `postgres://` URL (`--database` / `server.database`).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { Clock } from "../../pipeline/ports.ts";
import { UNWRITTEN_FILE } from "./postgres/keep-unwritten.ts";
import { isPostgresUrl } from "./postgres/url.ts";
import type { RefusedLine } from "./refused-rows.ts";
import { goBackSteps } from "./sqlite/db.ts";
import { openSqliteStore } from "./sqlite/store.ts";
import type { SchemaUpgrade, Store } from "./types.ts";

/**
 * Opens the store: PostgreSQL when `database` is a `postgres://` URL (SPEC D-2; outage notices go to the
 * log as warnings; its module is imported only then), else the embedded SQLite file in the data directory.
 * `resyncMs` is the environment's `SWITCHYARD_RESYNC_MS` (a positive integer, ms; anything else: the
 * PostgreSQL store's default of 2 s): how often the shared store re-reads account state and client
 * keys as the safety net under LISTEN/NOTIFY (tests lengthen it so that only an announcement can carry
 * another instance's change). `instanceId` is this process's id (PostgreSQL: in leases, notifications
 * and `instance_configs`; default a new UUID).
 * @throws Error for a `database` value that is not a PostgreSQL URL, or when PostgreSQL cannot be reached
 *   or refuses the instance (the message names the database by host, port and name, never its user or
 *   password).
 */
export async function openStore(database: string | undefined, dataDir: string, traceRingSize: number | undefined, log: (line: string) => void, clock: Clock, beforeFlush: () => void, resyncMs?: string, instanceId?: string): Promise<Store> {
  // Either store's notices: JSON lines through the app's log (a run of failed flushes, an outage, is said once)
  const lines = {
    onError: (message: string) => log(JSON.stringify({ level: "warn", time: clock.now(), msg: `store: ${message}` })),
    onInfo: (message: string) => log(JSON.stringify({ level: "info", time: clock.now(), msg: `store: ${message}` })),
    // rows refused at the cap while writes fail (lost): the outage's count, at most once a minute, and its final count
    onRefused: ((level, message, counts) => log(JSON.stringify({ level, time: clock.now(), msg: `store: ${message}`, ...counts }))) satisfies RefusedLine,
  };
  if (database === undefined || database === "") {
    const store = openSqliteStore({
      path: join(dataDir, "switchyard.db"),
      // the app's clock: timestamps, expiry, budget windows and the once-a-minute bound of the refused-rows line
      clock,
      traceRingSize,
      beforeFlush,
      ...lines,
    });
    const kept = resolve(dataDir, UNWRITTEN_FILE);
    if (existsSync(kept)) {
      // written by a stop on PostgreSQL (src/store/postgres/keep-unwritten.ts): only a start on it writes them
      log(JSON.stringify({
        level: "warn",
        time: clock.now(),
        msg: `this data directory holds the rows a stop on PostgreSQL could not write (${kept}); they are written by a start on that database (--database), not to the embedded store`,
        path: kept,
      }));
    }
    const u = store.upgrade;
    if (u) {
      // said once, at the start that did it: an earlier build refuses the file from now on
      log(JSON.stringify({
        level: "warn",
        time: clock.now(),
        msg: `store upgraded from schema ${u.from} to ${u.to}: earlier switchyard versions refuse to open it; the file as it was is kept at ${u.backup} (to go back to an earlier version, ${goBackSteps(u.backup!, store.path)}: what this version stored since is then lost)`,
        path: store.path,
        backup: u.backup,
      }));
    }
    return store;
  }
  if (!isPostgresUrl(database)) throw new Error("--database / server.database must be a postgres:// (or postgresql://) URL");
  // Loaded only here: a gateway on SQLite never holds the PostgreSQL store's code (issue 17, idle memory).
  const { openPostgresStore } = await import("./postgres/store.ts");
  const { isUnavailable } = await import("./postgres/db.ts");
  const safe = new URL(database);
  const where = `${safe.protocol}//${safe.host}${safe.pathname}`;
  let store: Store & { createdSchema?: number };
  try {
    store = await openPostgresStore({
      url: database,
      // the app's clock, as the embedded store's: timestamps, the ends of cooldowns, locks, pairings,
      // circuits, quota windows and bindings read back, a rotated key's grace, the refused-rows line's bound
      clock,
      traceRingSize,
      beforeFlush,
      resyncMs: Number(resyncMs) >= 1 ? Math.floor(Number(resyncMs)) : undefined,
      instanceId,
      unwrittenFile: resolve(dataDir, UNWRITTEN_FILE),
      ...lines,
    });
  } catch (err) {
    // Bun's client says only "Failed to connect": name the database (without user or password), and
    // what to check, so a start that stops here says which of the operator's settings it was.
    const said = err instanceof Error ? err.message : String(err);
    throw new Error(
      isUnavailable(err)
        ? `cannot reach the PostgreSQL database ${where} (${said}): check that it runs and accepts connections there, and the URL given with --database or server.database; an instance on a shared store does not start without it`
        : `the PostgreSQL database ${where}: ${said}${/database ".*" does not exist/.test(said) ? `: create it first (createdb ${decodeURIComponent(safe.pathname.slice(1))}, or CREATE DATABASE in psql), owned by or granting CREATE to the role in the URL: the first instance makes switchyard's tables in it` : ""}`,
      { cause: err },
    );
  }
  // A database that held no switchyard tables: this start made them (the others find them made).
  const created = store.createdSchema;
  log(JSON.stringify({ level: "info", time: clock.now(), msg: created === undefined ? "shared store: PostgreSQL" : `shared store: PostgreSQL; this start created switchyard's tables in it (schema ${created})`, database: where, instanceId }));
  const u = store.upgrade;
  if (u) {
    log(JSON.stringify({
      level: "warn",
      time: clock.now(),
      msg: upgradeWarning(u),
      database: where,
      added: u.steps,
    }));
  }
  // A data directory that ran on the embedded store before: what it stored stays there, unseen.
  const embedded = join(dataDir, "switchyard.db");
  if (existsSync(embedded)) {
    log(JSON.stringify({
      level: "warn",
      time: clock.now(),
      msg: "this data directory also holds an embedded SQLite store: its client keys, accounts, stored combos, aliases and settings, and its usage are not in PostgreSQL and are not copied there; create the keys and accounts again through the admin API or the CLI",
      path: embedded,
    }));
  }
  return store;
}

/**
 * The warning of the start that upgraded a shared PostgreSQL schema (SPEC D-2). Earlier versions refuse
 * to start on it from then on (migratePg refuses a newer schema), but one already running when another
 * instance migrated keeps serving on it without what the new steps store: during a rolling upgrade a
 * client key disabled through an upgraded instance was still served by an old one, and neither said so
 * (newuser15 N3). The steps are named (`added` in the log line), with that consequence when it applies,
 * and that the calls such an instance serves are listed with transport unknown (its usage insert names
 * only its own columns).
 */
export function upgradeWarning(u: SchemaUpgrade): string {
  const steps = u.steps ?? [];
  const keyDisable = steps.includes("client keys disabled") ? ": a client key disabled through an upgraded instance is still served by such an instance until it is upgraded" : "";
  // Its usage insert names its own columns: the calls it records name no transport (listed as unknown).
  const transport = steps.includes("transport per request") ? `${keyDisable ? ", and" : ":"} the calls it serves are listed with transport unknown` : "";
  const budgets = steps.includes(BUDGET_WINDOWS_AT_FIRST_USE) ? BUDGETS_APART : "";
  // Its queries count every usage row as a request: a failed attempt's own row (schema 25) too.
  const attempts = steps.includes(ATTEMPTS_APART) ? ATTEMPT_ROWS : "";
  return `shared store upgraded from schema ${u.from} to ${u.to}: instances of earlier switchyard versions refuse to start on it, and one still running on it serves on without what ${u.from + 1 === u.to ? `schema ${u.to}` : `schemas ${u.from + 1}–${u.to}`} added (${steps.join(", ")})${keyDisable}${transport}; upgrade every instance that shares it now${attempts}${budgets}`;
}

/** The name of PostgreSQL schema 25's step (src/store/postgres/migrations.ts). */
const ATTEMPTS_APART = "failed attempts' usage under their own provider";

/**
 * What {@link upgradeWarning} adds for an upgrade across PostgreSQL schema 25: an instance from before it
 * reads a failed attempt's billed usage, which upgraded instances record as a row of its own
 * (src/store/rows.ts SPLIT), as a request of its own.
 */
const ATTEMPT_ROWS =
  "; until then such an instance lists a failed attempt whose usage an upgraded one recorded as a call of its own and counts it among the requests of its usage, and lists that attempt's request with its served reply's tokens and cost only";

/** The name of PostgreSQL schema 22's step (src/store/postgres/migrations.ts). */
const BUDGET_WINDOWS_AT_FIRST_USE = "key budget windows open at first use";

/**
 * What {@link upgradeWarning} adds for an upgrade across PostgreSQL schema 22: an instance from before it
 * aligns a key budget's window to multiples of its length since the epoch (a day's to midnight UTC), the
 * upgraded ones open it at the key's first request, so a window opened while both run is two windows,
 * each counted by its own instances (the upgrade tryout of 2026-12-07: 8 requests of 18 tokens all
 * answered against a 100-token budget, the webhook posted 0.5 and 0.9 twice, with two `resets_at`), and
 * the earlier instance's use is not in the upgraded instances' window once it stops (90 tokens lost).
 */
const BUDGETS_APART =
  "; key budgets: an instance from before schema 22 aligns a key's budget window to multiples of its length since the epoch (a day's to midnight UTC) where upgraded ones open it at the key's first request, so a window opened while both run (a key created meanwhile, or the next window once one ends) is counted apart by each: each lets the key spend the whole budget and posts its own budget alerts (with its own resets_at), and the earlier instance's use is not in the upgraded instances' window once it stops; where budgets matter, stop every instance of an earlier version before starting the first upgraded one";
