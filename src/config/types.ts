/**
 * The runtime configuration the loader produces (camelCase, defaults applied, secrets resolved,
 * cross-references checked). Providers and accounts use the pipeline's own types (pipeline/ports.ts).
 */
import type { Account, KeyLimits, ProviderInfo } from "../../pipeline/ports.ts";
import type { ConfigIssue } from "./errors.ts";
import type { TargetWhen } from "./predicate.ts";
import type { StoredOrigin } from "./compose.ts";

/** `server:` with defaults (SPEC 2.1, G-1, G-4, D-2, D-3). */
export interface ServerConfig {
  /** Bind address. Default `127.0.0.1`. */
  host: string;
  /** TCP port. Default 20128. */
  port: number;
  /** G-1: require a client key even from loopback. Default false; REQUIRE_API_KEY=true (or 1/yes) forces true. */
  requireApiKey: boolean;
  /** G-4 request body limit, bytes. Default 32 MiB (33 554 432). */
  maxBodyBytes: number;
  /**
   * G-4: how long a request body may take to arrive once the guard reads it, ms. Default 120 000. A body
   * still incomplete then gets a 408 in the client's format and its connection is closed.
   */
  bodyTimeoutMs: number;
  /**
   * How long a connection may sit with no request in flight (between two keep-alive requests, or
   * before its first), ms; then the server closes it. Default 120 000; 0 keeps it until the client
   * closes it. Bun counts whole seconds (rounded up, at most 255) and checks every 4 s, so the close
   * comes up to ~4 s later. Never applies while a request is in flight (src/http/keep-alive.ts).
   */
  keepAliveTimeoutMs: number;
  /**
   * SPEC 2.5: how long a Responses WebSocket may sit with no frame in either direction (a reply in
   * flight keeps it open) before the gateway closes it (1000 "idle"), ms. Default 600 000 (10 min).
   * Read when a socket opens: a reload applies to sockets opened after it.
   */
  websocketIdleTimeoutMs: number;
  /** D-3 grace period for in-flight streams on SIGTERM, ms. Default 30 000. */
  shutdownGraceMs: number;
  /**
   * D-2: how this instance's usage rows and route traces name it (`calls`, the dashboard); undefined:
   * `host:port` (the machine's host name and the port it listens on). Applies from the next request.
   */
  instanceName?: string;
  /** D-2 shared-store URL (`postgres://…`), resolved from env:/file: when written so. A secret. */
  database?: string;
  /** G-6 (SPEC 2.6): extra `Host` names accepted besides `localhost`, IP literals and the bind host; lower-case, no port. */
  allowedHosts: string[];
  /** G-6 (SPEC 2.6): web origins (`scheme://host[:port]`, normalised) that get CORS headers and keep the loopback exemption on the client API (`/v1`, `/v1beta`; src/http/browser-guard.ts `clientSurface`), never on the admin API, `/metrics` or `/dashboard`. */
  corsOrigins: string[];
}

/** OAuth endpoints of a subscription provider (SPEC P-9). Defaults are the real ones (builtins.ts). */
export interface OAuthSettings {
  authorizeUrl: string;
  tokenUrl: string;
  clientId: string;
  scopes: string[];
  redirectUri: string;
}

/**
 * A provider as configured: {@link ProviderInfo} plus the OAuth endpoints of subscription kinds.
 * (`oauth` is not part of ProviderInfo in pipeline/ports.ts; see the report.)
 */
export interface ConfiguredProvider extends ProviderInfo {
  /** Present for `claude-code` and `codex` kinds only. */
  oauth?: OAuthSettings;
}

/** Combo strategies after normalisation (`priority` → `fallback`), SPEC 5.1. */
export type ComboStrategy = "fallback" | "round-robin" | "weighted" | "least-used";

/** Portability policy for opaque state crossing providers (SPEC F-8). */
export type Portability = "strip_with_warning" | "reject";

/** What a target's `model` refers to, as checked by the loader. */
export type TargetRef =
  | { type: "model"; providerId: string; model: string }
  | { type: "alias"; name: string }
  | { type: "combo"; name: string };

