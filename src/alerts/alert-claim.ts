/**
 * Which alerts are "the same alert" across instances sharing one store (SPEC D-2: several instances
 * "behave as one gateway"; SPEC 9.7: each alert POSTed to the webhook). Each instance raises alerts
 * from what it sees, and some of what it sees is shared: an account's quota window read by one instance
 * reaches every other through the database, a quarantine written by one is loaded by all, a key
 * budget's use is counted across them. So two instances can raise one crossing each. Before the webhook
 * POSTs an alert, the instance claims its identity in the store's shared counters
 * (`SharedStore.addToCounter(name, windowMs, 1)`): the instance whose add makes the total 1 delivers it,
 * the others do not. Each instance still shows the alert on its own `/admin/api/events` and dashboard.
 *
 * | event | identity (besides event and subject) | claim window |
 * |---|---|---|
 * | `quota_threshold`, key budget | budget window, unit, threshold, the window's end (windows are aligned to multiples of their length, so every instance computes the same end) | 1 day |
 * | `quota_threshold`, account quota window | window, model, threshold | 1 hour |
 * | `account_quarantined` | the reason | 1 day |
 * | `account_locked` | the lock's end, the reason | 1 hour |
 * | `circuit_open` / `circuit_closed` | (none) | 1 minute |
 *
 * A claim lasts for the fixed window of its length that contains it (windows start at multiples of the
 * length since the epoch, on the database's clock): the same crossing raised by two instances on either
 * side of a window's start is delivered by both. Account quota windows whose reset time moves with every
 * response have no period every instance agrees on, hence the hour.
 */
import type { AlertEvent } from "../events/bus.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** A claim in the shared counters: the counter's name and its window, ms. */
export interface AlertClaim {
  name: string;
  windowMs: number;
}

/** The claim that makes `e` delivered once across instances; see the module comment. */
export function alertClaim(e: AlertEvent): AlertClaim {
  const d = e.detail;
  const part = (v: unknown) => (v === undefined || v === null ? "" : String(v));
  const base = `alert:${e.event}:${e.subject}`;
  switch (e.event) {
    case "quota_threshold":
      if (d.kind === "key_budget") {
        return { name: `${base}:budget:${part(d.window)}:${part(d.unit)}:${part(d.threshold)}:${part(d.resets_at)}`, windowMs: DAY };
      }
      return { name: `${base}:quota:${part(d.window)}:${part(d.model)}:${part(d.threshold)}`, windowMs: HOUR };
    case "account_quarantined":
      return { name: `${base}:${part(d.reason)}`, windowMs: DAY };
    case "account_locked":
      return { name: `${base}:${part(d.until)}:${part(d.reason)}`, windowMs: HOUR };
    default:
      return { name: base, windowMs: MINUTE };
  }
}
