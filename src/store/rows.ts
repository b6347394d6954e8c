/**
 * Validation and row conversion shared by the store backends (SQLite, PostgreSQL): argument checks that
 * throw `StoreError("invalid")`, coercions that keep a malformed usage record from failing a batch, and
 * the mapping between database rows (snake_case columns) and the port's objects. No I/O.
 */
import { keyIdFor } from "../../pipeline/index.ts";
import type { Account, ClientKey, Credential, KeyLimits, UsageRecord } from "../../pipeline/ports.ts";
import type { AccountState } from "./account-state.ts";
import { type CallRow, type KeyChange, type QuotaWindow, StoreError } from "./types.ts";

/** Largest accepted client-key name, in characters. */
export const MAX_NAME_LENGTH = 128;
/** Longest secret `lookup` will hash; longer inputs are rejected without hashing. */
export const MAX_SECRET_LENGTH = 4096;

/** A stored account as read from the `accounts` table joined with `account_models`. */
export interface AccountRow {
  id: string;
  provider_id: string;
  credential: string;
  priority: number;
  max_concurrency: number | null;
  proxy: string | null;
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  disabled: number | boolean;
  models: string | null;
}

/** A usage row as read back, with the route id of its newest trace when a query joins it. */
export interface UsageRow {
  request_id: string;
  ts: number;
  client_format: string;
  requested_model: string;
  provider_id: string | null;
  model: string | null;
  account_id: string | null;
  key_name: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cache_read_tokens: number | null;
  cache_write_tokens: number | null;
  reasoning_tokens: number | null;
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  estimated: number | boolean;
  outcome: string;
  status: number;
  ttfb_ms: number | null;
  total_ms: number;
  attempts: number;
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  fallback: number | boolean;
  /** USD (SPEC 9.5); null when not priced. */
  cost_usd: number | null;
  /** 0/1 (SQLite) or a boolean (PostgreSQL). */
  unpriced: number | boolean;
  /** SPEC S-4: characters and estimated tokens the token savers removed (0 when none). */
  saved_chars: number | string | null;
  saved_tokens: number | string | null;
  /** JSON array of the account ids that answered an attempt with 429, or null (UsageRecord.rateLimited). */
  rate_limited?: string | null;
  /** The instance that served the request: its name and id (UsageRecord.instance, instanceId); null before schema 16. */
  instance?: string | null;
  instance_id?: string | null;
  /** How the request came, `http` or `websocket` (UsageRecord.transport); null before SQLite schema 17 / PostgreSQL 18: unknown. */
  transport?: string | null;
  /** Web searches priced into the cost (Usage.webSearches); null when none, and before SQLite schema 22 / PostgreSQL 24. */
  web_searches?: number | string | null;
  /** {@link SPLIT}: 0 a whole request, 1 a request whose failed attempts' usage is in rows of their own, 2 such a row; 0 before SQLite schema 23 / PostgreSQL 25. */
  split?: number | string | null;
  route_id?: string | null;
}

/** A client-key name: non-empty, at most MAX_NAME_LENGTH characters, no control characters. @throws StoreError `invalid`. */
export function checkName(name: unknown): string {
  if (typeof name !== "string" || name.trim().length === 0) throw new StoreError("invalid", "key name must be a non-empty string");
  if (name.length > MAX_NAME_LENGTH) throw new StoreError("invalid", `key name is longer than ${MAX_NAME_LENGTH} characters`);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters on purpose
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new StoreError("invalid", "key name contains control characters");
  return name;
}

/** Scopes as a de-duplicated array of non-empty strings ([] when absent). @throws StoreError `invalid`. */
export function checkScopes(scopes: unknown): string[] {
  if (scopes === undefined || scopes === null) return [];
  if (!Array.isArray(scopes) || scopes.some((s) => typeof s !== "string" || s.length === 0)) {
    throw new StoreError("invalid", "scopes must be an array of non-empty strings");
  }
  return [...new Set(scopes as string[])];
}

/** A key tag, or undefined when absent or empty. @throws StoreError `invalid` for a non-string. */
export function checkTag(tag: unknown): string | undefined {
  if (tag === undefined || tag === null || tag === "") return undefined;
  if (typeof tag !== "string") throw new StoreError("invalid", "tag must be a string");
  return tag;
}