/** One combo target (SPEC 5.1). Structurally a `TargetSpec` of pipeline/resolve.ts. */
export interface ComboTarget {
  /** As written: `provider/model`, an alias or a combo name. */
  model: string;
  /** What `model` refers to (checked at load). */
  ref: TargetRef;
  /** A pinned account id; only on `provider/model` targets, and of that provider. */
  account?: string;
  /** Draw weight for `weighted`; default 1. */
  weight: number;
  /** Fields merged into the upstream request body. */
  params?: Record<string, unknown>;
  /** Predicate (SPEC 5.2). */
  when?: TargetWhen;
}

/** A combo (SPEC 5.1). Structurally a `ComboSpec` of pipeline/resolve.ts. */
export interface Combo {
  name: string;
  /** Default `fallback`. */
  strategy: ComboStrategy;
  /** Default `strip_with_warning`. */
  portability: Portability;
  /** Conversation affinity (SPEC A-2) for requests through this combo. Default true. */
  cacheAffinity: boolean;
  targets: ComboTarget[];
  source: "config" | "db";
}

/** A client key declared in the file (SPEC 2.3 `keys:`), secret resolved. Compatible with store's ConfigKey. */
export interface ConfigKey {
  name: string;
  /** The secret as clients present it. Hash it; never log it. */
  secret: string;
  /** Default []. `admin` allows /admin/api from remote callers. */
  scopes: string[];
  /** Routing fact `key_tag`. */
  tag?: string;
  /** SPEC 9.6 limits; absent = unlimited. */
  limits?: KeyLimits;
  source: "config";
}

/** `settings:` with defaults. */
export interface Settings {
  /** SPEC A-3. Default `scored`. */
  accountStrategy: "scored" | "p2c" | "random" | "round-robin";
  /** SPEC S-1: on by default. */
  tokenSavers: { compressToolResults: boolean };
  /** SPEC S-3: off by default. */
  redaction: { enabled: boolean };
  /** SPEC R-3: `provider/model` names that can read each kind of input, tried first when the target cannot. */
  capacityAdapter: { images: string[]; pdf: string[]; audio: string[]; video: string[] };
  /** SPEC 6.1: default 8, at most 20. */
  maxAttempts: number;
  /** SPEC 6.1 pre-commit deadline, ms. Default 60 000. */
  precommitDeadlineMs: number;
  /** SPEC O-2 route-trace ring size (entries). Default 10 000. */
  traceRingSize: number;
  /** Days of usage rows kept (older ones are deleted every hour, src/store/usage-retention.ts); absent: all kept. */
  usageRetentionDays?: number;
  /** SPEC 9.7: the webhook URL (secret resolved) and the shares that raise `quota_threshold` (default 0.8, 0.95), ascending; a key budget used up raises the share 1 whether or not it is listed (src/alerts/alerts.ts). */
  alerts: { webhook?: string; quotaThresholds: number[] };
  /** SPEC 9.5: price overrides by `provider/model` or bare model id, USD per million tokens. */
  pricing: Map<string, { input: number; output: number; cacheRead?: number; cacheWrite?: number }>;
  /** SPEC O-6 flight recorder: off by default; the last `maxRequests` (200) requests, `maxBodyBytes` (1 MiB) per body. */
  flightRecorder: { enabled: boolean; maxRequests: number; maxBodyBytes: number };
}

/** The loaded configuration. Immutable by convention: a reload builds a new one. */
export interface RuntimeConfig {
  server: ServerConfig;
  /** Built-ins merged with the file's providers, by id. */
  providers: Map<string, ConfiguredProvider>;
  /** In file order (plus `*-env` accounts when there is no file). */
  accounts: Account[];
  combos: Map<string, Combo>;
  /** Alias name → `provider/model`, combo or alias name, as written. */
  aliases: Map<string, string>;
  keys: ConfigKey[];
  settings: Settings;
  /** Non-fatal remarks (e.g. a weight on a non-weighted combo), same shape as errors. */
  warnings: ConfigIssue[];
  /**
   * Which combos, aliases and settings come from the database (admin API) rather than the file, and
   * the stored objects left out (src/config/compose.ts). Absent for a configuration loaded from the
   * file alone.
   */
  stored?: StoredOrigin;
  source: {
    /** Absolute path of the file; absent for the default (no-file) configuration. */
    path?: string;
    /** ms since the epoch. */
    loadedAt: number;
  };
}
