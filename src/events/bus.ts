/**
 * The in-process event bus for live state (SPEC 9.4 `GET /admin/api/events`, 9.7 alerts): the request
 * path publishes, the admin event stream, the dashboard and the alert webhook subscribe. Publishing
 * with no subscriber costs one length check, so the hot path pays nothing when nobody listens.
 * Subscribers run synchronously and must not throw or block (queue work of their own instead); a
 * subscriber that throws is logged and kept.
 */

/** A request left the gateway (after the stream ended, or the error reply was sent). */
export interface RequestFinishedEvent {
  type: "request_finished";
  /** Epoch ms. */
  at: number;
  /** Opaque route id (`sy_…`), resolvable through `GET /admin/api/route-traces/{id}`. */
  routeId: string;
  /** The request id (X-Request-Id). */
  requestId?: string;
  /** Requested model name as the client sent it. */
  model: string;
  /** `provider/model` that served it, when one did. */
  served?: string;
  provider?: string;
  account?: string;
  /** Client key name, when the request presented one. */
  key?: string;
  /** Outcome as recorded in usage (`ok`, `error`, `client_closed`, …). */
  outcome: string;
  status: number;
  /** Total latency, ms. */
  latencyMs: number;
  /** ms from arrival to the first byte sent to the client, when one was sent. */
  ttfbMs?: number;
  /** Upstream attempts made. */
  attempts?: number;
  /** Served by another target or account than the first choice (SPEC 2.4 X-Switchyard-Fallback). */
  fallback?: boolean;
  inputTokens?: number;
  outputTokens?: number;
  /** Cost in USD when priced (SPEC 9.5). */
  costUsd?: number;
}

/** An account's (or account+model's) routing state changed (SPEC 6.3, A-1). */
export interface AccountStateEvent {
  type: "account_state";
  at: number;
  account: string;
  /** The account's provider id. */
  provider?: string;
  /** The model the state applies to; absent when it is about the whole account. */
  model?: string;
  /**
   * `cooldown_start` | `cooldown_end` | `lock` | `unlock` | `quarantine` | `unquarantine` | `model_removed` | `model_restored` |
   * `circuit_open` | `circuit_half_open` | `circuit_closed` | `disabled` | `enabled`. Circuit changes are
   * provider-wide and published once per account of the provider.
   */
  change: string;
  /** Human-readable reason (the classification row). */
  reason?: string;
  /** Epoch ms when the state ends, when known. */
  until?: number;
  /** What an operator does about it (a `lock`: src/accounts/lock-advice.ts). */
  advice?: string;
}

/** An alert (SPEC 9.7), also POSTed to `settings.alerts.webhook`. */
export interface AlertEvent {
  type: "alert";
  /** `quota_threshold` (a key budget used up too: `detail.threshold` 1, `detail.exhausted` true; one step past several thresholds raises the highest, the others in `detail.passed`) | `account_quarantined` | `account_locked` | `circuit_open` | `circuit_closed`. */
  event: string;
  /** Epoch ms. */
  at: number;
  /** What it is about, e.g. `account:cc-main` or `key:ci`; never a secret. */
  subject: string;
  detail: Record<string, unknown>;
  /**
   * `quota_threshold` of an account quota window only: epoch ms when the period it was raised in ends
   * (the reset time read when the raising instance began the period, src/alerts/alerts.ts). Not POSTed
   * to the webhook; its claim across instances holds until then (src/alerts/alert-claim.ts).
   */
  periodEnd?: number;
  /**
   * `quota_threshold` of a key budget only, for a key created with the name of a revoked key:
   * `key:ID` with the key's id (`key:ci#1`, pipeline/key-id.ts), where `subject` shows its name. Not
   * POSTed to the webhook; its claim across instances is the new key's own (src/alerts/alert-claim.ts),
   * so a crossing of the revoked key's budget in the same window does not hold it back.
   */
  subjectId?: string;
}

/**
 * Client keys changed (SPEC 9.4 Keys page, 9.3 `POST|DELETE /admin/api/keys`): a key was created or
 * revoked through this instance's admin API (the CLI's `keys create|revoke`, another browser), or
 * another instance sharing the store announced a change of keys (`changed`, no name: re-read the list).
 * Never carries a secret.
 */
export interface KeysChangedEvent {
  type: "keys_changed";
  at: number;
  /** `created` | `revoked` (through this instance) | `changed` (announced by another instance). */
  change: "created" | "revoked" | "changed";
  /** The key's name, when known. */
  name?: string;
}

/** Names added, removed and changed in one section of the configuration (src/config/diff.ts). */
export interface NamesChanged {
  added: string[];
  removed: string[];
  changed: string[];
}