/** A non-empty string id (`what` names it in the error). @throws StoreError `invalid`. */
export function checkId(v: unknown, what: string): string {
  if (typeof v !== "string" || v.length === 0) throw new StoreError("invalid", `${what} must be a non-empty string`);
  return v;
}

/** A finite time in ms since the epoch, rounded. @throws StoreError `invalid`. */
export function checkTime(v: unknown, what: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) throw new StoreError("invalid", `${what} must be a time in ms since the epoch`);
  return Math.round(v);
}

/** A credential with a known `type`. @throws StoreError `invalid` (the message never quotes the credential). */
export function checkCredential(c: unknown, accountId: string): Credential {
  const t = (c as { type?: unknown } | null)?.type;
  if (t !== "api_key" && t !== "oauth" && t !== "none") {
    throw new StoreError("invalid", `credential of account ${JSON.stringify(accountId)} has no valid type`);
  }
  return c as Credential;
}

/** A frozen copy of a client key (the lookup cache shares it between requests). */
export function freezeKey(k: ClientKey): ClientKey {
  const key: ClientKey = { name: k.name, scopes: Object.freeze([...k.scopes]) as string[], source: k.source };
  if (k.id !== undefined && k.id !== k.name) key.id = k.id;
  if (k.tag !== undefined) key.tag = k.tag;
  if (k.limits !== undefined) key.limits = deepFreeze(structuredClone(k.limits));
  return Object.freeze(key);
}

function deepFreeze<T>(v: T): T {
  if (v && typeof v === "object") {
    for (const x of Object.values(v)) deepFreeze(x);
    Object.freeze(v);
  }
  return v;
}

/**
 * Client key limits (SPEC 9.6) as given to `createKey` or read back: a plain object whose known fields
 * have the right types (positive integers, budgets with one amount, strings), else StoreError
 * `invalid`. The admin API and config loader validate the full shape first; this keeps bad rows out.
 */
export function checkLimits(limits: unknown): KeyLimits | undefined {
  if (limits === undefined || limits === null) return undefined;
  const bad = (m: string) => new StoreError("invalid", `limits: ${m}`);
  if (typeof limits !== "object" || Array.isArray(limits)) throw bad("must be an object");
  const l = limits as Record<string, unknown>;
  const out: KeyLimits = {};
  for (const k of ["rpm", "tpm", "concurrency"] as const) {
    const v = l[k];
    if (v === undefined) continue;
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) throw bad(`${k} must be a positive whole number`);
    out[k] = v;
  }
  if (l.budgets !== undefined) {
    if (!Array.isArray(l.budgets)) throw bad("budgets must be a list");
    out.budgets = l.budgets.map((b: any) => {
      if (!b || !["5h", "1d", "7d", "30d"].includes(b.window)) throw bad("a budget window is 5h, 1d, 7d or 30d");
      const tokens = b.tokens, usd = b.usd;
      if ((tokens === undefined) === (usd === undefined)) throw bad("a budget takes exactly one of tokens or usd");
      if (tokens !== undefined && (typeof tokens !== "number" || !Number.isInteger(tokens) || tokens < 1)) throw bad("budget tokens must be a positive whole number");
      if (usd !== undefined && (typeof usd !== "number" || !Number.isFinite(usd) || usd <= 0)) throw bad("budget usd must be a positive number");
      return tokens !== undefined ? { window: b.window, tokens } : { window: b.window, usd };
    });
  }
  if (l.models !== undefined) {
    if (!Array.isArray(l.models) || l.models.some((m) => typeof m !== "string" || m.length === 0)) throw bad("models must be a list of names");
    out.models = [...(l.models as string[])];
  }
  return out;
}

/**
 * A key's limits after a {@link KeyChange}'s `limits` (`updateKey`): a field given replaces the current
 * one, `null` or an empty list clears it, a field left out stays; `null` for the whole clears them all.
 * Undefined when no limit is left (stored as NULL: unlimited).
 * @throws StoreError `invalid` for malformed values (as `checkLimits`).
 */
