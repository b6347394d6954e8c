/**
 * The Overview page's Recent alerts card (SPEC 9.7: alerts appear in the dashboard): the alerts this
 * instance raised lately (`GET /admin/api/alerts`, kept in its memory), newest first, each as one
 * sentence (../alert-sentence.ts) with its time; the list is re-read when an `alert` event arrives (new
 * ones show without a reload) and after a reconnect. Shown only when there is at least one.
 */
import { api } from "../api.ts";
import { alertSentence } from "../alert-sentence.ts";
import { Card, Pill, useData } from "../components.tsx";
import { clock } from "../format.ts";
import { useLive } from "../live.ts";

interface Alert {
  event: string;
  at: number;
  subject: string;
  detail: Record<string, unknown>;
}

/** How many the card lists (the server keeps 100). */
const SHOWN = 20;

const TONE: Record<string, "bad" | "warn" | "ok" | "info"> = {
  account_locked: "bad",
  circuit_open: "bad",
  account_quarantined: "warn",
  quota_threshold: "warn",
  circuit_closed: "ok",
};

export function RecentAlerts() {
  // The instance's list is the one source: re-read when an alert arrives live, and after a reconnect.
  const read = useData(() => api<{ alerts: Alert[] }>("/alerts").then((a) => a.alerts));
  useLive((e) => {
    if (e.type === "alert" || e.type === "hello") read.reload();
  });
  const list = (read.data ?? []).slice(0, SHOWN);
  if (list.length === 0) return null;
  return (
    <Card title="Recent alerts" class="alerts-card">
      <ul class="alerts" data-alerts={list.length}>
        {list.map((a) => (
          <li key={`${a.at}-${a.event}-${a.subject}`} data-alert={a.event}>
            <span class="muted nowrap">{clock(a.at)}</span> <Pill tone={TONE[a.event] ?? "info"}>{a.event.replace(/_/g, " ")}</Pill> <span>{alertSentence(a, clock)}</span>
          </li>
        ))}
      </ul>
    </Card>
  );
}