/**
 * The routing configuration in force changed (SPEC 9.4 Routing page, 9.3 combos/aliases/settings,
 * `POST /admin/api/config/reload`): combos, aliases, providers (their models) or settings, whoever
 * changed them — this instance's admin API (another browser, the CLI, a script), a re-read of the
 * config file (file change, SIGHUP, reload), or another instance sharing the store (its announcement
 * or the periodic re-read). Names only, never values, so never a secret.
 */
export interface RoutingChangedEvent {
  type: "routing_changed";
  at: number;
  /** `file` (the config file was re-read) | `stored` (objects stored through an admin API changed). */
  source: "file" | "stored";
  combos?: NamesChanged;
  aliases?: NamesChanged;
  /** Provider ids whose definition (base URL, models, …) changed. */
  providers?: NamesChanged;
  /** `settings` keys whose value changed, in the file's snake_case spelling. */
  settings?: string[];
}

/** A path in the config file and a sentence about it (a changed setting waiting for a restart, a warning, an error). */
export interface PathMessage {
  path: string;
  message: string;
}

/**
 * The config file was re-read (SPEC 2.3, 9.4 Routing page's Config file card): on a change of the file,
 * SIGHUP or `POST /admin/api/config/reload` (`switchyard reload`, the dashboard's button). What the
 * admin API's reload answers: the names that changed (never values), the changed settings that take
 * effect only at a restart with what holds until then, the file's warnings; or, when the file was
 * refused and the previous configuration stays, why (`error`, the issues as `path: message`).
 */
export interface ConfigReloadedEvent {
  type: "config_reloaded";
  at: number;
  /** The config file's path. */
  file: string;
  /** Names added, removed and changed per section, settings and server keys changed (src/config/diff.ts); empty when refused. */
  changed: { providers?: NamesChanged; accounts?: NamesChanged; combos?: NamesChanged; aliases?: NamesChanged; keys?: NamesChanged; settings?: string[]; server?: string[] };
  /** When nothing changed: the last re-read that changed something, when (ms since the epoch) and what (src/config/describe-changes.ts). */
  lastFileChange?: { at: number; changed: ConfigReloadedEvent["changed"] };
  restartNeeded: PathMessage[];
  warnings: PathMessage[];
  /** Why the file was refused ("providers[1].kind: …; …"); absent when it was put in force. */
  error?: string;
}

/** Every event the bus carries. */
export type GatewayEvent = RequestFinishedEvent | AccountStateEvent | AlertEvent | KeysChangedEvent | RoutingChangedEvent | ConfigReloadedEvent;

/** A typed publish/subscribe bus, one per running instance. */
export class EventBus {
  private listeners: Array<(event: GatewayEvent) => void> = [];
  /** Subscribers per event type (a subscriber of every type counts for each). */
  private readonly counts: Record<GatewayEvent["type"], number> = { request_finished: 0, account_state: 0, alert: 0, keys_changed: 0, routing_changed: 0, config_reloaded: 0 };

  /** Whether anybody listens to anything (lets a publisher skip building an event). */
  get active(): boolean {
    return this.listeners.length > 0;
  }

  /**
   * Whether anybody listens to events of `type`: the check before building one. The alert machinery
   * (src/alerts) always listens to `account_state` and `alert`, never to `request_finished`, so the
   * per-request event stays free while no event stream is open.
   */
  wants(type: GatewayEvent["type"]): boolean {
    return this.counts[type] > 0;
  }

  /** Delivers `event` to every subscriber, synchronously, in subscription order. */
  publish(event: GatewayEvent): void {
    const ls = this.listeners;
    if (ls.length === 0) return;
    for (let i = 0; i < ls.length; i++) {
      try {
        ls[i](event);
      } catch (error) {
        console.error(JSON.stringify({ level: "error", msg: "event subscriber failed", error: error instanceof Error ? error.message : String(error) }));
      }
    }
  }

  /**
   * Adds a subscriber, of every event type or only of `types` (it then receives only those); returns
   * the function that removes it.
   */
  subscribe(listener: (event: GatewayEvent) => void, types?: readonly GatewayEvent["type"][]): () => void {
    const only = types ? new Set(types) : undefined;
    const fn = only ? (e: GatewayEvent) => (only.has(e.type) ? listener(e) : undefined) : listener;
    const kinds = only ? [...only] : (Object.keys(this.counts) as GatewayEvent["type"][]);
    for (const k of kinds) this.counts[k]++;
    this.listeners = [...this.listeners, fn];
    let removed = false;
    return () => {
      if (removed) return;
      removed = true;
      for (const k of kinds) this.counts[k]--;
      this.listeners = this.listeners.filter((l) => l !== fn);
    };
  }
}