export function changedLimits(current: KeyLimits | undefined, change: KeyChange["limits"]): KeyLimits | undefined {
  if (change === null) return undefined;
  if (change === undefined) return current;
  if (typeof change !== "object" || Array.isArray(change)) throw new StoreError("invalid", "limits: must be an object or null");
  const next: Record<string, unknown> = { ...current };
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) continue;
    if (v === null || (Array.isArray(v) && v.length === 0)) delete next[k];
    else next[k] = v;
  }
  const out = checkLimits(next);
  return out && Object.keys(out).length > 0 ? out : undefined;
}

/** Limits from their stored JSON; undefined for NULL or a row that no longer parses. */
export function parseLimits(json: string | null | undefined): KeyLimits | undefined {
  if (!json) return undefined;
  try {
    return checkLimits(JSON.parse(json));
  } catch {
    return undefined;
  }
}

/** Scopes from their stored JSON array. */
export function parseScopes(json: string): string[] {
  return parseStringArray(json);
}

/** The strings of a stored JSON array; [] for null, malformed JSON or a non-array. */
export function parseStringArray(json: string | null): string[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json);
    return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
  } catch {
    return [];
  }
}

/** A stored account row as an `Account` (source `db`). @throws StoreError `invalid` for a corrupt credential. */
export function rowToAccount(r: AccountRow): Account {
  let credential: Credential;
  try {
    credential = JSON.parse(r.credential) as Credential;
  } catch {
    // Never echo the parser's message: it may quote part of a token.
    throw new StoreError("invalid", `stored credential of account ${JSON.stringify(r.id)} is not valid JSON`);
  }
  const a: Account = {
    id: r.id,
    providerId: r.provider_id,
    priority: r.priority,
    credential,
    disabled: r.disabled !== 0 && r.disabled !== false,
    source: "db",
  };
  if (r.max_concurrency !== null) a.maxConcurrency = r.max_concurrency;
  if (r.proxy !== null) a.proxy = r.proxy;
  if (r.models !== null) a.models = parseStringArray(r.models);
  return a;
}

/**
 * A `quota_windows` row as read, by either store (the inverse of {@link quotaParams}): absent columns
 * left out; `reset_at` and `updated_at` (ms since the epoch) as numbers, though PostgreSQL's BIGINT
 * columns come back as strings; column `credential` is the key's short hash (QuotaWindow.keyHash).
 */
export function rowToQuota(r: any): AccountState["quotas"][number] {
  return omitUndefined({
    accountId: r.account_id,
    window: r.window,
    model: r.model,
    usedPercent: r.used_percent ?? undefined,
    remaining: r.remaining ?? undefined,
    limit: r.quota_limit ?? undefined,
    resetAt: r.reset_at === null || r.reset_at === undefined ? undefined : Number(r.reset_at),
    updatedAt: Number(r.updated_at),
    keyHash: r.credential ?? undefined,
  });
}

/** Positional parameters of a usage insert, in the column order of the `usage` table. */
export type UsageParams = (string | number | null)[];
/** Positional parameters of a trace insert: route id, request id, ts (ms), JSON body. */
export type TraceParams = [string, string, number, string];

/**
 * Positional parameters of a quota window upsert, in the column order of `quota_windows` (account id,
 * window, model, used percent, remaining, limit, reset time ms, updated time ms, the key's short hash or
 * null): non-finite numbers become null so a provider's odd header cannot fail the batch. Both stores' flushes write these.
 */
export function quotaParams(q: QuotaWindow & { updatedAt: number }): (string | number | null)[] {
  return [q.accountId, q.window, q.model, finiteOrNull(q.usedPercent), finiteOrNull(q.remaining), finiteOrNull(q.limit), intOrNull(q.resetAt), Math.round(q.updatedAt), typeof q.keyHash === "string" ? q.keyHash : null];
}

/**
 * The values of the `usage` table's `split` column (SQLite schema 23, PostgreSQL 25; SPEC 9.5, O-1):
 * every row's tokens and cost are those of its own provider, model and account, so sums over rows
 * attribute them where they were spent. `WHOLE` (0; every row written before the column): a request
 * whose usage is all its row's. `CALL` (1): a request whose failed attempts' billed usage is in `SHARE`
 * rows of their own: its row holds its served reply's share (none when no attempt served). `SHARE` (2):
 * one failed attempt's billed usage, under the provider, model and account it was made with, with its
 * request's id, time, key, outcome and instance: summed with the rest, but no request (not counted, not
 * listed); a call's listing adds its shares back ({@link addShareRows}).
 */
