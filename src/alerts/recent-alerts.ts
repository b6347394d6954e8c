/**
 * The alerts this instance raised lately (SPEC 9.7: alerts appear in `/admin/api/events` and the
 * dashboard), kept in memory so a dashboard opened after an alert still shows it (the event stream is
 * live only) and an operator without a webhook learns of it: `GET /admin/api/alerts` and the Overview
 * page's Recent alerts card. Lost at a restart; with several instances each keeps the alerts it raised.
 */
import type { AlertEvent, EventBus } from "../events/bus.ts";

/** One kept alert, as the webhook POSTs it (`{event, at, subject, detail}`) but `at` in ms since the epoch (the webhook's `at_ms`). */
export interface RecentAlert {
  event: string;
  at: number;
  subject: string;
  detail: Record<string, unknown>;
}

/** How many alerts are kept (the oldest goes first). */
export const RECENT_ALERTS_KEPT = 100;

/** Keeps the last {@link RECENT_ALERTS_KEPT} `alert` events of the bus. */
export class RecentAlerts {
  private readonly kept: RecentAlert[] = [];
  private readonly unsubscribe: () => void;

  constructor(bus: EventBus, private readonly max = RECENT_ALERTS_KEPT) {
    this.unsubscribe = bus.subscribe((e) => this.add(e as AlertEvent), ["alert"]);
  }

  private add(e: AlertEvent): void {
    this.kept.push({ event: e.event, at: e.at, subject: e.subject, detail: e.detail });
    if (this.kept.length > this.max) this.kept.shift();
  }

  /** The kept alerts, newest first. */
  list(): RecentAlert[] {
    return this.kept.slice().reverse();
  }

  /** Stops listening. */
  close(): void {
    this.unsubscribe();
  }
}
