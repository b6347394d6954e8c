/**
 * Admin API under /admin/api (SPEC 9.3). Same guard as /v1, but a key needs the `admin` scope unless
 * the caller is local and keys are not required. The CLI authenticates with the per-start admin token
 * it reads from instance.json (SPEC 2.2), so it keeps working when `require_api_key` is on.
 */
import { roundUsd, spentUsd } from "../limits/dollars.ts";
import { Elysia } from "elysia";
import * as v from "valibot";
import { adminAccess, type AdminAuth } from "./access.ts";
import { ConfigWriter } from "./config-writer.ts";
import { changeKey } from "./key-change.ts";
import { keyNameProblem, MAX_KEY_NAME } from "./key-name.ts";
import { KeyScopes } from "./key-scopes.ts";
import { SINCE, SINCE_MESSAGE } from "./since.ts";
import type { SessionBook } from "./sessions.ts";
import type { BudgetUse, KeyLimits, KeyLookup, MinuteUse } from "../../pipeline/ports.ts";
import { keyLimits } from "../config/load.ts";
import { KeyLimitsSchema } from "../config/schema.ts";
import type { Store } from "../store/types.ts";
import { CASE_ONLY, MAX_USAGE_BUCKETS, parseCallCursor, StoreError, type UsageFilter } from "../store/types.ts";
import { adminError, parseInput, readBody, storeErrorStatus, strictBody } from "./replies.ts";

/** What the admin API reads and changes. */
export interface AdminDeps {
  /** `server.body_timeout_ms` in force: how long a request body may take to arrive (src/admin/replies.ts `readJson`); default 120 s. */
  bodyTimeoutMs?: () => number;
  store: Store;
  keys: KeyLookup;
  /** The admin token written to instance.json at start (compared in constant time). */
  adminToken: string;
  requireApiKey: () => boolean;
  /** SPEC 9.6: a key's budget use in its current windows, its requests in flight and its minute's rpm / tpm use (the limit counters), by the key's id (pipeline/key-id.ts). */
  keyUse?: (id: string, limits: KeyLimits) => Promise<{ budgets: BudgetUse[]; inFlight: number; minute?: MinuteUse }>;
  /** Whether the flight recorder holds a request's bodies (SPEC O-6), for `recorded` in GET /calls. */
  recorded?: (requestId: string) => boolean;
  /** The ids of the providers in force: a new key's `provider/*` model pattern must name one. */
  providerIds?: () => Iterable<string>;
  /**
   * The ids of the subscription providers in force (kinds claude-code, codex): their requests' cost is
   * the API-price equivalent, not money spent (SPEC 9.5), so GET /usage's `cost` keeps it apart.
   */
  subscriptionProviderIds?: () => Iterable<string>;
  /** Dashboard sessions (cookie + CSRF token, SPEC 9.4). */
  sessions?: SessionBook;
  /** Called after a key was created, revoked or changed (rotated, disabled, enabled, its limits) here (the live `keys_changed` event: open Keys pages re-read). */
  keysChanged?: (change: "created" | "revoked" | "changed", name: string) => void;
  /**
   * Called after `PATCH /keys/{name}` changed a key's limits, with its id (pipeline/key-id.ts) and its
   * limits before and after, before the answer: raises the budget alerts a lowered budget is past
   * (src/alerts/budget-change-alerts.ts). Never rejects.
   */
  keyLimitsChanged?: (id: string, before: KeyLimits | undefined, after: KeyLimits | undefined) => Promise<void>;
  /**
   * Runs a key's create and its limits-and-tag changes one at a time with the other key changes given the
   * same writer (its `keys` queue, src/admin/config-writer.ts); a writer of their own when not given.
   * Rotate, disable, enable and revoke check no name and run at once, through no queue.
   */
  writer?: ConfigWriter;
  /** Extra routes contributed by other modules (accounts status, dry run, …). */
  extend?: (app: Elysia<"/admin/api">) => Elysia<"/admin/api">;
}

/** Whether a request may use the admin API (src/admin/access.ts has the rule). */
export function adminAllowed(request: Request, peer: string | undefined, deps: AdminAuth): boolean {
  return adminAccess(request, peer, deps).ok;
}