export const SPLIT = { WHOLE: 0, CALL: 1, SHARE: 2 } as const;

/**
 * The insert parameters of a request's usage rows: one row, or with {@link UsageRecord.split} its row
 * (the served reply's share, `SPLIT.CALL`) then one `SPLIT.SHARE` row per failed attempt billed.
 */
export function usageRowsParams(r: UsageRecord): UsageParams[] {
  const split = r.split;
  if (!split || !Array.isArray(split.billed) || split.billed.length === 0) return [usageParams(r)];
  const out = [usageParams({ ...r, usage: split.served.usage, costUsd: split.served.costUsd, unpriced: split.served.unpriced }, SPLIT.CALL)];
  for (const b of split.billed) {
    const share: UsageRecord = {
      requestId: r.requestId,
      ts: r.ts,
      clientFormat: r.clientFormat,
      requestedModel: r.requestedModel,
      providerId: b.providerId,
      model: b.model,
      accountId: b.accountId,
      keyName: r.keyName,
      usage: b.usage,
      // reported by its provider (that is why it is billed): never an estimate
      estimated: false,
      costUsd: b.costUsd,
      unpriced: b.unpriced,
      outcome: r.outcome,
      status: r.status,
      totalMs: 0,
      attempts: 0,
      fallback: false,
      instance: r.instance,
      instanceId: r.instanceId,
      transport: r.transport,
    };
    out.push(usageParams(share, SPLIT.SHARE));
  }
  return out;
}

/**
 * Positional parameters of a usage insert, coerced so a malformed record cannot fail the batch;
 * `split` the row's {@link SPLIT} value (default `WHOLE`).
 */
export function usageParams(r: UsageRecord, split: number = SPLIT.WHOLE): UsageParams {
  const u = r.usage ?? {};
  return [
    str(r.requestId) ?? "",
    intOr(r.ts, 0),
    str(r.clientFormat) ?? "",
    str(r.requestedModel) ?? "",
    str(r.providerId),
    str(r.model),
    str(r.accountId),
    str(r.keyName),
    intOrNull(u.inputTokens),
    intOrNull(u.outputTokens),
    intOrNull(u.cacheReadTokens),
    intOrNull(u.cacheWriteTokens),
    intOrNull(u.reasoningTokens),
    r.estimated ? 1 : 0,
    str(r.outcome) ?? "error",
    intOr(r.status, 0),
    intOrNull(r.ttfbMs),
    intOr(r.totalMs, 0),
    intOr(r.attempts, 0),
    r.fallback ? 1 : 0,
    typeof r.costUsd === "number" && Number.isFinite(r.costUsd) && r.costUsd >= 0 ? r.costUsd : null,
    r.unpriced ? 1 : 0,
    intOr(r.savedChars, 0),
    intOr(r.savedTokens, 0),
    rateLimitedParam(r.rateLimited),
    str(r.instance),
    str(r.instanceId),
    transportParam(r.transport),
    // null when none: the column is NULL for rows written before it, too
    u.webSearches && u.webSearches > 0 ? intOrNull(u.webSearches) : null,
    split,
  ];
}

/** Where {@link usageParams} puts the row's {@link SPLIT} value: its last parameter. */
const SPLIT_PARAM = usageParams({} as UsageRecord).length - 1;

/**
 * Whether `p` (a usage row's insert parameters) is a failed attempt's own row (`SPLIT.SHARE`), which
 * belongs with the `SPLIT.CALL` row before it: the write buffers keep or refuse them together
 * (./pending.ts). A row of an earlier version's unwritten file, without the split parameter, is not.
 */
export function isShareParams(p: UsageParams): boolean {
  return p.length > SPLIT_PARAM && p[SPLIT_PARAM] === SPLIT.SHARE;
}

/** `UsageRecord.transport` as its column holds it: `http` or `websocket`, else null (unknown). */
function transportParam(t: unknown): string | null {
  return t === "http" || t === "websocket" ? t : null;
}

