/**
 * The configuration file's schema (SPEC 2.3), in valibot. These schemas check the *shape* of the file
 * (types, allowed keys, enums, ranges) and apply per-field defaults; the loader (load.ts) then resolves
 * `env:`/`file:` secrets, merges built-in providers and checks cross-references.
 *
 * Every object is strict: an unknown key is an error naming its path (`combos[0].targets[0].modle`).
 * Keys are snake_case in the file; the loader produces camelCase runtime types (types.ts).
 *
 * Secret-capable fields (`api_key`, `access_token`, `refresh_token`, `proxy`, `keys[].key`,
 * `server.database`) take a literal, `env:NAME` (an environment variable) or `file:PATH` (a file,
 * relative to the config file's folder, trailing newline trimmed). Messages about these fields never
 * quote the value.
 */
import * as v from "valibot";
import { MAX_JSON_DEPTH, valueNestsDeeperThan } from "../../formats/json-depth.ts";
import { describeKind, isMapping, mappingGuard, shown, strictObj, suggest } from "./errors.ts";
import { TargetWhenSchema } from "./predicate.ts";
import { EFFORT_SCALE } from "../providers/capabilities.ts";

/** Any mapping (a target's `params`), as the admin API's OpenAPI document describes it ({@link mappingGuard}). */
const ANY_MAPPING = v.record(v.string(), v.unknown());

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

/** Provider kinds (SPEC P-1), as `ProviderKind` in formats/codec.ts. */
export const PROVIDER_KINDS = [
  "anthropic",
  "openai",
  "openai-responses",
  "gemini",
  "claude-code",
  "codex",
  "openai-compatible",
  "anthropic-compatible",
] as const;


/** Combo strategies as written; `priority` is a synonym of `fallback` (SPEC 5.1). */
export const COMBO_STRATEGIES = ["fallback", "priority", "round-robin", "weighted", "least-used"] as const;

/** Portability policies for opaque reasoning state crossing providers (SPEC F-8). */
export const PORTABILITY = ["strip_with_warning", "reject"] as const;

/** Account strategies (SPEC A-3). */
export const ACCOUNT_STRATEGIES = ["scored", "p2c", "random", "round-robin"] as const;

/** Upper bound of `settings.max_attempts` (SPEC 6.1). */
export const MAX_ATTEMPTS_CAP = 20;


// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

const pick = <const T extends readonly string[]>(values: T, what: string) =>
  v.picklist(values, (i) => `${what} must be one of ${values.join(", ")}; got ${shown(i.input)}`);

const bool = (what: string) => v.boolean((i) => `${what} is true or false; got ${shown(i.input)}`);

/** An integer in [min, max]. */
const int = (what: string, min: number, max = Number.MAX_SAFE_INTEGER) =>
  v.pipe(
    v.number((i) => `${what} must be a number; got ${shown(i.input)}`),
    v.integer((i) => `${what} must be a whole number; got ${i.input}`),
    v.minValue(min, (i) => `${what} must be at least ${min}; got ${i.input}`),
    v.maxValue(max, (i) => `${what} must be at most ${max}; got ${i.input}`),
  );

const text = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a string; got ${describeKind(i.input)}`),
    v.trim(),
    v.nonEmpty(`${what} must not be empty`),
  );

/** A secret-capable string: literal, `env:NAME` or `file:PATH`. Messages never quote it. */
const secret = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a string (a literal, env:NAME or file:PATH); got ${describeKind(i.input)}`),
    v.nonEmpty(`${what} must not be empty`),
  );

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** An id: letters, digits, `.`, `_`, `-`, starting with a letter or digit (no `/`). */
const id = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a string; got ${describeKind(i.input)}`),
    v.regex(ID_RE, (i) => `${what} ${shown(i.input)} may use letters, digits, ".", "_" and "-" only (no "/")`),
  );

/**
 * A name clients send as a model name (combo, alias): no whitespace, no `/` (that means provider/model),
 * no character that shows as nothing or as another: controls and format characters (Unicode Cc, Cf: a
 * right-to-left override, a zero-width space), the other default-ignorable code points (a Hangul filler,
 * a variation selector, the combining grapheme joiner) and lone surrogates (Cs), any of which would make
 * the dashboard and `routing` show one name for another.
 */
export const MODEL_NAME_RE = /^[^\s/\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}]+$/u;
/** What {@link MODEL_NAME_RE} asks, after "`what` must not be empty or contain". */
export const MODEL_NAME_RULE = `spaces, "/" (a "/" means provider/model) or invisible characters (control or format characters such as U+200B or U+202E)`;
const modelName = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a string; got ${describeKind(i.input)}`),
    v.regex(MODEL_NAME_RE, (i) => `${what} ${shown(i.input)} must not be empty or contain ${MODEL_NAME_RULE}`),
  );