/**
 * The admin access rule's refusal of a request (its 401 or 403 in the admin error shape), or undefined
 * when it may proceed; dashboard sessions another instance issued or ended are read first. Every admin
 * route runs it before its handler, and so does the server's catch-all under `/admin/api/` before it
 * answers an unknown path (404) or a method a path does not take (405 with `Allow`): until 2026-12-05
 * those were answered to anyone, so an unauthenticated caller could list the API's paths and methods, and
 * learned of its 401 only by using the right method (newuser15's tryout).
 */
export async function adminRefusal(request: Request, peer: string | undefined, auth: AdminAuth): Promise<Response | undefined> {
  await auth.sessions?.sync(request);
  const access = adminAccess(request, peer, auth);
  return access.ok ? undefined : adminError(access.status, access.message);
}

/** A key rotation's grace period: `0`, or a whole number and s, m, h or d (`10m`, `24h`); at most 30 days. */
export const GRACE = /^(0|[1-9]\d*(s|m|h|d))$/;

/** The body of `POST /keys/{name}/rotate` (optional; an unknown field is a 400 naming it). */
export const KeyRotate = strictBody({
  /** How long the previous secret is still accepted (GRACE); absent or `0`: refused at once. */
  grace: v.optional(v.pipe(v.string("grace must be a string such as 10m"), v.regex(GRACE, "grace must be 0 or look like 30s, 10m, 24h or 7d"))),
}, "a key rotation");

/** ms of a {@link GRACE} value. */
export function graceMs(grace: string | undefined): number {
  const m = /^(\d+)(s|m|h|d)?$/.exec(grace ?? "0");
  return Number(m?.[1] ?? 0) * ({ s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m?.[2] ?? "s") as "s"] ?? 1000);
}

/** The body of `POST /keys` (an unknown field is a 400 naming it). */
export const KeyCreate = strictBody({
  /** src/admin/key-name.ts has the rule; surrounding whitespace is dropped. */
  name: v.pipe(
    v.string("name must be a string"),
    v.trim(),
    v.rawCheck(({ dataset, addIssue }) => {
      const problem = dataset.typed ? keyNameProblem(dataset.value) : undefined;
      if (problem) addIssue({ message: problem });
    }),
    v.description(`Letters, digits, ".", "_" and "-", starting with a letter or digit; at most ${MAX_KEY_NAME} characters.`),
  ),
  /** SPEC 9.3: `admin` lets the key use the admin API and the dashboard; none by default. */
  scopes: v.optional(KeyScopes),
  tag: v.optional(v.pipe(v.string("tag must be a string"), v.maxLength(128, "tag is at most 128 characters"))),
  /** SPEC 9.6: rpm, tpm, concurrency, budgets, models; the shape of the config file's `keys[].limits`. */
  limits: v.optional(KeyLimitsSchema),
}, "a key");

/**
 * The first `provider/*` entry of a key's `models` allow-list whose provider is not among `providers`
 * (such a pattern would allow nothing: a `provider/model` name goes to that provider only), as a 400's
 * message and param; undefined when every pattern names a known provider.
 */
export function unknownProviderPattern(models: readonly string[] | undefined, providers: readonly string[]): { message: string; param: string } | undefined {
  const i = (models ?? []).findIndex((m) => m.endsWith("/*") && !providers.includes(m.slice(0, -2)));
  if (i < 0) return undefined;
  const m = models![i];
  return {
    param: `limits.models[${i}]`,
    message: `limits.models[${i}]: ${JSON.stringify(m)} names no provider of this gateway: there is no provider ${JSON.stringify(m.slice(0, -2))}; the providers are ${providers.join(", ")}`,
  };
}

/**
 * Bucket widths of the `GET /usage` time series. `10s` only when asked for (the dashboard's request
 * rate over the last 30 minutes); the default width is chosen among the others.
 */
export const USAGE_BUCKETS = ["10s", "1m", "5m", "15m", "1h", "1d"] as const;

