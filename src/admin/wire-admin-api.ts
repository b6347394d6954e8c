/**
 * The admin API's routes as one instance serves them (SPEC 9.3–9.7): keys and usage (admin-api.ts)
 * extended by the subscription accounts' routes, routing and the dry run, the control routes (accounts,
 * providers, calls, events) and the stored configuration objects, each given what it needs of the
 * running instance. The assembly of src/app.ts's `startApp`, without any state of its own.
 */
import type { ExecutorFor, RoutingTable, TargetOrder } from "../../pipeline/index.ts";
import type { Clock } from "../../pipeline/ports.ts";
import type { AccountRegistry } from "../accounts/registry.ts";
import type { CredentialManager } from "../accounts/credentials.ts";
import type { StartedAlerts } from "../alerts/start-alerts.ts";
import type { LiveConfig } from "../config/live.ts";
import { restartNeeded, type StartedWith } from "../config/restart-only.ts";
import type { RuntimeConfig } from "../config/types.ts";
import type { EventBus } from "../events/bus.ts";
import { isSubscription } from "../oauth/protocol.ts";
import type { Discovery } from "../providers/discovery.ts";
import { differenceText, type SharedConfigWatch } from "../shared-config.ts";
import type { Store } from "../store/types.ts";
import { adminAllowed, adminApi, type AdminDeps } from "./admin-api.ts";
import { configRoutes } from "./config-routes.ts";
import { ConfigWriter } from "./config-writer.ts";
import { controlRoutes } from "./control-routes.ts";
import type { FlightRecorder } from "./flight-recorder.ts";
import { routingAdmin } from "./routing-api.ts";
import type { SessionBook } from "./sessions.ts";
import { subscriptionAdmin } from "./subscription-routes.ts";

/** What the admin API needs of the running instance (src/app.ts). */
export interface AdminWiring {
  store: Store;
  adminToken: string;
  /** The running configuration, read per request (it is replaced as a whole on every change). */
  config: () => RuntimeConfig;
  /** A key's use now (GET /keys, usage by key, the dry run's limits check). */
  keyUse: NonNullable<AdminDeps["keyUse"]>;
  recorder: FlightRecorder;
  sessions: SessionBook;
  /** The alerts of a lowered key budget and the recent alerts (src/alerts/start-alerts.ts). */
  budgetChanges: StartedAlerts["budgetChanges"];
  recentAlerts: StartedAlerts["recentAlerts"];
  bus: EventBus;
  clock: Clock;
  registry: AccountRegistry;
  credentials: CredentialManager;
  discovery: Discovery;
  /** Re-reads the accounts from the configuration and the store. */
  refreshAccounts: () => Promise<void>;
  order: TargetOrder;
  routing: () => RoutingTable;
  executorFor: ExecutorFor;
  /** Every secret the instance holds (src/list-secrets.ts): kept out of what the admin API shows. */
  secrets: () => string[];
  /** This process's id (usage rows, traces, the shared store's leases). */
  instanceId: string;
  /** Aborted when shutdown begins: the event streams end on it. */
  stopping: AbortSignal;
  live: LiveConfig;
  /** What the instance started with, once it listens (what a reload cannot change). */
  startedWith: () => StartedWith | undefined;
  /** The check of the shared store's other instances' files, once listening (src/shared-config.ts). */
  sharedConfig: () => SharedConfigWatch | undefined;
  /**
   * The instance's queues of configuration changes (config-writer.ts), shared with the config file's
   * watcher and SIGHUP (src/follow-config-file.ts) so that their re-reads wait for a change's check and
   * write as `POST /config/reload` does; a writer of its own when not given.
   */
  writer?: ConfigWriter;
}

/** The admin API (an Elysia plugin under /admin/api) with every route group of the instance. */
export function wireAdminApi(w: AdminWiring) {
  const { store, adminToken, config, keyUse, recorder, sessions, budgetChanges, recentAlerts, bus, clock, registry, credentials, discovery, refreshAccounts, order, routing, executorFor, secrets, instanceId, stopping, live, startedWith, sharedConfig } = w;
  // server.body_timeout_ms bounds every body the admin API reads, as it bounds the client API's (src/admin/replies.ts readJson).
  const bodyTimeoutMs = () => config().server.bodyTimeoutMs;
  // One queue per kind of configuration change (client keys; combos, aliases and settings; accounts): each checks what the ones of its kind before it wrote (config-writer.ts).
  const writer = w.writer ?? new ConfigWriter();
  return adminApi({
    writer,
    store,
    keys: store,
    bodyTimeoutMs,
    adminToken,
    requireApiKey: () => config().server.requireApiKey,
    keyUse,
    recorded: (requestId) => recorder.has(requestId),
    providerIds: () => config().providers.keys(),
    subscriptionProviderIds: () => [...config().providers.values()].filter((p) => isSubscription(p.kind)).map((p) => p.id),
    sessions,
    keyLimitsChanged: (id, before, after) => budgetChanges.changed(id, before, after), // a lowered budget's alerts
    keysChanged: (change, name) => {
      if (bus.wants("keys_changed")) bus.publish({ type: "keys_changed", at: clock.now(), change, name });
    },
    extend: (admin) =>
      subscriptionAdmin({
        store,
        providers: () => config().providers,
        configAccountIds: () => new Set(config().accounts.map((a) => a.id)),
        registry,
        credentials,
        discovery,
        reload: refreshAccounts,
        clock,
        bodyTimeoutMs,
        writer,
      })(
        routingAdmin({ registry, order, routing, strategy: () => config().settings.accountStrategy, store, logins: (a) => credentials.loginFacts(a), requireApiKey: () => config().server.requireApiKey, keyUse, now: () => clock.now(), maxAttempts: () => config().settings.maxAttempts, precommitDeadlineMs: () => config().settings.precommitDeadlineMs, bodyTimeoutMs })(
          controlRoutes({
            bus,
            registry,
            config,
            discovery,
            executorFor,
            clock,
            secrets,
            recorder,
            store,
            instanceId,
            recentAlerts: () => recentAlerts.list(),
            stopping,
            bodyTimeoutMs,
            // An open event stream re-checks its reader: a sign-out on another instance is read in the background.
            allowed: (request, peer) => {
              sessions.syncSoon(request);
              return adminAllowed(request, peer, { keys: store, adminToken, requireApiKey: () => config().server.requireApiKey, sessions });
            },
          })(
            configRoutes({
              writer,
              live,
              bodyTimeoutMs,
              store,
              registry,
              refreshAccounts,
              bus,
              clock,
              restartNeeded: (next) => {
                const started = startedWith();
                return started ? restartNeeded(next, started) : [];
              },
              sharedConfigWarnings: async () => ((await sharedConfig()?.check("reload")) ?? []).map((d) => ({ path: d.path, message: differenceText(d) })),
            })(admin),
          ),
        ),
      ),
  });
}