/** `UsageRecord.rateLimited` as its column holds it: a JSON array of account ids, or null when none (or malformed). */
function rateLimitedParam(ids: unknown): string | null {
  if (!Array.isArray(ids)) return null;
  const kept = ids.filter((x): x is string => typeof x === "string" && x.length > 0);
  return kept.length ? JSON.stringify(kept) : null;
}

/** The token columns a call's listing adds its failed attempts' shares to ({@link addShareRows}). */
const SUMMED_COLUMNS = ["input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "web_searches"] as const;

/**
 * Calls as listed (`recentCalls`, `callsPage`: GET /admin/api/calls, `switchyard calls`, the Calls page)
 * show the request's total tokens and cost: each `SPLIT.CALL` row of `rows` gets, in place, the tokens,
 * web searches and cost of the `SPLIT.SHARE` rows of `shares` that have its request id and time (a
 * column null in all stays null; the cost to 12 significant digits, as the accounting rounds it), and
 * is `unpriced` when one of them is. Returns `rows`.
 */
export function addShareRows<R extends UsageRow>(rows: R[], shares: readonly UsageRow[]): R[] {
  if (shares.length === 0) return rows;
  const byCall = new Map<string, UsageRow[]>();
  for (const sh of shares) {
    const k = `${Number(sh.ts)}\u0000${sh.request_id}`;
    const list = byCall.get(k);
    if (list) list.push(sh);
    else byCall.set(k, [sh]);
  }
  for (const r of rows) {
    if (Number(r.split) !== SPLIT.CALL) continue;
    const list = byCall.get(`${Number(r.ts)}\u0000${r.request_id}`);
    if (!list) continue;
    const row = r as Record<string, unknown>;
    for (const sh of list) {
      const share = sh as unknown as Record<string, unknown>;
      for (const c of SUMMED_COLUMNS) {
        if (share[c] !== null && share[c] !== undefined) row[c] = Number(row[c] ?? 0) + Number(share[c]);
      }
      if (sh.cost_usd !== null && sh.cost_usd !== undefined) {
        const sum = Number(r.cost_usd ?? 0) + Number(sh.cost_usd);
        r.cost_usd = sum === 0 || !Number.isFinite(sum) ? sum : Number(sum.toPrecision(12));
      }
      if (sh.unpriced === 1 || sh.unpriced === true) r.unpriced = r.unpriced === true || r.unpriced === false ? true : 1;
    }
  }
  return rows;
}

/** Whether any of `rows` is a `SPLIT.CALL` row, whose shares {@link addShareRows} adds. */
export function hasSplitCalls(rows: readonly UsageRow[]): boolean {
  for (const r of rows) if (Number(r.split) === SPLIT.CALL) return true;
  return false;
}

/** A usage row as a `CallRow` (absent columns left out, not set to undefined). */
export function rowToCall(r: UsageRow): CallRow {
  const usage: CallRow["usage"] = {};
  if (r.input_tokens !== null) usage.inputTokens = r.input_tokens;
  if (r.output_tokens !== null) usage.outputTokens = r.output_tokens;
  if (r.cache_read_tokens !== null) usage.cacheReadTokens = r.cache_read_tokens;
  if (r.cache_write_tokens !== null) usage.cacheWriteTokens = r.cache_write_tokens;
  if (r.reasoning_tokens !== null) usage.reasoningTokens = r.reasoning_tokens;
  // PostgreSQL BIGINT columns may come back as strings.
  if (Number(r.web_searches) > 0) usage.webSearches = Number(r.web_searches);
  const c: CallRow = {
    requestId: r.request_id,
    ts: r.ts,
    clientFormat: r.client_format as CallRow["clientFormat"],
    requestedModel: r.requested_model,
    usage,
    estimated: r.estimated !== 0 && r.estimated !== false,
    outcome: r.outcome as CallRow["outcome"],
    status: r.status,
    totalMs: r.total_ms,
    attempts: r.attempts,
    fallback: r.fallback !== 0 && r.fallback !== false,
  };
  if (r.cost_usd !== null && r.cost_usd !== undefined) c.costUsd = r.cost_usd;
  if (r.unpriced === 1 || r.unpriced === true) c.unpriced = true;
  // PostgreSQL BIGINT columns may come back as strings.
  if (Number(r.saved_chars) > 0) c.savedChars = Number(r.saved_chars);
  if (Number(r.saved_tokens) > 0) c.savedTokens = Number(r.saved_tokens);
  if (r.provider_id !== null) c.providerId = r.provider_id;
  if (r.model !== null) c.model = r.model;
  if (r.account_id !== null) c.accountId = r.account_id;
  if (r.key_name !== null) c.keyName = r.key_name;
  if (r.ttfb_ms !== null) c.ttfbMs = r.ttfb_ms;
  if (r.route_id) c.routeId = r.route_id;
  if (r.instance) c.instance = r.instance;
  if (r.instance_id) c.instanceId = r.instance_id;
  // A row from before the transport was kept (or by an earlier version's instance) names none: unknown.
  if (r.transport === "http" || r.transport === "websocket") c.transport = r.transport;
  if (r.rate_limited) {
    try {
      const ids = JSON.parse(r.rate_limited) as unknown;
      if (Array.isArray(ids) && ids.length) c.rateLimited = ids.map(String);
    } catch {
      // a malformed column reads as none
    }
  }
  return c;
}

/** A string, or null for undefined/null; other values stringified. */
export function str(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === "string" ? v : String(v);
}

/**
 * A finite number rounded to an integer and held within ±`Number.MAX_SAFE_INTEGER`, else `dflt`. The
 * bound keeps a nonsense count (an upstream reporting 1e20 tokens) storable in SQLite's INTEGER and
 * PostgreSQL's BIGINT columns: beyond them the whole flush was refused, at every retry.
 */
export function intOr(v: unknown, dflt: number): number {
  return typeof v === "number" && Number.isFinite(v) ? Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.round(v))) : dflt;
}

