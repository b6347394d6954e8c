/**
 * One sentence per alert (SPEC 9.7) for the dashboard's Recent alerts card: what happened, to what, and
 * what holds now, from the `{event, subject, detail}` the webhook POSTs (src/alerts/alerts.ts writes
 * them). Times are given to `time` (ms since the epoch) so the page writes them in the reader's clock.
 * Imports nothing node-typed: it is part of the browser bundle.
 */
import { dollars } from "../../limits/dollars.ts";

/** An alert as `GET /admin/api/alerts` and the `alert` live event carry it. */
export interface AlertLike {
  event: string;
  subject: string;
  detail: Record<string, unknown>;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const share = (v: number) => `${Math.round(v * 100)} %`;
/** The lower shares an alert's step passed with it (`detail.passed`, src/alerts/alerts.ts), numbers only. */
const passedOf = (v: unknown): number[] => (Array.isArray(v) ? v.filter((x): x is number => num(x) !== undefined) : []);
/** "50 %, 80 % and 95 %". */
const shares = (vs: number[]) => (vs.length < 2 ? vs.map(share).join("") : `${vs.slice(0, -1).map(share).join(", ")} and ${share(vs.at(-1)!)}`);

/** "key ci" / "account cc-main" / "provider openai" from `key:ci`, `account:cc-main`, `provider:openai`. */
export function alertSubject(subject: string): string {
  const colon = subject.indexOf(":");
  return colon < 0 ? subject : `${subject.slice(0, colon)} ${subject.slice(colon + 1)}`;
}

/** The sentence for `a`; `time` writes an ISO instant of the detail (`resets_at`, `until`) as the page shows times. */
export function alertSentence(a: AlertLike, time: (ms: number) => string): string {
  const d = a.detail;
  const who = alertSubject(a.subject);
  const at = (iso: unknown) => {
    const ms = typeof iso === "string" ? Date.parse(iso) : NaN;
    return Number.isFinite(ms) ? time(ms) : undefined;
  };
  const reason = str(d.reason);
  switch (a.event) {
    case "quota_threshold": {
      const threshold = num(d.threshold);
      const resets = at(d.resets_at);
      // one step past several shares is one alert, the highest, the lower ones in `passed`
      const passed = passedOf(d.passed);
      const crossed = threshold !== undefined ? shares([...passed, threshold]) : "a share";
      if (d.kind === "key_budget") {
        const used = num(d.used);
        const limit = num(d.limit);
        const amount = (v: number) => (d.unit === "usd" ? dollars(v) : `${Math.round(v).toLocaleString("en-US")} tokens`);
        const of = used !== undefined && limit !== undefined ? ` (${amount(used)} of ${amount(limit)})` : "";
        const over = used !== undefined && limit !== undefined && used >= limit;
        const refused = `: its requests are refused${resets ? ` until the window resets at ${resets}` : ""}`;
        // the share 1 (`exhausted`, src/alerts/alerts.ts): the budget used up, said as such
        if (d.exhausted === true || threshold === 1) return `${who} used up its ${str(d.window) ?? ""} budget${of}${passed.length ? `, passing ${shares(passed)} at once` : ""}${refused}.`;
        return `${who} passed ${crossed} of its ${str(d.window) ?? ""} budget${of}${over ? refused : resets ? `; the window resets at ${resets}` : ""}.`;
      }
      const model = str(d.model);
      const used = num(d.used_share);
      return `${who} passed ${crossed} of its ${str(d.window) ?? ""} quota window${model && model !== "*" ? ` for ${model}` : ""}${used !== undefined ? ` (${share(used)} used)` : ""}${resets ? `; it resets at ${resets}` : ""}.`;
    }
    case "account_locked":
      // `advice`: what an operator does about it (src/accounts/lock-advice.ts), when the alert carries it
      return `${who} was locked${reason ? `: ${reason}` : ""}; it serves no request while locked${str(d.advice) ? `: ${str(d.advice)}` : ""}.`;
    case "account_quarantined": {
      const until = at(d.until);
      // `advice`: the way back (a new login or import, src/accounts/lock-advice.ts), when the alert carries it
      return `${who} was quarantined${reason ? `: ${reason}` : ""}${until ? ` until ${until}` : ""}${str(d.advice) ? `; to bring it back: ${str(d.advice)}` : ""}.`;
    }
    case "circuit_open": {
      const until = at(d.until);
      return `${who}'s circuit opened${reason ? ` (${reason})` : ""}: it is not called${until ? ` until ${until}` : " for a while"}.`;
    }
    case "circuit_closed":
      return `${who}'s circuit closed${reason ? `: ${reason}` : ""}.`;
    default:
      return `${a.event} for ${who}.`;
  }
}