/** Filters shared by `GET /usage` and `GET /calls` (exact matches; `model` also matches the served `provider/model`). */
const UsageFilterEntries = {
  model: v.optional(v.pipe(v.string(), v.minLength(1, "model must not be empty"), v.description("Requested model, alias or combo, served upstream model, or provider/model."))),
  account: v.optional(v.pipe(v.string(), v.minLength(1, "account must not be empty"), v.description("Account id."))),
  key: v.optional(v.pipe(v.string(), v.minLength(1, "key must not be empty"), v.description("Client key name."))),
  provider: v.optional(v.pipe(v.string(), v.minLength(1, "provider must not be empty"), v.description("Provider id."))),
  outcome: v.optional(v.pipe(v.picklist(["ok", "error", "upstream_error", "client_closed", "rejected"], "outcome must be ok, error, upstream_error, client_closed or rejected"), v.description("How the request ended."))),
  instance: v.optional(v.pipe(v.string(), v.minLength(1, "instance must not be empty"), v.description("Name of the instance that served (server.instance_name, else host:port)."))),
  transport: v.optional(
    v.pipe(
      v.picklist(["http", "websocket", "unknown"], "transport must be http, websocket or unknown"),
      v.description("How the request came: http, websocket (Codex's Responses WebSocket), or unknown (recorded before switchyard kept it)."),
    ),
  ),
};

/** The filter fields of a parsed query, or undefined when none is given. */
function filterOf(q: { model?: string; account?: string; key?: string; provider?: string; outcome?: string; instance?: string; transport?: string }): UsageFilter | undefined {
  const f: UsageFilter = {};
  for (const k of ["model", "account", "key", "provider", "outcome", "instance", "transport"] as const) if (q[k] !== undefined) f[k] = q[k];
  return Object.keys(f).length > 0 ? f : undefined;
}

/** Query of `GET /usage`. */
export const UsageQuery = v.object({
  since: v.optional(v.pipe(v.string(), v.regex(SINCE, SINCE_MESSAGE), v.description("How far back: 30m, 24h, 7d (default 24h)."))),
  by: v.optional(v.pipe(v.picklist(["model", "account", "key", "provider", "instance"], "by must be model, account, key, provider or instance"), v.description("Grouping (default model: the served provider/model, one row per provider serving a model id; instance: the instance that served, by name)."))),
  bucket: v.optional(v.pipe(v.picklist(USAGE_BUCKETS, "bucket must be 10s, 1m, 5m, 15m, 1h or 1d"), v.description("Width of the time series' buckets (default: since/60 rounded up to one of 1m, 5m, 15m, 1h, 1d)."))),
  tz_offset: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^-?\d{1,3}$/, "tz_offset must be whole minutes east of UTC, from -840 to 840"),
      v.transform(Number),
      v.minValue(-840, "tz_offset must be whole minutes east of UTC, from -840 to 840"),
      v.maxValue(840, "tz_offset must be whole minutes east of UTC, from -840 to 840"),
      v.description("The caller's UTC offset in minutes east of UTC (-480 for PST, 60 for CET, 330 for India; default 0): the series' buckets start at multiples of their width in that local time, so a 1d bucket is the caller's day (local midnight to midnight), not UTC's. One offset serves the whole window: across a daylight-saving change the buckets before it are an hour off the local clock of their day."),
    ),
  ),
  ...UsageFilterEntries,
});

/**
 * The `series` of `GET /usage` (SPEC 9.4 charts): buckets of `bucket` (or the smallest width that
 * gives at most 60 buckets over `since`) from `now − since` rounded down to a bucket, to now; every
 * bucket present, zeros included.
 */
export function usageSeriesWindow(sinceMs: number, bucket: (typeof USAGE_BUCKETS)[number] | undefined, now: number): { sinceMs: number; untilMs: number; bucketMs: number } {
  const widths = USAGE_BUCKETS.slice(1).map((b) => parseSince(b)!);
  const bucketMs = bucket ? parseSince(bucket)! : (widths.find((w) => w * 60 >= sinceMs) ?? widths[widths.length - 1]);
  return { sinceMs: now - sinceMs, untilMs: now + 1, bucketMs };
}

