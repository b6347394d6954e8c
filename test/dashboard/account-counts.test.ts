/**
 * The Accounts page header's counts (src/dashboard/client/account-counts.ts) add up to the accounts
 * listed: each account in one group (newuser12b H17 saw "5 accounts · 2 ready · 2 cooling down · 1
 * held back · 1 disabled").
 */
import { expect, test } from "bun:test";
import { accountCounts } from "../../src/dashboard/client/account-counts.ts";
import type { AccountStatus } from "../../src/dashboard/client/types.ts";

const now = 1_800_000_000_000;
const account = (over: Partial<AccountStatus>): AccountStatus =>
  ({ id: "x", providerId: "p", source: "db", credential: "oauth", priority: 0, disabled: false, eligible: true, reasons: [], cooldowns: [], removedModels: [], quota: [], circuit: { state: "closed", consecutive5xx: 0 }, models: [], ...over }) as AccountStatus;

test("the tryout's five accounts: 2 ready, 2 cooling down (an exhausted subscription window), 0 held back, 1 disabled", () => {
  const cooling = { model: "claude-sonnet-4-5", reason: "quota window exhausted", until: now + 7_200_000, level: 0 };
  const accounts = [
    account({ id: "anth-key" }),
    account({ id: "cx-login" }),
    account({ id: "cc-dev", cooldowns: [cooling] }),
    account({ id: "cc-import", cooldowns: [cooling] }),
    account({ id: "cx-coder", disabled: true, eligible: false, reasons: ["disabled"] }),
  ];
  const c = accountCounts(accounts, now);
  expect(c).toEqual({ ready: 2, cooling: 2, held: 0, disabled: 1, implicit: 0 });
  expect(c.ready + c.cooling + c.held + c.disabled).toBe(accounts.length);
});

test("held back: quarantined, locked or behind an open circuit; a whole-account cooldown counts once, as cooling down; an ended cooldown is ready", () => {
  const accounts = [
    account({ id: "q", eligible: false, reasons: ["credential quarantined (…) until replaced: …"] }),
    account({ id: "l", eligible: false, reasons: ["locked: 401 unauthorized until changed: …"] }),
    account({ id: "c", circuit: { state: "open", openUntil: now + 1000, consecutive5xx: 10 }, eligible: false }),
    account({ id: "w", eligible: false, cooldowns: [{ model: "*", reason: "overloaded", until: now + 5000, level: 1 }] }),
    account({ id: "e", cooldowns: [{ model: "m", reason: "429", until: now - 1, level: 0 }] }),
    account({ id: "k", source: "implicit", credential: "none" }),
  ];
  const c = accountCounts(accounts, now);
  expect(c).toEqual({ ready: 2, cooling: 1, held: 3, disabled: 0, implicit: 1 });
  expect(c.ready + c.cooling + c.held + c.disabled).toBe(accounts.length);
});

test("an open circuit counts as held back, as the card's first label says, though a model of the account also cools down (tryout5: 11 cards 'Circuit open', header '10 cooling down · 1 held back')", () => {
  const open = { state: "open" as const, openUntil: now + 273_000, consecutive5xx: 10 };
  const cooling = { model: "gpt-demo", reason: "upstream 500", until: now + 3000, level: 0 };
  const accounts = [
    account({ id: "fa-1" }),
    account({ id: "fa-2" }),
    account({ id: "fc-1", circuit: open, eligible: false }),
    ...Array.from({ length: 10 }, (_, i) => account({ id: `fc-${i + 2}`, circuit: open, eligible: false, cooldowns: [cooling] })),
  ];
  expect(accountCounts(accounts, now)).toEqual({ ready: 2, cooling: 0, held: 11, disabled: 0, implicit: 0 });
  // a half-open circuit likewise; a locked account whose model cools down is held back (its card says "Locked" first)
  const locked = account({ id: "l", eligible: false, lock: { reason: "401 unauthorized", until: null, advice: "" }, cooldowns: [cooling] });
  const half = account({ id: "h", circuit: { state: "half-open", consecutive5xx: 10 }, cooldowns: [cooling] });
  // a whole-account cooldown is said before the circuit on the card: cooling down
  const whole = account({ id: "w", eligible: false, circuit: open, cooldowns: [{ model: "*", reason: "overloaded", until: now + 5000, level: 1 }] });
  expect(accountCounts([locked, half, whole], now)).toEqual({ ready: 0, cooling: 1, held: 2, disabled: 0, implicit: 0 });
});
