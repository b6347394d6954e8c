/**
 * The alerts of an instance (SPEC 9.7), made and wired together in one place (moved out of src/app.ts,
 * which was at the 700-line limit): the {@link Alerts} that raise them on the bus (key budgets as their
 * requests settle, account quota windows on a timer), the list `GET /admin/api/alerts` serves, their log
 * lines, the webhook that POSTs them, claiming each across instances on a shared store (SPEC D-2,
 * src/alerts/alert-claim.ts), and the alerts of a key budget an operator lowered, raised by every
 * instance of a shared store (src/alerts/budget-change-alerts.ts).
 */
import type { Clock, KeyLimitCounters } from "../../pipeline/ports.ts";
import type { AccountRegistry } from "../accounts/registry.ts";
import type { RuntimeConfig } from "../config/types.ts";
import type { AlertEvent, EventBus } from "../events/bus.ts";
import { SharedKeyCounters } from "../limits/shared-counters.ts";
import { SHARED_CONFIG_MAX_AGE_MS } from "../shared-config.ts";
import type { Store } from "../store/types.ts";
import { alertClaim, claimAlertsIn } from "./alert-claim.ts";
import { AlertLog } from "./alert-log.ts";
import { Alerts } from "./alerts.ts";
import { BudgetChangeAlerts } from "./budget-change-alerts.ts";
import { RecentAlerts } from "./recent-alerts.ts";
import { AlertWebhook } from "./webhook.ts";

/** What {@link startAlerts} needs: the instance's parts, and the configuration in force (read at each use). */
export interface StartAlertsDeps {
  bus: EventBus;
  store: Store;
  clock: Clock;
  registry: AccountRegistry;
  keyCounters: KeyLimitCounters;
  config: () => RuntimeConfig;
  /** Every secret the instance holds (scrubbed from alert payloads and log lines). */
  secrets: () => string[];
  fetchImpl?: typeof fetch;
  log: (line: string) => void;
}

/** The alert parts {@link startAlerts} made; `close` at a stop, the webhook's `close` after the last requests. */
export interface StartedAlerts {
  alerts: Alerts;
  recentAlerts: RecentAlerts;
  alertLog: AlertLog;
  webhook: AlertWebhook;
  /**
   * A key's budgets changed by an operator (admin API, config reload, and on a shared store another
   * instance's change as this one learns it): the alerts of a lowered budget; settled requests' budget
   * steps go through its `settled`.
   */
  budgetChanges: BudgetChangeAlerts;
  /** Stops raising and listing alerts (all but the webhook, closed after the last requests). */
  close(): void;
}

/** Makes and wires the instance's alerts; see the module comment. */
export function startAlerts(deps: StartAlertsDeps): StartedAlerts {
  const { bus, store, clock, registry, keyCounters, config, secrets, log } = deps;
  const alerts = new Alerts(bus, {
    thresholds: () => config().settings.alerts.quotaThresholds,
    quotaWindows: function* () {
      const now = clock.now();
      for (const a of registry.list()) yield* registry.quota.windows(a.id, now);
    },
    now: () => clock.now(),
  });
  // SPEC D-2: instances sharing a store deliver each alert once, and take over the alerts of an instance
  // that stopped before delivering them (src/alerts/alert-claim.ts: a lease, then the claim); a key
  // budget crossed by the other instances' use shows when their use is learned, not only on a request here.
  const claim = store.shared ? claimAlertsIn(store) : undefined;
  // on a shared store, the thresholds a changed budget was past under both amounts are claimed as delivered
  const claimPassed = store.shared
    ? async (e: AlertEvent) => {
        const c = alertClaim(e);
        await store.claimOnce(c.name, c.until); // no lease: a whole claim, as a delivered alert's
      }
    : undefined;
  const budgetChanges = new BudgetChangeAlerts({ counters: keyCounters, alerts, now: () => clock.now(), log, claimPassed });
  if (keyCounters instanceof SharedKeyCounters) keyCounters.onOthersBudgetChange = (key, changes, now) => budgetChanges.settled(key, changes, now);
  // A budget another instance lowered (its PATCH, `keys set`, Edit limits): raised here too as the key is
  // re-read (within about a second), so every instance lists the change's alerts and can deliver them.
  const unfollow = store.shared ? store.onKeyLimitsChanged?.((changed) => changed.forEach((c) => void budgetChanges.learned(c.id, c.before, c.after))) : undefined;
  const recentAlerts = new RecentAlerts(bus);
  const alertLog = new AlertLog(bus, log, () => secrets());
  // the other instances running: those that published their configuration lately (src/shared-config.ts)
  const othersRunning = claim && store.otherInstanceConfigs ? async () => (await store.otherInstanceConfigs!(SHARED_CONFIG_MAX_AGE_MS)).length : undefined;
  const webhook = new AlertWebhook(bus, { url: () => config().settings.alerts.webhook, secrets: () => secrets(), fetchImpl: deps.fetchImpl, log, claim, othersRunning });
  const close = () => {
    unfollow?.();
    budgetChanges.close();
    alerts.close();
    recentAlerts.close();
    alertLog.close();
  };
  return { alerts, recentAlerts, alertLog, webhook, budgetChanges, close };
}
