/**
 * A subscription login's facts on its Accounts card (newuser12b's tryout, H12: the card showed no plan,
 * e-mail, token expiry or refresh state): three label/value pairs from `GET /admin/api/accounts`'
 * `login` (src/accounts/credentials.ts LoginFacts), in words, never a token. Pure; `now` in ms since
 * the epoch.
 */
import type { AccountStatus } from "./types.ts";
import { ago, span } from "./format.ts";

/** One fact of the card's list: its label, its value, and a longer explanation for the title. */
export interface LoginFact {
  label: string;
  value: string;
  title?: string;
}

/** Login (plan · e-mail), Token (when it expires, and whether it can be renewed), Refresh (this instance's last one). */
export function loginFacts(login: NonNullable<AccountStatus["login"]>, now: number): LoginFact[] {
  const who = [login.plan, login.email].filter(Boolean).join(" · ");
  const expires =
    login.expiresAt === undefined ? "no expiry given" : login.expiresAt > now ? `expires in ${span(login.expiresAt - now)}` : `expired ${ago(login.expiresAt, now)}`;
  const r = login.refresh;
  const refresh =
    r.state === "refreshing"
      ? "refreshing now"
      : r.state === "ok"
        ? `refreshed ${ago(r.at ?? now, now)}`
        : r.state === "failed_temporarily"
          ? `failed ${ago(r.at ?? now, now)}; next try ${r.retryAt !== undefined && r.retryAt > now ? `in ${span(r.retryAt - now)}` : "with the next request"}`
          : r.state === "rejected"
            ? `refresh token rejected ${ago(r.at ?? now, now)}`
            : r.state === "no_refresh_token"
              ? "none: no refresh token"
              : "none yet";
  return [
    { label: "Login", value: who || "–", title: who ? undefined : "The login or import did not say its plan or e-mail" },
    {
      label: "Token",
      value: `${expires}${login.refreshable ? "" : " · no refresh token"}`,
      title: login.expiresAt !== undefined ? `The access token in use expires at ${new Date(login.expiresAt).toISOString()}; it is refreshed 5 minutes before${login.refreshable ? "" : " (it cannot be: no refresh token)"}` : undefined,
    },
    { label: "Refresh", value: refresh, title: r.reason ? `${r.reason} (this instance's refreshes since it started)` : "This instance's refreshes since it started" },
  ];
}