/** Query of `GET /calls`. */
export const CallsQuery = v.object({
  limit: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^\d{1,7}$/, "limit must be a whole number from 1 to 1000"),
      v.transform(Number),
      v.minValue(1, "limit must be a whole number from 1 to 1000"),
      v.maxValue(1000, "limit must be a whole number from 1 to 1000"),
      v.description("How many recent calls, 1–1000 (default 50)."),
    ),
  ),
  since: v.optional(v.pipe(v.string(), v.regex(SINCE, SINCE_MESSAGE), v.description("Only calls this recent: 30m, 24h, 7d (default: any age)."))),
  before: v.optional(v.pipe(v.string(), v.check((c) => parseCallCursor(c) !== undefined, "before must be a cursor from an answer's older"), v.description("Only calls older than this cursor (an earlier answer's `older`): the next older page."))),
  after: v.optional(v.pipe(v.string(), v.check((c) => parseCallCursor(c) !== undefined, "after must be a cursor from an answer's newer"), v.description("The `limit` calls just newer than this cursor (an earlier answer's `newer`), still newest first: the next newer page."))),
  ...UsageFilterEntries,
  account: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, "account must not be empty"),
      v.description("Account id: the calls it served, and those in which it answered an attempt with 429 (rateLimited) before another account served or the call failed."),
    ),
  ),
  id: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1, "id must not be empty"),
      v.description("A request id (X-Request-Id, req_…) or a route id (X-Switchyard-Route-Id, sy_…): only that call, wherever it is in the list (a route id resolves while its route trace is kept, the newest settings.trace_ring_size). The other filters still apply."),
    ),
  ),
});


