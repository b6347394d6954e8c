/**
 * One log line per alert this instance raises (SPEC 9.7, O-4): an account locked or quarantined, a
 * provider's circuit opened or closed, a quota or budget threshold crossed. Before, an alert reached
 * the webhook, the event stream and the dashboard but not the log, so an operator reading the log of
 * an instance that refused every request for a locked account found only the requests' own lines
 * (newuser12a's tryout, G7/G21).
 *
 * The line is JSON like every other: `{"level":"warn","time":…,"msg":"alert account_locked account:cc-main",
 * "event":…,"subject":…,"detail":{…}}`, its detail scrubbed of every known secret as the webhook's
 * payload is (src/alerts/webhook.ts). A threshold crossing and a circuit closing are `info`.
 */
import { scrubValue } from "../../pipeline/index.ts";
import type { AlertEvent, EventBus } from "../events/bus.ts";

/** Alerts that say something works again or is only approaching a limit: logged at `info`. */
const INFO_EVENTS = new Set(["circuit_closed", "quota_threshold"]);

/** The log line of alert `e` (no trailing newline); `secrets` are replaced in its detail. */
export function alertLogLine(e: AlertEvent, secrets: Iterable<string> = []): string {
  const detail = scrubValue(e.detail, secrets);
  return JSON.stringify({ level: INFO_EVENTS.has(e.event) ? "info" : "warn", time: e.at, msg: `alert ${e.event} ${e.subject}`, event: e.event, subject: e.subject, detail });
}

/** Writes {@link alertLogLine} for each `alert` event of the bus until closed. */
export class AlertLog {
  private readonly unsubscribe: () => void;

  constructor(bus: EventBus, log: (line: string) => void, secrets: () => Iterable<string>) {
    this.unsubscribe = bus.subscribe((e) => log(alertLogLine(e as AlertEvent, secrets())), ["alert"]);
  }

  /** Stops listening. */
  close(): void {
    this.unsubscribe();
  }
}
