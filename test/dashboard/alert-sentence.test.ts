/**
 * The Recent alerts card's sentences (src/dashboard/client/alert-sentence.ts) for the alerts the
 * gateway raises (src/alerts/alerts.ts), as the webhook carries them.
 */
import { expect, test } from "bun:test";
import { alertSentence } from "../../src/dashboard/client/alert-sentence.ts";

const time = (ms: number) => new Date(ms).toISOString().slice(11, 16);

test("each alert the gateway raises reads as one sentence saying what holds now", () => {
  const said = [
    { event: "quota_threshold", subject: "key:ci", detail: { kind: "key_budget", window: "1d", unit: "usd", limit: 0.03, used: 0.028, threshold: 0.8, resets_at: "2026-12-06T01:45:30.382Z" } },
    { event: "quota_threshold", subject: "key:ci", detail: { kind: "key_budget", window: "1d", unit: "usd", limit: 0.03, used: 0.035, threshold: 0.95, resets_at: "2026-12-06T01:45:30.382Z" } },
    { event: "quota_threshold", subject: "key:ci", detail: { kind: "key_budget", window: "1d", unit: "usd", limit: 0.03, used: 0.035, threshold: 1, exhausted: true, resets_at: "2026-12-06T01:45:30.382Z" } },
    { event: "quota_threshold", subject: "key:bulk", detail: { kind: "key_budget", window: "1h", unit: "tokens", limit: 100000, used: 81234, threshold: 0.8, resets_at: "2026-12-05T03:00:00.000Z" } },
    { event: "quota_threshold", subject: "account:fc-3", detail: { kind: "account_quota", window: "requests", model: "m-quota", used_share: 1, threshold: 0.95, resets_at: "2026-12-05T02:01:00.000Z" } },
    // one step past several shares: one alert, the highest, the others passed (tryout5)
    { event: "quota_threshold", subject: "key:small", detail: { kind: "key_budget", window: "1d", unit: "tokens", limit: 10, used: 18, threshold: 1, exhausted: true, passed: [0.5, 0.8], resets_at: "2026-12-08T00:00:00.000Z" } },
    { event: "quota_threshold", subject: "key:ci", detail: { kind: "key_budget", window: "1d", unit: "usd", limit: 10, used: 8.5, threshold: 0.8, passed: [0.5], resets_at: "2026-12-08T00:00:00.000Z" } },
    { event: "quota_threshold", subject: "account:q-1", detail: { kind: "account_quota", window: "requests", model: "*", used_share: 0.92, threshold: 0.9, passed: [0.5], resets_at: "2026-12-05T02:01:00.000Z" } },
    { event: "account_locked", subject: "account:fc-1", detail: { reason: "401 unauthorized" } },
    { event: "account_locked", subject: "account:fc-2", detail: { reason: "401 unauthorized", advice: "replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock fc-2 once the key works again" } },
    { event: "account_quarantined", subject: "account:cc-main", detail: { reason: "3 consecutive 429s", until: "2026-12-05T02:30:00.000Z" } },
    { event: "account_quarantined", subject: "account:cc-dead", detail: { reason: "401 unauthorized; no refresh token to recover with", advice: "log in again (switchyard login claude-code --account cc-dead) or import a fresh login (switchyard import claude-code --account cc-dead)" } },
    { event: "circuit_open", subject: "provider:fa", detail: { reason: "10 consecutive 5xx", until: "2026-12-05T01:53:44.099Z" } },
    { event: "circuit_closed", subject: "provider:fa", detail: { reason: "a probe succeeded" } },
  ].map((a) => alertSentence(a, time));
  expect(said).toEqual([
    "key ci passed 80 % of its 1d budget ($0.0280 of $0.0300); the window resets at 01:45.",
    "key ci passed 95 % of its 1d budget ($0.0350 of $0.0300): its requests are refused until the window resets at 01:45.",
    "key ci used up its 1d budget ($0.0350 of $0.0300): its requests are refused until the window resets at 01:45.",
    "key bulk passed 80 % of its 1h budget (81,234 tokens of 100,000 tokens); the window resets at 03:00.",
    "account fc-3 passed 95 % of its requests quota window for m-quota (100 % used); it resets at 02:01.",
    "key small used up its 1d budget (18 tokens of 10 tokens), passing 50 % and 80 % at once: its requests are refused until the window resets at 00:00.",
    "key ci passed 50 % and 80 % of its 1d budget ($8.50 of $10.00); the window resets at 00:00.",
    "account q-1 passed 50 % and 90 % of its requests quota window (92 % used); it resets at 02:01.",
    "account fc-1 was locked: 401 unauthorized; it serves no request while locked.",
    "account fc-2 was locked: 401 unauthorized; it serves no request while locked: replace the account's key (in the config file, then switchyard reload) or run switchyard accounts unlock fc-2 once the key works again.",
    "account cc-main was quarantined: 3 consecutive 429s until 02:30.",
    "account cc-dead was quarantined: 401 unauthorized; no refresh token to recover with; to bring it back: log in again (switchyard login claude-code --account cc-dead) or import a fresh login (switchyard import claude-code --account cc-dead).",
    "provider fa's circuit opened (10 consecutive 5xx): it is not called until 01:53.",
    "provider fa's circuit closed: a probe succeeded.",
  ]);
});