/** Parses a relative time like "24h", "30m", "7d" into ms. */
export function parseSince(s: string): number | undefined {
  const m = SINCE.exec(s.trim());
  if (!m) return undefined;
  const n = Number(m[1]);
  return n * { s: 1000, m: 60_000, h: 3600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
}

/**
 * `POST /keys/{name}/disable|enable` (`switchyard keys disable|enable NAME`, the Keys page): turns an
 * active stored key off for a while, or back on. Answers `{name, disabled, disabledAt?, note?}`; 404 when
 * no active stored key has the name, 409 for a config key's (changed in the file), 503 while the store is
 * away. A stored key that shares its name with a config key is the one switched, and `note` says so
 * ({@link configNamesakeNote}). A dashboard signed in with the key is signed out when it is disabled (its sessions end in the
 * store, on every instance), and stays signed out when the key is enabled again.
 */
async function keySwitch(deps: AdminDeps, name: string, disabled: boolean): Promise<unknown> {
  try {
    if (!(await deps.store.setKeyDisabled(name, disabled))) return adminError(404, `No active key named ${name}: disable or enable an active stored key (switchyard keys list).`);
  } catch (e) {
    if (e instanceof StoreError) {
      if (e.code === "read_only") return adminError(409, `${e.message}: a key of the config file is turned off by removing it from the file (and a reload)`);
      return adminError(storeErrorStatus(e.code), e.message);
    }
    throw e;
  }
  // A dashboard signed in with the key is signed out now, as a revoke does: a session only refused while
  // the key was off came back at `enable` (review13 R3). The stored key's sessions, by its hashes (read
  // after the switch: the store's memory has it then): a config key of the same name keeps its own (R11).
  if (disabled) await deps.sessions?.endKey(deps.store.storedKeyHashes(name));
  deps.keysChanged?.("changed", name);
  const keys = await deps.store.listKeys();
  const listed = keys.find((k) => k.name === name && k.source === "db" && k.revokedAt === undefined);
  const namesake = keys.some((k) => k.name === name && k.source === "config");
  return { name, disabled, ...(listed?.disabledAt !== undefined ? { disabledAt: listed.disabledAt } : {}), ...(namesake ? { note: configNamesakeNote(name, disabled ? "disabled" : "enabled") } : {}) };
}

/**
 * What an answer about a stored key says when the config file declares a key of the same name too (a
 * stored key made before the file named one like it): the stored one was acted on (as `DELETE
 * /keys/{name}` revokes it), the config key is untouched and is changed in the file.
 */
export function configNamesakeNote(name: string, done: "disabled" | "enabled" | "rotated" | "revoked" | "changed"): string {
  const how = done === "changed" ? "has its limits changed" : "is turned off, or given a new secret,";
  return `${done} the stored key ${name}; the config file also declares a key named ${name}, which is not affected: a key of the config file ${how} in the file (and a reload).`;
}

/** The admin routes as an Elysia plugin. */
export function adminApi(given: AdminDeps) {
  const writer = given.writer ?? new ConfigWriter();
  const deps: AdminDeps = { ...given, writer };
  let app = new Elysia({ prefix: "/admin/api" })
    .onBeforeHandle(async ({ request, server, set }) => {
      // Admin answers carry accounts, keys, calls and recorded bodies: never kept in a browser's or a
      // proxy's cache.
      set.headers["cache-control"] = "no-store";
      set.headers["x-content-type-options"] = "nosniff";
      const peer = (server as { requestIP(r: Request): { address: string } | null } | null)?.requestIP(request)?.address;
      return adminRefusal(request, peer, deps);
    })
    .get("/keys", async () => {
      const keys = await deps.store.listKeys();
      // SPEC 9.6: limits with their current use (budget windows, requests in flight, this minute's
      // requests and tokens against rpm / tpm) for active keys.
      // A key's use is counted by its id (a key created with a revoked key's name has its own), which
      // stays the gateway's: the listing shows the name. A USD budget also says how many of the key's
      // requests in its window it could not count (a model without a price, try18 D17): the counters
      // count them as they settle (no usage query: review19 R5).
      const withUse = async ({ id, ...k }: (typeof keys)[number]) => {
        if (!k.limits || k.revokedAt !== undefined || !deps.keyUse) return k;
        return { ...k, use: await deps.keyUse(id ?? k.name, k.limits) };
      };
      return { keys: await Promise.all(keys.map(withUse)) };
    })
    .post(
      "/keys",
      async ({ request, set }) => {
        const input = await readBody(request, KeyCreate, deps.bodyTimeoutMs?.());
        if (!input.ok) return input.response;
        const unknownProvider = deps.providerIds && unknownProviderPattern(input.value.limits?.models, [...deps.providerIds()]);
        if (unknownProvider) return adminError(400, unknownProvider.message, unknownProvider.param);
        return writer.run("keys", async () => {
          // Names that differ only in case would read as the same key in tables, filters and alerts.
          const name = input.value.name;
          const twin = (await deps.store.listKeys()).find((k) => k.revokedAt === undefined && k.name !== name && k.name.toLowerCase() === name.toLowerCase());
          if (twin) return adminError(409, `a key named ${JSON.stringify(twin.name)} already exists ${CASE_ONLY}: choose another name`, "name");
          try {
            const limits = input.value.limits ? keyLimits(input.value.limits) : undefined;
            const created = await deps.store.createKey(input.value.name, input.value.scopes, input.value.tag, limits);
            deps.keysChanged?.("created", input.value.name);
            set.status = 201;
            const { id: _id, ...key } = created.key;
            return { ...created, key };
          } catch (e) {
            if (e instanceof StoreError) {
              // A name already in use: say how to free it or what else to do.
              const name = JSON.stringify(input.value.name);
              // one another instance sharing the store created since this one last read its keys
              if (e.code === "conflict" && e.message.endsWith(CASE_ONLY)) return adminError(409, `${e.message}: choose another name`, "name");
              if (e.code === "conflict") return adminError(409, `${e.message}: revoke it first (switchyard keys revoke ${name}) or choose another name`, "name");
              if (e.code === "read_only") return adminError(409, `${e.message}: choose another name (a key of the config file is changed in the file)`, "name");
              return adminError(storeErrorStatus(e.code), e.message);
            }
            throw e;
          }
        });
      },
      { parse: "none" },
    )
    .post(
      "/keys/:name/rotate",
      async ({ params, request }) => {
        const input = await readBody(request, KeyRotate, deps.bodyTimeoutMs?.(), {});
        if (!input.ok) return input.response;
        // Through no queue (it checks no name): a leaked key's new secret is not held back by other changes (config-writer.ts).
        return (async () => {
          try {
            const r = await deps.store.rotateKey(params.name, graceMs(input.value.grace));
            deps.keysChanged?.("created", params.name);
            const { id: _id, ...key } = r.key;
            const namesake = (await deps.store.listKeys()).some((k) => k.name === params.name && k.source === "config");
            return { ...r, key, ...(namesake ? { note: configNamesakeNote(params.name, "rotated") } : {}) };
          } catch (e) {
            if (e instanceof StoreError) {
              if (e.code === "not_found") return adminError(404, `No active key named ${params.name}: rotate an active stored key (switchyard keys list).`);
              if (e.code === "read_only") return adminError(409, `${e.message}: a key of the config file gets a new secret in the file (and a reload)`);
              if (e.code === "invalid") return adminError(400, e.message, "grace");
              return adminError(storeErrorStatus(e.code), e.message);
            }
            throw e;
          }
        })();
      },
      { parse: "none" },
    )
    // its limits and tag (src/admin/key-change.ts)
    .patch("/keys/:name", async ({ params, request }) => changeKey(deps, params.name, request), { parse: "none" })
    // Disable, enable and revoke check no name and go through no queue: a leaked key is shut out at once,
    // not after another change that waits (src/admin/config-writer.ts).
    .post("/keys/:name/disable", ({ params }) => keySwitch(deps, params.name, true))
    .post("/keys/:name/enable", ({ params }) => keySwitch(deps, params.name, false))
    .delete("/keys/:name", ({ params }) =>
      (async () => {
        // Elysia hands path parameters over percent-decoded.
        const name = params.name;
        try {
          // The stored key's hashes, read before it is revoked (a revoked key leaves the store's memory): a
          // dashboard signed in with it is signed out with it, one signed in with a config key of the same name is not.
          const hashes = deps.store.storedKeyHashes(name);
          const ok = await deps.store.revokeKey(name);
          if (!ok) return adminError(404, `No active key named ${name}.`);
          await deps.sessions?.endKey(hashes);
          deps.keysChanged?.("revoked", name);
          const namesake = (await deps.store.listKeys()).some((k) => k.name === name && k.source === "config");
          return { revoked: name, ...(namesake ? { note: configNamesakeNote(name, "revoked") } : {}) };
        } catch (e) {
          if (e instanceof StoreError) return adminError(e.code === "unavailable" || e.code === "closed" ? 503 : 409, e.message);
          throw e;
        }
      })(),
    )
    .get("/usage", async ({ query }) => {
      const q = parseInput(UsageQuery, query, "query");
      if (!q.ok) return q.response;
      const since = q.value.since ?? "24h";
      const by = q.value.by ?? "model";
      const filter = filterOf(q.value);
      const now = Date.now();
      // SPEC 9.5: what subscriptions served is their use at API prices, apart from money spent (each row's and bucket's subscriptionUsd)
      const subscriptionProviders = [...(deps.subscriptionProviderIds?.() ?? [])];
      const rows = (await deps.store.usageSummary({ sinceMs: now - parseSince(since)!, by, filter, subscriptionProviders })).map(roundCost);
      let window = usageSeriesWindow(parseSince(since)!, q.value.bucket, now);
      if ((window.untilMs - window.sinceMs) / window.bucketMs > MAX_USAGE_BUCKETS - 1) {
        // A bucket the caller chose is refused; with the default (1d at most) a since longer than
        // MAX_USAGE_BUCKETS days keeps its rows whole and its series to the newest buckets (`series.from`
        // says where it starts): `switchyard usage --since 3000d` has no bucket to choose.
        if (q.value.bucket) return adminError(400, `since ${since} in buckets of ${q.value.bucket} makes more than ${MAX_USAGE_BUCKETS} buckets; choose a wider bucket or a shorter since`);
        window = { ...window, sinceMs: window.untilMs - (MAX_USAGE_BUCKETS - 1) * window.bucketMs };
      }
      const buckets = (await deps.store.usageSeries({ ...window, offsetMs: (q.value.tz_offset ?? 0) * 60_000, filter, subscriptionProviders })).map(roundCost);
      const series = { bucketMs: window.bucketMs, from: buckets[0]?.t ?? window.sinceMs, to: now, buckets };
      const echo = filter ? { filter } : {};
      const cost = costSplit(rows);
      if (by === "key" && deps.keyUse) {
        // SPEC 9.6: budget use next to each key's usage.
        // Usage rows are grouped by the key's name (a revoked key's and its replacement's together); the
        // budgets are those of the active key of that name, counted by its id.
        const active = new Map((await deps.store.listKeys()).filter((k) => k.limits?.budgets && k.revokedAt === undefined).map((k) => [k.name, k]));
        return {
          since,
          by,
          ...echo,
          cost,
          rows: await Promise.all(
            rows.map(async (r) => {
              const k = r.group !== null ? active.get(r.group) : undefined;
              return k ? { ...r, budgets: (await deps.keyUse!(k.id ?? k.name, k.limits!)).budgets } : r;
            }),
          ),
          series,
        };
      }
      return { since, by, ...echo, cost, rows, series };
    })
    .get("/calls", async ({ query }) => {
      const q = parseInput(CallsQuery, query, "query");
      if (!q.ok) return q.response;
      if (q.value.before !== undefined && q.value.after !== undefined) return adminError(400, "give before or after, not both", "after");
      const since = q.value.since !== undefined ? Date.now() - parseSince(q.value.since)! : undefined;
      const filter = filterOf(q.value);
      const before = q.value.before !== undefined ? parseCallCursor(q.value.before) : undefined;
      const after = q.value.after !== undefined ? parseCallCursor(q.value.after) : undefined;
      // `id`: a route id is resolved through its trace to the request id the usage row carries.
      const requestId = q.value.id !== undefined ? ((await deps.store.getTrace(q.value.id))?.requestId ?? q.value.id) : undefined;
      const page = await deps.store.callsPage({ limit: q.value.limit ?? 50, sinceMs: since, filter, before, after, requestId });
      // SPEC O-6: which calls the flight recorder holds the bodies of (the dashboard's call view).
      const recorded = deps.recorded;
      // try17's tryout: how each call came, `unknown` for rows recorded before switchyard kept it (never guessed).
      const calls = page.calls.map((c) => {
        const out = { ...roundCost(c), transport: c.transport ?? "unknown" };
        return recorded?.(c.requestId) ? { ...out, recorded: true } : out;
      });
      return { calls, ...(page.older !== undefined ? { older: page.older } : {}), ...(page.newer !== undefined ? { newer: page.newer } : {}) };
    })
    .get("/route-traces/:id", async ({ params }) => {
      const id = params.id;
      const t = await deps.store.getTrace(id);
      if (!t) return adminError(404, `No route trace ${id}: take a route id from switchyard calls list (GET /admin/api/calls) or a reply's X-Switchyard-Route-Id header; only the newest settings.trace_ring_size traces are kept.`);
      // a trace of an earlier version names no transport: unknown, as in GET /calls
      return t.transport ? t : { ...t, transport: "unknown" };
    });
  if (deps.extend) app = deps.extend(app as never) as never;
  // SPEC 9.3: the OpenAPI document of every route above (src/openapi.ts), built on the first request
  // for it and kept. Its generator (@elysiajs/openapi, @valibot/to-json-schema) is loaded then: ~15 MB
  // of memory an instance that nobody asks for its schema does not need.
  const routes = app;
  return app.get(
    "/openapi.json",
    async () => new Response((await import("./openapi.ts")).adminOpenApiJson(routes as never), { headers: { "content-type": "application/json;charset=utf-8" } }),
  );
}

/**
 * The period's cost in two sums (SPEC 9.5; newuser12b's tryout: the Overview added a subscription's
 * API-price equivalent to money spent): `spentUsd`, what requests served by API keys (and other
 * non-subscription providers) cost at their prices, and `subscriptionUsd`, what requests served by
 * subscription logins would have cost at API prices (the subscription is paid for by the month, not
 * per request). From usage rows of any grouping (each row's `subscriptionUsd` is the part of its
 * `costUsd` that subscriptions served).
 */
export function costSplit(rows: ReadonlyArray<{ costUsd: number; subscriptionUsd?: number }>): { spentUsd: number; subscriptionUsd: number } {
  let cost = 0;
  let subscriptionUsd = 0;
  for (const r of rows) {
    cost += r.costUsd || 0;
    subscriptionUsd += r.subscriptionUsd || 0;
  }
  return { spentUsd: spentUsd({ costUsd: cost, subscriptionUsd }), subscriptionUsd: roundUsd(subscriptionUsd) };
}

/**
 * `costUsd` (and a usage row's `subscriptionUsd`) to 12 significant digits: a sum or product of prices
 * in binary floating point read 0.00041999999999999996 in `GET /calls` (the CLI and the dashboard round
 * it; a script reading the API got the noise). A row without a cost is handed back as it is.
 */
function roundCost<T extends { costUsd?: number; subscriptionUsd?: number }>(row: T): T {
  if (!(typeof row.costUsd === "number" && row.costUsd !== 0)) return row;
  return { ...row, costUsd: roundUsd(row.costUsd), ...(row.subscriptionUsd ? { subscriptionUsd: roundUsd(row.subscriptionUsd) } : {}) };
}