/** An http(s) URL; trailing slashes are removed. Messages do not quote it (it may carry credentials). */
const httpUrl = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a URL string; got ${describeKind(i.input)}`),
    v.check((s) => {
      try {
        const u = new URL(s);
        return u.protocol === "http:" || u.protocol === "https:";
      } catch {
        return false;
      }
    }, `${what} must be an http:// or https:// URL`),
    v.transform((s) => s.replace(/\/+$/, "")),
  );

/** A list of strings, each non-empty. */
const stringList = (what: string) =>
  v.array(text(`each entry of ${what}`), (i) => `${what} must be a list; got ${describeKind(i.input)}`);

/** A mapping section that may be written empty (`server:` with nothing → defaults). */
const section = <S extends v.GenericSchema>(schema: S, def: v.InferInput<S>) => v.nullish(schema, def as never);

// ---------------------------------------------------------------------------------------------
// server
// ---------------------------------------------------------------------------------------------

const HOST_NAME_RE = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * An entry of `server.allowed_hosts` (SPEC 2.6): a host name as a browser sends it in `Host`, without
 * scheme, port or path; lower-cased.
 */
const hostName = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a string; got ${describeKind(i.input)}`),
    v.trim(),
    v.check(
      (s) => HOST_NAME_RE.test(s),
      (i) => `${what} ${shown(i.input)} is not a host name: write the name alone, without scheme, port or path (e.g. gateway.lan)`,
    ),
    v.toLowerCase(),
  );

/**
 * Schemes never accepted in `server.cors_origins` besides `http`/`https`: a page of these is sent as
 * `Origin: null` (file, data, blob, about, javascript) or they are no page's origin (ws, wss, ftp).
 */
const NOT_APP_SCHEMES = new Set(["file", "data", "blob", "about", "javascript", "ws", "wss", "ftp"]);

/**
 * An app's own origin `scheme://host[:port]` (`app://obsidian.md`, `tauri://localhost`,
 * `chrome-extension://<id>`): what Electron apps, Tauri apps and browser extensions send in `Origin`.
 * Lower-cased, without a trailing `/`; undefined when `s` is not one (a path, a query, a user, no host,
 * or a scheme of {@link NOT_APP_SCHEMES}).
 */
function appOrigin(s: string): string | undefined {
  const m = /^([a-z][a-z0-9+.-]*):\/\/([a-z0-9._~-]+(?::\d{1,5})?)\/?$/i.exec(s);
  if (!m) return undefined;
  const scheme = m[1].toLowerCase();
  if (scheme === "http" || scheme === "https" || NOT_APP_SCHEMES.has(scheme)) return undefined;
  return `${scheme}://${m[2].toLowerCase()}`;
}