/** {@link intOr} with null for anything but a finite number. */
export function intOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? Math.max(-Number.MAX_SAFE_INTEGER, Math.min(Number.MAX_SAFE_INTEGER, Math.round(v))) : null;
}

/** A finite number as is, else null. */
export function finiteOrNull(v: unknown): number | null {
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** A finite number as is, else undefined. */
export function finiteOrUndefined(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** A row limit clamped to 1–10,000 (50 when not a number). */
export function clampLimit(limit: number): number {
  const n = Math.floor(Number(limit));
  return Number.isFinite(n) ? Math.min(10_000, Math.max(1, n)) : 50;
}

/** The message of an error (or its string form); for logs, never containing request data. */
export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Deletes the keys whose value is undefined, in place; returns the object. */
export function omitUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/**
 * A key rotation's grace period (`KeyStore.rotateKey`), ms: a whole number from 0 (none) to 30 days.
 * @throws StoreError `invalid` otherwise
 */
export function checkGrace(ms: unknown): number {
  if (ms === undefined) return 0;
  if (typeof ms !== "number" || !Number.isInteger(ms) || ms < 0 || ms > 30 * 86_400_000) {
    throw new StoreError("invalid", "grace must be a whole number of ms from 0 to 30 days");
  }
  return ms;
}

/** The columns a key rotation's UPDATE … RETURNING answers. */
export interface RotatedRow {
  name: string;
  scopes: string;
  tag: string | null;
  created_at: number | string;
  limits: string | null;
  generation: number | string;
}

/**
 * What `rotateKey` returns for the row it changed (the same key: its id, scopes, tag, limits), with
 * `rotatedAt` (ms since the epoch), the time it wrote to the row's `rotated_at`.
 */
export function rotated(secret: string, row: RotatedRow, until: number | null, rotatedAt: number): { secret: string; key: ClientKey; createdAt: number; rotatedAt: number; previousUntil?: number } {
  const key = freezeKey({ name: row.name, id: keyIdFor(row.name, Number(row.generation ?? 0)), scopes: parseScopes(row.scopes), tag: row.tag ?? undefined, limits: parseLimits(row.limits), source: "db" });
  return { secret, key, createdAt: Number(row.created_at), rotatedAt, ...(until !== null ? { previousUntil: until } : {}) };
}
