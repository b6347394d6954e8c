/**
 * Assembles switchyard: configuration, store, account registry, executors, the pipeline and the HTTP
 * server; owns the lifecycle (config hot reload, periodic account re-read, graceful shutdown, the
 * instance file the CLI uses).
 */
import { KIND_TRAITS } from "../formats/codec.ts";
import { chmodSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { hostname } from "node:os";
import { createHash } from "node:crypto";
import {
  GraceEnd,
  authenticate,
  createGateway,
  errorResponse,
  isRemote,
  modelAllowed,
  presentedKey,
  TargetOrder,
  type Gateway,
  type RoutingTable,
} from "../pipeline/index.ts";
import type { Clock, KeyLimitCounters, KeyLimits } from "../pipeline/ports.ts";
import { AccountRegistry } from "./accounts/registry.ts";
import { suggest } from "./unknown-keys.ts";
import { AccountList } from "./accounts/account-list.ts";
import { CredentialManager, SubscriptionHealth } from "./accounts/credentials.ts";
import { Discovery } from "./providers/discovery.ts";
import { isSubscription } from "./oauth/protocol.ts";
import { adjustReasoningEffort, effortsFrom } from "./providers/capabilities.ts";
import { adminRefusal } from "./admin/admin-api.ts";
import { SessionBook } from "./admin/sessions.ts";
import { dashboardRoutes } from "./dashboard/routes.ts";
import { wireAdminApi } from "./admin/wire-admin-api.ts";
import { ConfigWriter } from "./admin/config-writer.ts";
import { type SharedConfigWatch, watchSharedConfig } from "./shared-config.ts";
import { EventBus } from "./events/bus.ts";
import { FlightRecorder } from "./admin/flight-recorder.ts";
import { defaultConfigPath, loadConfig } from "./config/load.ts";
import { startRemarks } from "./start-remarks.ts";
import type { RuntimeConfig } from "./config/types.ts";
import { geminiModelEntry, geminiModelList, modelList, modelEntry } from "./http/models.ts";
import { LiveConfig } from "./config/live.ts";
import { outOfForce } from "./config/compose.ts";
import type { ConfigChanges } from "./config/diff.ts";
import type { StartedWith } from "./config/restart-only.ts";
import { GatewayMetrics, metricsRoute } from "./http/metrics.ts";
import { createExecutors } from "./providers/index.ts";
import { createServer } from "./http/server.ts";
import { listenGateway } from "./http/listen-gateway.ts";
import type { BrowserPolicy } from "./http/browser-guard.ts";
import { BrowserRefusalLog } from "./http/browser-refusals.ts";
import type { IdleTimerServer } from "./http/keep-alive.ts";
import { responsesSocketMaxFrameBytes } from "./http/responses-socket.ts";
import { socketFrameLimit } from "./http/socket-frame-limit.ts";
import { decodeRequestBody } from "./http/request-encoding.ts";
import { openStore } from "./store/open.ts";
import { UsageRetention } from "./store/usage-retention.ts";
import { keyLimitCounters } from "./limits/key-counters.ts";
import { RequestAccounting } from "./limits/accounting.ts";
import { priceTableOnFirstUse } from "./pricing/prices.ts";
import { SharedKeyCounters } from "./limits/shared-counters.ts";
import { endAlertEpisode } from "./alerts/alert-claim.ts";
import type { Alerts } from "./alerts/alerts.ts";
import type { AlertWebhook } from "./alerts/webhook.ts";
import { startAlerts } from "./alerts/start-alerts.ts";
import type { Store } from "./store/types.ts";
import { buildSource, VERSION } from "./version.ts";
import { realClock } from "./clock.ts";
import { RestoredSecretMemory } from "./restored-secrets.ts";
import { AfterReply } from "./after-reply.ts";
import { servedByOf } from "./usage-record.ts";
import { trackRequests } from "./track-requests.ts";
import { listSecrets } from "./list-secrets.ts";
import { deriveGatewaySettings } from "./derive-gateway-settings.ts";
import { followConfigFile } from "./follow-config-file.ts";
import { stdoutLineBuffer } from "./log-lines.ts";
import { stopGateway, type StopProgress } from "./stop-gateway.ts";
import { claimDataDir, dataDirId, markStopping, newNonce, releaseDataDir, writtenBy } from "./instance-file.ts";
import type { KernelLock } from "./kernel-lock.ts";
import { clearExitStatus, leaveExitStatus as writeExitStatus } from "./exit-status.ts";
import { publishReloadRejected } from "./events/config-reloaded.ts";
import { followSharedChanges } from "./shared-changes.ts";
import { requestReporter } from "./request-report.ts";
import { configApplied } from "./config-applied.ts";
import { IdleTrim, idleTrimMsFromEnv } from "./memory/idle-trim.ts";
import { startTelemetryIfAsked } from "./telemetry/otel-env.ts";

/** Options of {@link startApp}. */
export interface AppOptions {
  /** Config file; default `$SWITCHYARD_HOME/config.yaml` when present, else the built-in default. */
  configPath?: string;
  host?: string;
  port?: number;
  /** Data directory (DB, instance.json); default `$SWITCHYARD_HOME` or `~/.switchyard`. */
  dataDir: string;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  /** Where the one-JSON-line-per-request log goes (SPEC O-4); default stdout. */
  log?: (line: string) => void;
  /** fetch used for upstream calls (tests). */
  fetchImpl?: typeof fetch;
  /** Write instance.json (default true). */
  writeInstanceFile?: boolean;
  /** The data directory's lock (src/kernel-lock.ts; tests: one that fails); null: the lock file created exclusively. */
  kernelLock?: KernelLock | null;
  /** Codex's Responses WebSocket: idle time before a socket is closed, ms (SPEC 2.5; default 10 min). */
  responsesSocketIdleMs?: number; /** Called each time a Responses WebSocket reply waits for its client to read (src/http/responses-socket.ts; tests). */ onResponsesSocketHeldBack?: () => void;
  /** `postgres://…` URL of the shared store (SPEC D-2); wins over `server.database`. Default: SQLite in the data directory. */
  database?: string;
  /**
   * Quiet time before memory is given back (src/memory/idle-trim.ts), ms; default `SWITCHYARD_IDLE_TRIM_MS`
   * from the environment, else IDLE_TRIM_MS (30 s).
   * 0 turns the trim off: for in-process benchmarks, whose pauses between phases must not drop the
   * JIT's compiled code in the middle of a measurement.
   */
  idleTrimMs?: number;
  /** How long a request waits for an account's concurrency slot (SPEC A-4), ms; default 15 s (SLOT_WAIT_MS; tests shorten it). */
  slotWaitMs?: number;
}

/** A running instance. */
export interface App {
  url: string;
  port: number;
  config: () => RuntimeConfig;
  store: Store;
  registry: AccountRegistry;
  /** OAuth refresh and quarantine of subscription accounts (SPEC A-5, P-7). */
  credentials: CredentialManager;
  /** Model discovery of subscription pools (SPEC P-6, P-8). */
  discovery: Discovery;
  /** The order stage (SPEC R-3) with its strategy state; also used by the dry run. */
  order: TargetOrder;
  gateway: Gateway;
  adminToken: string;
  /** Requests currently in flight (streams included). */
  inflight: () => number;
  /** Prometheus metrics served at GET /metrics (SPEC O-3). */
  metrics: GatewayMetrics;
  /** Live events (SPEC 9.4, 9.7): request finished, account state, alerts; served at GET /admin/api/events. */
  bus: EventBus;
  /** SPEC 9.6 client key limit counters (budget use for the admin API). */
  keyCounters: KeyLimitCounters;
  /** SPEC 9.7 alerts: budget crossings as requests settle, account quota windows compared every 5 s (`scanQuotas`). */
  alerts: Alerts;
  /** SPEC 9.7 alert webhook delivery (counts delivered and dropped alerts). */
  webhook: AlertWebhook;
  /** The flight recorder (SPEC O-6), served at GET /admin/api/calls/{id}/recording. */
  recorder: FlightRecorder;
  /**
   * Runs now what finished requests still have queued to report (usage row, trace, metrics, log line;
   * src/after-reply.ts), which otherwise runs right after their replies were handed over. The store and
   * GET /metrics do this themselves before they read; an in-process reader of the log lines calls it.
   */
  settle(): void;
  /**
   * SPEC D-3: stop accepting, let streams finish within the grace period, flush, close. A call while a
   * stop runs (a second signal) ends the grace period now. At its end open streams end with their
   * format's in-band error and a request still waiting on its upstream gets a 503 in its format, the rest
   * goes on (flush, close, instance.json removed); it resolves when the stop is done.
   */
  shutdown(graceMs?: number): Promise<boolean>; // false: writes were lost while the database was away (logged)
  /**
   * Writes the log lines gathered so far (stdout) and resolves once stdout took them: src/main.ts awaits
   * it before its `switchyard listening` line on stderr, so the start's own lines (a store upgrade's
   * warning) come before it in a log that joins both (`2>&1`, journald). Resolves at once with `opts.log`.
   */
  flushLog(): Promise<void>;
  /** What the stop has done so far (its lifecycle lines, src/main.ts); undefined until `shutdown` is called. */
  stopProgress(): StopProgress | undefined;
  /**
   * Leaves the process's exit status in the data directory's last-exit.json for `switchyard stop`
   * (src/exit-status.ts): `exitCode`, and for a failure `why` (one sentence). Called just before the
   * process exits (src/main.ts); nothing when the app writes no instance.json (`writeInstanceFile: false`).
   */
  leaveExitStatus(exitCode: number, why?: string): void;
}

/**
 * How often accounts and their state are re-read from the store (SPEC A-1), ms. The environment
 * variable `SWITCHYARD_REREAD_MS` overrides it (a positive integer; tests lengthen it so that only an
 * announcement can carry another instance's change).
 */
export const ACCOUNT_REREAD_MS = 10_000;

/**
 * How long a least-used request waits for the lifetime counts' read (pipeline/order.ts
 * `TargetOrder.seedWait`), ms; past it the request is ordered by this process's counts alone.
 */
export const LEAST_USED_SEED_WAIT_MS = 1000;

/** Starts the gateway. Throws ConfigError for an invalid config file; a start that fails gives back the data directory it claimed. */
export async function startApp(opts: AppOptions): Promise<App> {
  const claim = { held: false };
  try {
    return await startClaimed(opts, claim);
  } catch (e) {
    if (claim.held) releaseDataDir(opts.dataDir);
    throw e;
  }
}

async function startClaimed(opts: AppOptions, claim: { held: boolean }): Promise<App> {
  const env = opts.env ?? process.env;
  const clock = opts.clock ?? realClock;
  const stdoutLog = opts.log ? undefined : stdoutLineBuffer();
  const log = opts.log ?? ((line: string) => stdoutLog!.push(line));
  // Per-request bookkeeping that the reply does not depend on runs after the reply is handed over (issue 17).
  const afterReply = new AfterReply((err) => console.error(JSON.stringify({ level: "error", msg: "request bookkeeping failed", error: err instanceof Error ? err.message : String(err) })));
  const settle = () => afterReply.settle();
  let cfg = loadConfig({ path: opts.configPath, env, databaseFlag: opts.database !== undefined });
  let startedWith: StartedWith | undefined; // what a reload cannot change (config/restart-only.ts), set once the address is known
  const startConfig = cfg;

  try {
    mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  } catch (e) {
    // "EEXIST: file already exists, mkdir '…'" did not say that the data directory named a file.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST" || code === "ENOTDIR") throw new Error(`the data directory ${opts.dataDir} is a file, or lies under one: name a directory with --data-dir DIR (it is made when missing)`);
    throw e;
  }
  if (opts.writeInstanceFile !== false) {
    const c = claimDataDir(opts.dataDir, opts.kernelLock); // before anything else: of two starts at once one gets it
    claim.held = c.claimed;
    if (c.claimed) clearExitStatus(opts.dataDir); // the previous instance's exit status is not this one's
    for (const msg of c.warnings) log(JSON.stringify({ level: "warn", time: clock.now(), msg }));
  }
  // This process's id: its usage rows and traces, its OpenTelemetry spans' service.instance.id, the shared store's leases.
  const instanceId = crypto.randomUUID();
  let instanceName = ""; // host:port, once listening (server.instance_name wins)
  const store = await openStore(opts.database ?? cfg.server.database, opts.dataDir, cfg.settings.traceRingSize, log, clock, settle, env.SWITCHYARD_RESYNC_MS, instanceId);
  store.setConfigKeys(cfg.keys);
  // SPEC 2.3/9.3: combos, aliases and settings created through the admin API join the file's; the
  // running configuration is swapped in one assignment (file change, SIGHUP, reload, admin change).
  let afterApply: ((next: RuntimeConfig, prev: RuntimeConfig, changes: ConfigChanges, why: "file" | "stored") => void) | undefined;
  // newuser12a G24: instances on one shared store whose files differ in what they share (set once listening).
  let sharedConfig: SharedConfigWatch | undefined;
  const live = new LiveConfig({
    path: cfg.source.path,
    env,
    databaseFlag: opts.database !== undefined,
    store,
    now: () => clock.now(),
    initial: cfg,
    applied: (next, prev, changes, why) => {
      cfg = next;
      store.setConfigKeys(cfg.keys);
      // the file's or a stored trace_ring_size (the store opened with the file's, before any was read)
      store.setTraceRingSize(cfg.settings.traceRingSize);
      afterApply?.(next, prev, changes, why);
    },
    rejected: (error) => publishReloadRejected(bus, clock.now(), cfg.source.path, error),
  });
  await live.init();

  const bus = new EventBus();
  const telemetry = await startTelemetryIfAsked(env, VERSION, log, instanceId); // SPEC O-5: without an OTLP endpoint the SDK is never loaded
  // SPEC O-6: off by default; read per request so a settings change applies to the next one.
  const recorder = new FlightRecorder(() => cfg.settings.flightRecorder, () => secrets());
  const registry = new AccountRegistry(store, clock, {
    strategy: () => cfg.settings.accountStrategy,
    slotWaitMs: opts.slotWaitMs,
    bus,
    // alerts are claimed across instances only on a shared store (the webhook's `claim` below)
    episodeEnded: store.shared ? (id) => endAlertEpisode(store, id, ["account_locked", "account_quarantined"]) : undefined,
    // a lock, cooldown, removal or circuit write the shared database rejected: one error line each
    log,
  });
  // The registry's accounts: the configuration's in force with it, the store's as last read (re-read on refresh).
  const accountList = new AccountList(store, registry, () => cfg);
  const refreshAccounts = () => accountList.refresh();
  await refreshAccounts();

  // Subscription accounts (SPEC A-5, P-5…P-8): OAuth refresh/quarantine, quota windows, discovery.
  const credentials = new CredentialManager({
    store,
    clock,
    oauthOf: (providerId) => {
      const p = cfg.providers.get(providerId);
      return p && isSubscription(p.kind) && p.oauth ? { kind: p.kind, settings: p.oauth } : undefined;
    },
    reload: refreshAccounts,
    fetchImpl: opts.fetchImpl,
    log,
    onLostWrite: () => registry.countLostStateWrite(),
  });
  credentials.loadOverrides(await store.listCredentialOverrides());
  // SPEC D-2: another instance changed shared state (announced within about a second): re-read it.
  const stopChanges = followSharedChanges({ store, bus, clock, live, registry, credentials, refreshAccounts });
  const health = new SubscriptionHealth(registry, credentials, clock);
  const discovery = new Discovery({
    store,
    accounts: () => registry.list(),
    providers: () => cfg.providers,
    healthy: (a) => {
      const snap = registry.snapshot();
      return !a.disabled && snap.quarantined(a) === undefined && !snap.locks.some((l) => l.accountId === a.id);
    },
    credentials,
    reload: refreshAccounts,
    fetchImpl: opts.fetchImpl,
    clock,
    log,
  });
  const efforts = effortsFrom((providerId, model) => discovery.efforts(providerId, model));

  // Every secret this instance holds, kept out of logs, traces and recordings (src/list-secrets.ts).
  const secrets = listSecrets({ registry, credentials, keys: () => cfg.keys, adminToken: () => adminToken });

  // Made once per configuration (replaced whole on every change), not per read (docs/performance.md item 258).
  let routingMade: { of: RuntimeConfig; table: RoutingTable } | undefined;
  const routing = (): RoutingTable => (routingMade?.of === cfg ? routingMade : (routingMade = { of: cfg, table: { providers: cfg.providers, aliases: cfg.aliases, combos: cfg.combos as never, accounts: registry, suggest, outOfForce: outOfForce(cfg) } })).table;
  const order = new TargetOrder({
    routing,
    capacityAdapter: () => cfg.settings.capacityAdapter,
    quota: (t) => registry.modelQuota(t.provider.id, t.model, t.accountId),
    // least-used starts from the lifetime requests per model already recorded (SPEC 5.1), of its targets'
    // provider/model pairs only (not every name a client had served), read at start for the configured
    // least-used combos (a pair first ordered later, after a reload, at its first request) and not awaited there:
    // it sums the whole usage table (2.3 s of a 3-million-row PostgreSQL table kept a restart from
    // listening, newuser15 N9); the embedded store reads it in slices with the event loop free between
    // them. A least-used request waits for it, at most LEAST_USED_SEED_WAIT_MS (then it is ordered by this
    // process's counts, as every request was before the read arrived until session 42).
    loadSeed: (pairs) => {
      const read = Promise.resolve()
        .then(() => store.servedPerModel(pairs))
        .then(
          (byModel) => order.seedUsage(byModel),
          () => {
            // counts start at zero
          },
        );
      let bound: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((done) => (bound = setTimeout(done, LEAST_USED_SEED_WAIT_MS)));
      bound?.unref?.();
      return Promise.race([read, waited]).finally(() => clearTimeout(bound));
    },
  });
  if ([...cfg.combos.values()].some((c) => c.strategy === "least-used")) order.askSeed();
  const inflight = new Set<string>();
  /** Bun's server once it listens (the idle timer of a finished request's connection). */
  let bunServer: IdleTimerServer | undefined;
  /** Streamed replies still open (pipeline/commit.ts): ended with an in-band error when a shutdown's grace period is over. */
  const openStreams = new Set<() => void>();
  /** Aborted when shutdown begins: the admin API's event streams end on it (they are not requests in flight). */
  const stopping = new AbortController();
  /** Aborted when a shutdown's grace period is over: requests still waiting on their upstream get a 503 (pipeline AttemptDeps.graceOver). */
  const graceOver = new GraceEnd();
  // Memory back to the system once traffic stops (issue 17): a full GC and a shrink per idle period.
  const idleTrimMs = opts.idleTrimMs ?? idleTrimMsFromEnv(env);
  const idleTrim = idleTrimMs === 0 ? undefined : new IdleTrim({ idleMs: idleTrimMs, inflight: () => inflight.size, now: () => clock.now() });
  const metrics = new GatewayMetrics({
    accounts: () => registry.snapshot(),
    circuit: (id) => registry.circuitState(id),
    // with the account state writes lost (rejected by a shared database or refused by it once closed, or past the embedded store's cap on refused ones)
    store: () => {
      const s = store.stats();
      const lost = registry.lostStateWrites;
      return lost ? { ...s, dropped: s.dropped + lost } : s;
    },
    inflight: () => inflight.size,
    settle,
    // read at scrape time only (the webhook is made below)
    alertDeliveries: () => webhook.deliveryCounts(),
  });

  // SPEC 9.5/9.6, D-2: client key limits, in memory (embedded store, budget windows kept there) or across instances.
  const { counters: keyCounters, budgetWindows } = await keyLimitCounters(store, clock, log);
  // SPEC 9.7: alerts on the bus, and their webhook (a bounded queue drained off the request path).
  const { alerts, recentAlerts, webhook, budgetChanges, close: closeAlerts } = startAlerts({ bus, store, clock, registry, keyCounters, config: () => cfg, secrets, fetchImpl: opts.fetchImpl, log });
  const accounting = new RequestAccounting({
    pricing: () => cfg.settings.pricing,
    priceTable: priceTableOnFirstUse(),
    counters: keyCounters,
    onBudgetChange: (key, changes, now) => budgetChanges.settled(key, changes, now), // judged against a budget changed meanwhile
    log,
  });

  /** The usage row, metrics, trace, span, live event and log line of a finished request (SPEC O-1..O-4, 9.4). */
  const report = requestReporter({ store, metrics, secrets: () => secrets(), telemetry, providerKind: (id) => cfg.providers.get(id)?.kind, bus, log });
  // The instance that serves (usage rows, traces): made once per configuration and listening address, not per request.
  const servedBy = servedByOf(() => cfg, () => instanceName, instanceId);
  // A request in flight from `started` to `finish`, its bookkeeping after the reply (src/track-requests.ts).
  const { started, finish } = trackRequests({ inflight, server: () => bunServer, config: () => cfg, clock, settle, afterReply, accounting, secrets, report, servedBy, idleTrim, recorder });

  // The guard's and the attempt loop's settings, made once per configuration (src/derive-gateway-settings.ts).
  const gatewaySettings = deriveGatewaySettings();

  const executorFor = createExecutors(opts.fetchImpl, credentials);
  const gateway = createGateway({
    clock,
    keys: store,
    limits: keyCounters,
    // SPEC 9.6: a request in flight holds at least what a token of its model is expected to cost against a USD budget.
    tokenPrice: (t) => accounting.expectedUsdPerToken(t.provider.id, t.provider.kind, t.model, t.provider.baseUrl),
    now: () => clock.now(),
    // SPEC G-4: bodies sent with Content-Encoding (Codex's zstd) are decoded within the body limit.
    decodeBody: decodeRequestBody,
    settings: () => gatewaySettings(cfg),
    routing,
    order,
    pool: registry,
    health,
    executorFor,
    adjust: (target, translated) => adjustReasoningEffort(target, translated, efforts),
    tokenSavers: () => cfg.settings.tokenSavers,
    redaction: () => cfg.settings.redaction,
    restoredSecrets: new RestoredSecretMemory(clock),
    secrets: () => secrets(),
    started,
    finish,
    openStreams,
    graceOver,
    // The commit's success and binding: after the reply, like `finish`'s work (docs/performance.md item 149).
    later: (task, a, b, c) => afterReply.add(task, a, b, c),
    // SPEC O-5: while spans are exported each attempt tells its provider which span called it.
    traceUpstream: telemetry !== undefined,
  });

  /** SPEC 2.1/9.6: the models a presented key may use (its allow-list), or undefined for every model. */
  const allowedModels = (request: Request, gemini = false): ((id: string) => boolean) | undefined => {
    const secret = presentedKey(request.headers, gemini ? request.url : undefined);
    const limits = secret ? store.lookup(secret)?.limits : undefined;
    return limits?.models ? (id) => modelAllowed(limits, id) : undefined;
  };

  const adminToken = "sy-admin-" + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  // Dashboard sign-ins (SPEC 9.4): cookie sessions the admin API accepts with their CSRF token, kept in
  // the store so every instance on a shared one accepts them.
  const sessions = new SessionBook(
    () => clock.now(),
    store,
    (msg) => log(JSON.stringify({ level: "warn", time: clock.now(), msg })),
  );
  const host = opts.host ?? cfg.server.host;
  const port = opts.port ?? cfg.server.port;
  let browserPolicy: { of: RuntimeConfig; policy: BrowserPolicy } | undefined;
  // A key's use now (GET /keys, usage by key, the dry run's limits check), usage not yet counted settled first.
  const keyUse = async (id: string, limits: KeyLimits) => (settle(), { budgets: await keyCounters.budgetUse(id, limits, clock.now()), inFlight: keyCounters.inFlight(id), minute: keyCounters.minuteUse(id, limits, clock.now()) });
  // One set of queues of configuration changes for the admin API and the config file's re-reads (src/admin/config-writer.ts).
  const configWriter = new ConfigWriter();
  // Its held-back counts are said on the 10 s timer below (BrowserRefusalLog.sweep), not only if a value is refused again.
  const refusals = new BrowserRefusalLog(metrics, log, () => clock.now());
  const app = createServer({
    gateway,
    models: (anthropic, request) => modelList(cfg, anthropic, discovery.publishedAll(), allowedModels(request)),
    model: (id, anthropic, request) => modelEntry(cfg, id, anthropic, discovery.publishedAll(), allowedModels(request)),
    // One policy object per configuration (replaced as a whole on a change), not one per request.
    browser: () => (browserPolicy?.of === cfg ? browserPolicy.policy : (browserPolicy = { of: cfg, policy: { bindHost: host, allowedHosts: cfg.server.allowedHosts, corsOrigins: cfg.server.corsOrigins } }).policy),
    // SPEC 2.6: each refusal counted (switchyard_browser_refusals_total) and logged, its lines bounded (src/http/browser-refusals.ts).
    onBrowserRefusal: refusals.note,
    responsesSocketIdleMs: () => opts.responsesSocketIdleMs ?? cfg.server.websocketIdleTimeoutMs, onResponsesSocketHeldBack: opts.onResponsesSocketHeldBack, stopping: stopping.signal,
    geminiModels: (request) => geminiModelList(cfg, discovery.publishedAll(), allowedModels(request, true)),
    bodyTimeoutMs: () => cfg.server.bodyTimeoutMs,
    geminiModel: (id, request) => geminiModelEntry(cfg, id, discovery.publishedAll(), allowedModels(request, true)),
    adminRefusal: (request, peer) => adminRefusal(request, peer, { keys: store, adminToken, requireApiKey: () => cfg.server.requireApiKey, sessions }),
    authorize: (request, peer, format) => {
      const gemini = format === "gemini";
      const decision = authenticate(
        isRemote(peer, request.headers),
        request.headers,
        store,
        { requireApiKey: cfg.server.requireApiKey, maxBodyBytes: cfg.server.maxBodyBytes },
        gemini ? request.url : undefined,
      );
      if (decision.ok) return undefined;
      return errorResponse(gemini ? "gemini" : request.headers.has("anthropic-version") ? "anthropic-messages" : "openai-chat", decision.error);
    },
    health: () => {
      let db = false;
      try {
        db = store.health() === true;
      } catch {
        db = false;
      }
      // A shared store that cannot be reached is degraded operation, not an outage (SPEC D-2): the
      // instance keeps serving from memory, so a load balancer should keep sending to it. An embedded
      // store whose writes fail (a full disk) answers reads and serves too, its rows waiting in memory:
      // the same, said as db "failing".
      const failing = db && store.writesFailing?.() === true;
      return { ok: db || store.shared === true, db: failing ? "failing" : db ? "ok" : "unreachable" };
    },
  }).use(
    wireAdminApi({ writer: configWriter, store, adminToken, config: () => cfg, keyUse, recorder, sessions, budgetChanges, recentAlerts, bus, clock, registry, credentials, discovery, refreshAccounts, order, routing, executorFor, secrets, instanceId, stopping: stopping.signal, live, startedWith: () => startedWith, sharedConfig: () => sharedConfig }),
  )
    .use(dashboardRoutes({ keys: store, adminToken, requireApiKey: () => cfg.server.requireApiKey, sessions, bodyTimeoutMs: () => cfg.server.bodyTimeoutMs }))
    .use(metricsRoute(metrics, { keys: store, adminToken }));

  // Follows max_body_bytes through reloads (src/http/socket-frame-limit.ts).
  const startFrameLimit = responsesSocketMaxFrameBytes(cfg.server.maxBodyBytes);
  await listenGateway(app, { host, port, keepAliveTimeoutMs: cfg.server.keepAliveTimeoutMs, frameLimit: startFrameLimit }); // src/http/listen-gateway.ts
  const server = app.server!;
  const frameLimit = socketFrameLimit(server, startFrameLimit);
  bunServer = server;
  instanceName = `${hostname()}:${server.port}`;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${server.port}`;
  startedWith = { config: startConfig, url, flags: { host: opts.host !== undefined, port: opts.port !== undefined, database: opts.database !== undefined } };

  // Things a user would otherwise only find out from failing requests (src/start-remarks.ts).
  const keylessProvider = [...cfg.providers.values()].some((p) => KIND_TRAITS[p.kind].thirdParty);
  for (const line of startRemarks({ accounts: registry.list().length, keylessProvider, configPath: cfg.source.path, defaultConfigPath: defaultConfigPath(env), now: clock.now() })) log(line);
  // Non-fatal config remarks (check-config prints the same): e.g. an alias that shadows a combo (R-2).
  const logConfigWarnings = (c: RuntimeConfig) => {
    for (const w of c.warnings) log(JSON.stringify({ level: "warn", time: clock.now(), msg: "config warning", path: w.path, warning: w.message }));
  };
  logConfigWarnings(cfg);

  const instanceFile = join(opts.dataDir, "instance.json");
  const nonce = newNonce(); // this start's: its stop removes instance.json only while it is the one it wrote
  if (opts.writeInstanceFile !== false) {
    // `ephemeralPort`: started on port 0, so the URL's port is this start's alone (setup says so)
    writeFileSync(instanceFile, JSON.stringify({ url, pid: process.pid, adminToken, version: VERSION, commit: buildSource().commit ?? "unknown", startedAt: clock.now(), nonce, ...(port === 0 ? { ephemeralPort: true } : {}) }, null, 2), { mode: 0o600 });
    chmodSync(instanceFile, 0o600);
  }

  // The file's edits and SIGHUP re-read it (src/follow-config-file.ts).
  // Its re-reads (an edit, SIGHUP) wait in the admin API's change queues, as POST /config/reload does (src/admin/config-writer.ts).
  const watcher = cfg.source.path ? followConfigFile(cfg.source.path, { config: () => cfg, live, bus, clock, log, env, writer: configWriter }) : undefined;
  // Without a file nothing else listens for SIGHUP, and its default action ended the process without a
  // word (try19 D1): say why nothing is reloaded, as `switchyard reload` does, and keep running.
  const hupWithoutFile = () => log(JSON.stringify({ level: "warn", time: clock.now(), msg: "SIGHUP: nothing reloaded", error: live.noFileToReload() }));
  const listenHup = !cfg.source.path;
  if (listenHup) process.on("SIGHUP", hupWithoutFile);
  // settings.usage_retention_days: usage rows older than that are deleted, in batches, every hour.
  const retention = new UsageRetention({ store, days: () => cfg.settings.usageRetentionDays, now: () => clock.now(), log, everyMs: Number(env.SWITCHYARD_RETENTION_MS) >= 1 ? Number(env.SWITCHYARD_RETENTION_MS) : undefined });
  retention.ensure();
  // Every new configuration (file change, SIGHUP, POST /admin/api/config/reload, a change through the
  // admin API) reaches the accounts at once.
  const applied = configApplied({ accountList, refreshAccounts, startedWith: () => startedWith, live, bus, clock, log, logConfigWarnings, frameLimit });
  afterApply = (next, prev, changes, why) => {
    applied(next, prev, changes, why);
    retention.ensure(); // settings.usage_retention_days set by this change
    if (next.keys !== prev.keys) void budgetChanges.configKeysChanged(prev.keys, store.activeKeys()); // a file key's lowered budget
    if (why === "file") void sharedConfig?.check("reload");
  };
  // One live instance per data directory (claimDataDir): its host, path and random id (two containers'
  // own /data volumes share host name and path, review15 R6) name the slot whose previous row (an instance
  // killed without a clean stop) this one replaces; hashed, no path in the database. Only a shared store has rows.
  const origin = opts.writeInstanceFile !== false && store.shared ? createHash("sha256").update(`${hostname()}\u0000${resolve(opts.dataDir)}\u0000${dataDirId(opts.dataDir)}`).digest("hex").slice(0, 32) : undefined;
  sharedConfig = watchSharedConfig(store, () => cfg, url, log, () => clock.now(), Number(env.SWITCHYARD_SHARED_CONFIG_MS) >= 1 ? Math.floor(Number(env.SWITCHYARD_SHARED_CONFIG_MS)) : undefined, origin);
  void sharedConfig?.check("start");
  // SPEC A-1: accounts and their state every 10 s, and the objects other instances stored through their
  // admin API; a failure of the one never skips the other. And the browser refusals held back whose
  // minute ended (src/http/browser-refusals.ts).
  const reread = setInterval(
    () => {
      refusals.sweep();
      void live
        .refreshStored()
        .catch(() => {})
        .then(() => refreshAccounts())
        .catch(() => {});
    },
    Number(env.SWITCHYARD_REREAD_MS) >= 1 ? Math.floor(Number(env.SWITCHYARD_REREAD_MS)) : ACCOUNT_REREAD_MS,
  );
  reread.unref?.();
  // SPEC P-6: discover the subscription pools' models at start (in the background: start never waits on a provider).
  void discovery.run().catch(() => {});

  let stopped: Promise<boolean> | undefined;
  let graceCut = false;
  let progress: StopProgress | undefined;
  return {
    url,
    port: server.port!,
    config: () => cfg,
    store,
    registry,
    credentials,
    discovery,
    order,
    gateway,
    adminToken,
    inflight: () => inflight.size,
    metrics,
    bus,
    keyCounters,
    alerts,
    webhook,
    recorder,
    settle,
    shutdown(graceMs = cfg.server.shutdownGraceMs) {
      if (stopped) graceCut = true;
      return (stopped ??= stop(graceMs));
    },
    stopProgress: () => progress,
    flushLog: () =>
      new Promise<void>((done) => {
        if (!stdoutLog) return done();
        stdoutLog.flush();
        process.stdout.write("", () => done()); // after the bytes flush handed over
      }),
    leaveExitStatus(exitCode, why) {
      if (opts.writeInstanceFile !== false) writeExitStatus(opts.dataDir, { pid: process.pid, nonce, exitCode, time: Date.now(), ...(why ? { why } : {}) });
    },
  };

  function stop(graceMs: number): Promise<boolean> {
    const halt = () => {
      stopping.abort(); // open event streams end now: they are not requests in flight
      clearInterval(reread);
      sharedConfig?.stop();
      idleTrim?.stop();
      stopChanges();
      budgetWindows?.stop();
      registry.close();
      closeAlerts(); // raising, listing and logging alerts (the webhook delivers until after the last requests)
      watcher?.();
      if (listenHup) process.off("SIGHUP", hupWithoutFile);
    };
    const removeInstanceFile = () => {
      if (opts.writeInstanceFile === false) return;
      if (writtenBy(instanceFile, nonce)) rmSync(instanceFile, { force: true }); // only its own: not another start's (also of the same pid)
      releaseDataDir(opts.dataDir);
    };
    // `switchyard stop` waits for it, no second SIGTERM; a file it cannot write (a full disk) is said
    const unmarked = opts.writeInstanceFile !== false ? markStopping(instanceFile, nonce, Date.now()) : undefined;
    if (unmarked) log(JSON.stringify({ level: "warn", time: Date.now(), msg: unmarked, path: instanceFile }));
    progress = { startedAt: Date.now(), inflightAtStart: inflight.size, open: () => ({ requests: inflight.size, streams: openStreams.size }) };
    return stopGateway({ halt, lastLines: () => refusals.flush(), server, inflight, openStreams, graceOver, settle, webhook, budgetWindows, keyCounters, retention, store, retryStateWrites: async (until) => (await registry.stateWritesSettled(until), registry.retryWrites()), unwrittenStateWrites: () => registry.unwrittenStateWrites(), log, telemetry, stdoutLog, removeInstanceFile }, graceMs, () => graceCut, progress);
  }
}