/** The `http(s)` origin `s` names, in `URL.origin` form; undefined when it is not one (a path, a query, a user). */
function webOriginOf(s: string): string | undefined {
  try {
    const u = new URL(s);
    const web = u.protocol === "http:" || u.protocol === "https:";
    return web && !u.username && !u.password && u.pathname === "/" && !s.includes("?") && !s.includes("#") ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/**
 * An entry of `server.cors_origins` (SPEC 2.6): an origin exactly as a browser engine sends it in
 * `Origin`: a web origin `http(s)://host[:port]`, normalised to `URL.origin` form (lower-case, default
 * port dropped), or an app's own origin (`app://obsidian.md`, `tauri://localhost`,
 * `chrome-extension://<id>`, {@link appOrigin}), lower-cased; such an origin's `URL.origin` is "null", so
 * the browser guard compares the header's string with it. `*` is refused (each origin is listed), and so
 * is `null`: browsers send `Origin: null` for sandboxed iframes, `file:` pages and some cross-site
 * redirects of any site, so trusting it would trust every web page.
 */
const webOrigin = (what: string) =>
  v.pipe(
    v.string((i) => `${what} must be a string; got ${describeKind(i.input)}`),
    v.trim(),
    v.check((s) => webOriginOf(s) !== undefined || appOrigin(s) !== undefined, (i) => {
      if (i.input === "*") return `${what} may not be "*": list each web origin that may call the gateway (e.g. http://localhost:5173)`;
      if (String(i.input).toLowerCase() === "null") {
        return (
          `${what} may not be "null": browsers send Origin: null for sandboxed iframes, file:// pages and some redirects of any web site, ` +
          `so allowing it would let every web page call the gateway; list the app's own origin instead (e.g. app://obsidian.md, tauri://localhost)`
        );
      }
      return (
        `${what} ${shown(i.input)} is not a web origin or an app's origin: write scheme, host and port only, as the browser or app sends it in Origin ` +
        `(e.g. http://localhost:5173, or an app's own scheme such as app://obsidian.md), no path`
      );
    }),
    v.transform((s) => webOriginOf(s) ?? appOrigin(s)!),
  );

/** `server:` (SPEC 2.1, G-1, G-4, D-3). */
export const ServerSchema = strictObj(
  {
    /** Bind address; default loopback only. */
    host: v.optional(text("host"), "127.0.0.1"),
    /** TCP port; 0 picks a free one. */
    port: v.optional(int("port", 0, 65535), 20128),
    /** G-1: require a client key even from loopback. Also REQUIRE_API_KEY=true in the environment. */
    require_api_key: v.optional(bool("require_api_key"), false),
    /** G-4 request body limit in bytes (default 32 MiB). */
    max_body_bytes: v.optional(int("max_body_bytes", 1), 32 * 1024 * 1024),
    /** G-4: ms the whole request body may take to arrive; a body still incomplete then is a 408 and the connection closes. */
    body_timeout_ms: v.optional(int("body_timeout_ms", 1), 120_000),
    /** ms a connection may sit with no request in flight (keep-alive, before its first request); 0 never closes it. Whole seconds, at most 255 (Bun's). */
    keep_alive_timeout_ms: v.optional(int("keep_alive_timeout_ms", 0, 255_000), 120_000),
    /**
     * SPEC 2.5: ms a Responses WebSocket may sit with no frame in either direction before the gateway
     * closes it (default 10 min). At least 1 s; at most 2^31-1 ms (~24.8 days), the longest timer the
     * runtime keeps (a longer one would fire at once).
     */
    websocket_idle_timeout_ms: v.optional(int("websocket_idle_timeout_ms", 1000, 2_147_483_647), 600_000),
    /** D-3 grace period for in-flight streams on SIGTERM, in ms. */
    shutdown_grace_ms: v.optional(int("shutdown_grace_ms", 0), 30_000),
    /** D-2: how this instance's usage rows and traces name it (default `host:port`: the machine's name and the port it listens on). */
    instance_name: v.optional(v.pipe(text("instance_name"), v.maxLength(128, "instance_name must be at most 128 characters"))),
    /** D-2 optional `postgres://…` URL of a shared store (the CLI's `--database` wins). Secret-capable. */
    database: v.optional(secret("database")),
    /** G-6: Host names accepted besides loopback names, IP literals and the bind host. */
    allowed_hosts: v.optional(
      v.array(hostName("each entry of allowed_hosts"), (i) => `allowed_hosts must be a list of host names; got ${describeKind(i.input)}`),
      [],
    ),
    /** G-6: web origins that get CORS headers and keep the loopback exemption. */
    cors_origins: v.optional(
      v.array(webOrigin("each entry of cors_origins"), (i) => `cors_origins must be a list of web origins; got ${describeKind(i.input)}`),
      [],
    ),
  },
  "the server section",
);

// ---------------------------------------------------------------------------------------------
// providers
// ---------------------------------------------------------------------------------------------

/**
 * `reasoning_efforts`: levels of {@link EFFORT_SCALE} only, written in lower case as the APIs take them.
 * A request's effort is clamped to the nearest configured level on that scale (src/providers/capabilities.ts):
 * a misspelt or capitalised level (`hihg`, `High`) had no place on it, so a client's valid `high` was
 * sent upstream as `medium`, or as `Low`, which the provider refuses.
 */
const reasoningEfforts = v.array(
  v.pipe(
    v.string((i) => `each entry of reasoning_efforts must be a string; got ${describeKind(i.input)}`),
    v.check(
      (e) => (EFFORT_SCALE as readonly string[]).includes(e),
      (i) => {
        const given = String(i.input);
        const lower = given.toLowerCase();
        const hint = (EFFORT_SCALE as readonly string[]).includes(lower) ? ` (write it in lower case: "${lower}")` : suggestEffort(given);
        return `reasoning_efforts entry ${JSON.stringify(given)} is not a reasoning effort${hint}; the levels are ${EFFORT_SCALE.join(", ")}`;
      },
    ),
  ),
  (i) => `reasoning_efforts must be a list; got ${describeKind(i.input)}`,
);

/** ` (did you mean "high"?)` for a level one or two edits from a known one (`hihg`), else "". */
function suggestEffort(given: string): string {
  const near = suggest(given.toLowerCase(), [...EFFORT_SCALE]);
  return near ? ` (did you mean "${near}"?)` : "";
}

/** One entry of a provider's `models:` map (ModelInfo). Token counts in tokens. */
export const ModelSchema = strictObj(
  {
    context_window: v.optional(int("context_window", 1)),
    max_output_tokens: v.optional(int("max_output_tokens", 1)),
    images: v.optional(bool("images")),
    pdf: v.optional(bool("pdf")),
    audio: v.optional(bool("audio")),
    video: v.optional(bool("video")),
    reasoning_efforts: v.optional(reasoningEfforts),
    /** SPEC R-10: models of the same provider tried (first, in order) when the upstream says this one does not exist. */
    siblings: v.optional(stringList("siblings")),
  },
  "a model entry",
);

/** `oauth:` of a subscription provider (SPEC P-9); every field defaults to the kind's real value. */
export const OAuthSchema = strictObj(
  {
    authorize_url: v.optional(httpUrl("authorize_url")),
    token_url: v.optional(httpUrl("token_url")),
    client_id: v.optional(text("client_id")),
    /** A list, or one space-separated string as OAuth writes it. */
    scopes: v.optional(
      v.union([stringList("scopes"), v.pipe(v.string(), v.transform((s) => s.split(/\s+/).filter(Boolean)))], (i) =>
        `scopes must be a list of strings or one space-separated string; got ${describeKind(i.input)}`,
      ),
    ),
    redirect_uri: v.optional(httpUrl("redirect_uri")),
  },
  "the oauth block",
);

/**
 * One `providers:` entry (SPEC 2.3, P-1). `kind` and `base_url` may be omitted for a built-in id (the
 * entry then overrides fields of the built-in); otherwise `kind` is required, and `base_url` is
 * required for the `*-compatible` kinds. Times in ms.
 */
export const ProviderSchema = strictObj(
  {
    id: id("provider id"),
    kind: v.optional(pick(PROVIDER_KINDS, "kind")),
    base_url: v.optional(httpUrl("base_url")),
    /** Known models by upstream id; a model may be written with no details (`gpt-5:`). */
    models: v.optional(
      v.nullish(
        v.pipe(
          v.custom<Record<string, unknown>>(isMapping, (i) => `models must be a mapping of model id → details; got ${describeKind(i.input)}`),
          v.record(text("model id"), v.nullish(ModelSchema, {})),
        ),
        {},
      ),
    ),
    /** Stream idle timeout (SPEC 6.4), ms. Default 60 000, or 180 000 when `slow`. */
    idle_timeout_ms: v.optional(int("idle_timeout_ms", 1)),
    /** Marks a slow provider: idle timeout 180 s unless `idle_timeout_ms` says otherwise. */
    slow: v.optional(bool("slow")),
    /** Time to wait for response headers (SPEC 6.3), ms. Default 60 000. */
    header_timeout_ms: v.optional(int("header_timeout_ms", 1)),
    /**
     * Time a streamed reply may take from its headers to its first content (text, reasoning, a tool
     * call, a finish; on a passthrough lane the start of a block too), ms, keep-alive pings or not
     * (SPEC 6.1's pre-commit phase, pipeline/commit.ts), and again from the start of a block a
     * translated lane holds until something of it arrives. Default: the larger of 240 000 and the idle
     * timeout.
     */
    first_content_timeout_ms: v.optional(int("first_content_timeout_ms", 1)),
    reply_timeout_ms: v.optional(int("reply_timeout_ms", 1)),
    /** Default concurrency slots per account (SPEC A-4). */
    max_concurrency: v.optional(int("max_concurrency", 1)),
    oauth: v.optional(OAuthSchema),
  },
  "a provider",
);

// ---------------------------------------------------------------------------------------------
// accounts
// ---------------------------------------------------------------------------------------------

/** `expires_at`: ms since the epoch, or an ISO-8601 timestamp; the output is ms since the epoch. */
const expiresAt = v.pipe(
  v.union([v.number(), v.string()], (i) => `expires_at must be ms since the epoch or an ISO-8601 timestamp; got ${describeKind(i.input)}`),
  v.check(
    (x) => (typeof x === "number" ? Number.isInteger(x) && x >= 0 : !Number.isNaN(Date.parse(x))),
    "expires_at must be ms since the epoch (a whole number) or an ISO-8601 timestamp",
  ),
  v.transform((x) => (typeof x === "number" ? x : Date.parse(x))),
);

/**
 * One `accounts:` entry (SPEC 2.3, A-1). Either `api_key` (API kinds) or `access_token` (+ optional
 * `refresh_token`, `expires_at`, `account_id`; subscription kinds); kind rules are checked by the loader.
 */
export const AccountSchema = strictObj(
  {
    id: id("account id"),
    provider: id("provider"),
    api_key: v.optional(secret("api_key")),
    access_token: v.optional(secret("access_token")),
    refresh_token: v.optional(secret("refresh_token")),
    expires_at: v.optional(expiresAt),
    account_id: v.optional(text("account_id")),
    /** Lower first; default: the account's 1-based position in the file. */
    priority: v.optional(int("priority", -1_000_000, 1_000_000)),
    max_concurrency: v.optional(int("max_concurrency", 1)),
    /** http(s) proxy URL; secret-capable (it may carry credentials). */
    proxy: v.optional(secret("proxy")),
    disabled: v.optional(bool("disabled"), false),
  },
  "an account",
);

// ---------------------------------------------------------------------------------------------
// combos
// ---------------------------------------------------------------------------------------------

/** One combo target (SPEC 5.1). */
export const TargetSchema = strictObj(
  {
    /** `provider/model`, an alias or a combo name. */
    model: text("model"),
    account: v.optional(id("account")),
    /** Draw weight for `weighted` (default 1); must be > 0. */
    weight: v.optional(
      v.pipe(
        v.number((i) => `weight must be a number; got ${shown(i.input)}`),
        v.finite("weight must be a finite number"),
        v.gtValue(0, (i) => `weight must be greater than 0; got ${i.input}`),
      ),
    ),
    /**
     * Fields merged into the upstream request body: a mapping nesting mappings and lists at most
     * MAX_JSON_DEPTH levels (1,000, the params themselves level 1), the depth the gateway takes in a
     * request body (formats/json-depth.ts): deeper params cost up to ~1.7 s of CPU in `JSON.stringify`
     * on every request they are merged into (measured 26,500–40,000 levels, Bun 1.4.5).
     */
    params: v.optional(
      v.pipe(
        mappingGuard(ANY_MAPPING, (i) => `params must be a mapping; got ${describeKind(i.input)}`),
        v.check(
          (p) => !valueNestsDeeperThan(p, MAX_JSON_DEPTH),
          `params nest mappings and lists more than ${MAX_JSON_DEPTH.toLocaleString("en-US")} levels deep (the most a request body may nest: such params would stall every request they are merged into)`,
        ),
      ),
    ),
    when: v.optional(TargetWhenSchema),
  },
  "a combo target",
);

/** One `combos:` entry (SPEC 5.1). */
export const ComboSchema = strictObj(
  {
    name: modelName("combo name"),
    strategy: v.optional(pick(COMBO_STRATEGIES, "strategy"), "fallback"),
    portability: v.optional(pick(PORTABILITY, "portability"), "strip_with_warning"),
    cache_affinity: v.optional(bool("cache_affinity"), true),
    targets: v.pipe(
      v.array(TargetSchema, (i) => `targets must be a list; got ${describeKind(i.input)}`),
      v.minLength(1, "a combo needs at least one target"),
    ),
  },
  "a combo",
);

// ---------------------------------------------------------------------------------------------
// keys, aliases, settings
// ---------------------------------------------------------------------------------------------

/** Budget windows (SPEC 9.6): fixed windows aligned to the key's first use in the window. */
export const BUDGET_WINDOWS = ["5h", "1d", "7d", "30d"] as const;

/** A non-negative finite number (USD amounts, prices). */
const amount = (what: string) =>
  v.pipe(
    v.number((i) => `${what} must be a number; got ${shown(i.input)}`),
    v.finite(`${what} must be a finite number`),
    v.minValue(0, (i) => `${what} must be at least 0; got ${i.input}`),
  );

/** One budget: a window and exactly one of `tokens` (input + output tokens) or `usd` (SPEC 9.5 prices). */
export const KeyBudgetSchema = v.pipe(
  strictObj(
    {
      window: pick(BUDGET_WINDOWS, "window"),
      tokens: v.optional(int("tokens", 1)),
      // One rule, one wording: -1 read "must be at least 0", which 0 is not (try18 D2).
      usd: v.optional(
        v.pipe(
          v.number((i) => `usd must be a number; got ${shown(i.input)}`),
          v.finite("usd must be a finite number"),
          v.gtValue(0, (i) => `usd must be greater than 0; got ${i.input}`),
        ),
      ),
    },
    "a budget",
  ),
  v.check((b) => (b.tokens === undefined) !== (b.usd === undefined), "a budget takes exactly one of tokens or usd"),
);

/** A key's `models` allow-list; `empty`: what a list naming no model is told. */
const modelsList = (empty: string) =>
  v.pipe(
    v.array(
      v.pipe(
        text("each entry of models"),
        v.check((m) => !m.includes("*") || /^[^/*\s]+\/\*$/.test(m), (i) => `models entry ${shown(i.input)}: the only pattern is provider/*`),
      ),
      (i) => `models must be a list; got ${describeKind(i.input)}`,
    ),
    v.minLength(1, empty),
  );

/**
 * Each field of {@link KeyLimitsSchema} as it is when given (not optional), for the admin API's
 * `PATCH /keys/{name}`, which takes each of them or `null` (src/admin/key-change.ts).
 */
export const KEY_LIMIT_FIELDS = {
  rpm: int("rpm", 1),
  tpm: int("tpm", 1),
  concurrency: int("concurrency", 1),
  budgets: v.pipe(
    v.array(KeyBudgetSchema, (i) => `budgets must be a list; got ${describeKind(i.input)}`),
    v.check((bs) => new Set(bs.map((b) => `${b.window}:${b.tokens === undefined ? "usd" : "tokens"}`)).size === bs.length, "two budgets of the same window and unit"),
  ),
  models: modelsList("models must name at least one model (omit it to allow every model)"),
  /** PATCH's models: there, leaving it out keeps the list, and `null` allows every model. */
  modelsChange: modelsList("models must name at least one model (null allows every model)"),
};

/**
 * `keys[].limits` (SPEC 2.3, 9.6), also the admin API's `limits` body field. Each is optional:
 * `rpm` requests per rolling minute, `tpm` input + output tokens per rolling minute, `concurrency`
 * requests in flight, `budgets` per fixed window, `models` an allow-list of model names, aliases, combos
 * or `provider/*` patterns.
 */
export const KeyLimitsSchema = strictObj(
  {
    rpm: v.optional(KEY_LIMIT_FIELDS.rpm),
    tpm: v.optional(KEY_LIMIT_FIELDS.tpm),
    concurrency: v.optional(KEY_LIMIT_FIELDS.concurrency),
    budgets: v.optional(KEY_LIMIT_FIELDS.budgets),
    models: v.optional(KEY_LIMIT_FIELDS.models),
  },
  "limits",
);

/** A key's `scopes:`. `admin` is the only scope (SPEC 9.3): a misspelt one would silently make a key without it (as POST /admin/api/keys refuses it). */
const keyScopes = v.array(
  v.pipe(text("each entry of scopes"), v.check((s: string) => s === "admin", (i) => `unknown scope ${JSON.stringify(i.input)}: the only scope is admin`)),
  (i) => `scopes must be a list; got ${describeKind(i.input)}`,
);

/** One `keys:` entry: a client key declared in the file (SPEC 2.3, G-2). */
export const KeySchema = strictObj(
  {
    name: id("key name"),
    key: secret("key"),
    /** e.g. [admin]: allows /admin/api from remote callers (SPEC 9.3). */
    scopes: v.optional(keyScopes, []),
    /** Routing predicates see it as fact `key_tag`. */
    tag: v.optional(text("tag")),
    /** SPEC 9.6: rates, concurrency, budgets and a model allow-list. */
    limits: v.optional(KeyLimitsSchema),
  },
  "a key",
);

/**
 * One `settings.pricing` entry: USD per million tokens (SPEC 9.5), and `web_searches`: USD per
 * server-side web search (the price package's usage name; its own price is per 1,000, `web_searches_kcount`).
 */
export const PriceSchema = strictObj(
  {
    input: amount("input"),
    output: amount("output"),
    cache_read: v.optional(amount("cache_read")),
    cache_write: v.optional(amount("cache_write")),
    web_searches: v.optional(amount("web_searches")),
  },
  "a price",
);

/** `settings.pricing`'s mapping of `provider/model` (or a bare model id) → {@link PriceSchema}. */
const PRICES = v.record(text("model"), PriceSchema);

/** `aliases:` name → `provider/model`, combo or alias. Names are checked by the loader. */
const ALIAS_TARGETS = v.record(v.string(), text("alias target"));
export const AliasesSchema = v.pipe(
  mappingGuard(ALIAS_TARGETS, (i) => `aliases must be a mapping of name → model or combo; got ${describeKind(i.input)}`),
  ALIAS_TARGETS,
);

const capacityList = (what: string) => v.optional(stringList(what), []);

/** `settings:` (SPEC 5.3, 6.1, 8, 9). */
export const SettingsSchema = strictObj(
  {
    account_strategy: v.optional(pick(ACCOUNT_STRATEGIES, "account_strategy"), "scored"),
    token_savers: section(
      strictObj({ compress_tool_results: v.optional(bool("compress_tool_results"), true) }, "token_savers"),
      {},
    ),
    redaction: section(strictObj({ enabled: v.optional(bool("enabled"), false) }, "redaction"), {}),
    /** Models (`provider/model`) that can read what the chosen model cannot (SPEC R-3). */
    capacity_adapter: section(
      strictObj(
        {
          images: capacityList("images"),
          pdf: capacityList("pdf"),
          audio: capacityList("audio"),
          video: capacityList("video"),
        },
        "capacity_adapter",
      ),
      {},
    ),
    max_attempts: v.optional(int("max_attempts", 1, MAX_ATTEMPTS_CAP), 8),
    /** Pre-commit deadline (SPEC 6.1), ms. */
    precommit_deadline_ms: v.optional(int("precommit_deadline_ms", 1), 60_000),
    /** Route traces kept (SPEC O-2). */
    trace_ring_size: v.optional(int("trace_ring_size", 1), 10_000),
    /** Days of usage rows (calls, usage, cost) kept; absent: every row is kept (src/store/usage-retention.ts). */
    usage_retention_days: v.optional(int("usage_retention_days", 1, 36_500)),
    /** SPEC 9.7: webhook (secret-capable URL) and the shares of a window or budget that raise `quota_threshold`. */
    alerts: section(
      strictObj(
        {
          webhook: v.optional(secret("webhook")),
          quota_thresholds: v.optional(
            v.array(
              v.pipe(
                v.number((i) => `each quota threshold must be a number; got ${shown(i.input)}`),
                v.gtValue(0, (i) => `a quota threshold is a share in (0, 1]; got ${i.input}`),
                v.maxValue(1, (i) => `a quota threshold is a share in (0, 1]; got ${i.input}`),
              ),
              (i) => `quota_thresholds must be a list; got ${describeKind(i.input)}`,
            ),
            [0.8, 0.95],
          ),
        },
        "alerts",
      ),
      {},
    ),
    /** SPEC 9.5: price overrides by `provider/model` (or a bare model id), USD per million tokens. */
    pricing: section(
      v.pipe(
        mappingGuard(PRICES, (i) => `pricing must be a mapping of provider/model → prices; got ${describeKind(i.input)}`),
        PRICES,
      ),
      {},
    ),
    /** The flight recorder (SPEC O-6): off by default; bodies of the last `max_requests` requests. */
    flight_recorder: section(
      strictObj(
        {
          enabled: v.optional(bool("enabled"), false),
          max_requests: v.optional(int("max_requests", 1, 100_000), 200),
          max_body_bytes: v.optional(int("max_body_bytes", 1, 64 * 1024 * 1024), 1024 * 1024),
        },
        "flight_recorder",
      ),
      {},
    ),
  },
  "the settings section",
);

const list = <S extends v.GenericSchema>(schema: S, what: string) =>
  v.nullish(v.array(schema, (i) => `${what} must be a list; got ${describeKind(i.input)}`), []);

/** The whole file (SPEC 2.3). Every section is optional; an empty file is valid. */
export const ConfigFileSchema = strictObj(
  {
    server: section(ServerSchema, {}),
    providers: list(ProviderSchema, "providers"),
    accounts: list(AccountSchema, "accounts"),
    combos: list(ComboSchema, "combos"),
    keys: list(KeySchema, "keys"),
    aliases: section(AliasesSchema, {}),
    settings: section(SettingsSchema, {}),
  },
  "the configuration file (a mapping)",
);

/** The file as parsed and defaulted by {@link ConfigFileSchema} (snake_case, secrets unresolved). */
export type ConfigFile = v.InferOutput<typeof ConfigFileSchema>;
/** A raw provider entry. */
export type ProviderEntry = v.InferOutput<typeof ProviderSchema>;
/** A raw account entry. */
export type AccountEntry = v.InferOutput<typeof AccountSchema>;
/** A raw combo entry. */
export type ComboEntry = v.InferOutput<typeof ComboSchema>;
/** A raw model entry. */
export type ModelEntry = v.InferOutput<typeof ModelSchema>;
/** A raw oauth block. */
export type OAuthEntry = v.InferOutput<typeof OAuthSchema>;

export * from "./predicate.ts";
