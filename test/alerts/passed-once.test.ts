/**
 * Each share of a key budget said once across instances sharing a store (SPEC 9.7 with D-2: several
 * instances "behave as one gateway"). One step past several shares raises one alert, the highest,
 * the lower ones in `detail.passed`; two instances that learn the pair's use in different steps raise
 * different alerts for it (one 0.5 then 0.9, the other 0.9 with 0.5 passed). The webhook claims each
 * passed share as that share's own alert would be claimed (src/alerts/alert-claim.ts, "Passed shares"),
 * so the receiver gets 0.5 once, whichever instance claims first; until 2026-12-07 (later) it got 0.5
 * twice, once as an alert and once in the other's `passed`. A passed share whose holder died before its
 * POST succeeded is POSTed alone once that holder's lease ends. The store is one LocalShared (the
 * embedded store's claims, the same contract as PostgreSQL's), with the database's clock `db.now`.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Alerts } from "../../src/alerts/alerts.ts";
import { alertClaim, claimAlertsIn } from "../../src/alerts/alert-claim.ts";
import { AlertWebhook, type WebhookPayload } from "../../src/alerts/webhook.ts";
import { EventBus, type AlertEvent } from "../../src/events/bus.ts";
import { LocalShared } from "../../src/store/local-shared.ts";
import { webhookReceiver } from "../support/webhook-receiver.ts";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

/** Waits for `cond`; the test's timeout bounds the wait (the first alert loads Effect). */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await Bun.sleep(5);
}

const T = Date.UTC(2026, 11, 1, 12, 0, 0);
const BUDGET = { window: "1d" as const, tokens: 100 };
const WINDOW_END = Date.UTC(2026, 11, 2);

/** A store shared by the instances (claims on the database's clock, `db.now`), and a receiver. */
function setup() {
  const db = { now: T, shared: undefined as unknown as LocalShared };
  db.shared = new LocalShared(() => db.now);
  const r = webhookReceiver<WebhookPayload>({ answer: () => 200, path: "/hook" });
  cleanups.push(r.stop);
  return { db, r };
}

/**
 * One instance's alert path: its Alerts (shares 0.5 and 0.9) and its webhook claiming in `db`'s store.
 * `step(before, after, resetsAt)` is the key `ci`'s budget use (tokens of 100) in the window ending at
 * `resetsAt` (default {@link WINDOW_END}) as this instance learns it;
 * `settled(n)` waits until its webhook delivered or left to another instance `n` alerts in all.
 */
function instance(db: { now: number; shared: LocalShared }, hookUrl: string) {
  const bus = new EventBus();
  const alerts = new Alerts(bus, { thresholds: () => [0.5, 0.9], now: () => db.now });
  const hook = new AlertWebhook(bus, { url: () => hookUrl, claim: claimAlertsIn(db.shared), retakeEveryMs: 50 });
  cleanups.push(() => alerts.close(), () => hook.close());
  const step = (before: number, after: number, resetsAt = WINDOW_END) => alerts.budgetChanged("ci", [{ budget: BUDGET, before, after, resetsAt }], db.now);
  const settled = (n: number) => until(() => hook.delivered + hook.claimedElsewhere === n && hook.pending() === 0);
  return { hook, step, settled };
}

/** What the receiver got: each POST's threshold and passed shares. */
const said = (got: WebhookPayload[]) => got.map((g) => [g.detail.threshold, g.detail.passed ?? null]);

describe("a share passed by one instance's alert and alerted by another's: POSTed once (SPEC 9.7, D-2)", () => {
  test("B delivers 0.5 first, then A 0.9 with 0.5 passed: A's POST leaves 0.5 out of `passed`", async () => {
    const { db, r } = setup();
    const a = instance(db, r.url);
    const b = instance(db, r.url);
    b.step(0, 60); // B learns the use in smaller steps: 0.5 …
    await b.settled(1);
    db.now += 1000;
    a.step(0, 95); // … A in one step past both: 0.9 with 0.5 passed
    await a.settled(1);
    expect(said(r.got)).toEqual([
      [0.5, null],
      [0.9, null],
    ]);
    b.step(60, 95); // B's 0.9: A said it
    await b.settled(2);
    expect(r.got).toHaveLength(2);
    expect([a.hook.delivered, b.hook.delivered, b.hook.claimedElsewhere]).toEqual([1, 1, 1]);
  });

  test("A delivers 0.9 with 0.5 passed first, then B raises 0.5 and 0.9: neither is POSTed again", async () => {
    const { db, r } = setup();
    const a = instance(db, r.url);
    const b = instance(db, r.url);
    a.step(0, 95);
    await a.settled(1);
    db.now += 1000;
    b.step(0, 60);
    b.step(60, 95);
    await b.settled(2);
    expect(said(r.got)).toEqual([[0.9, [0.5]]]);
    expect([b.hook.delivered, b.hook.claimedElsewhere]).toEqual([0, 2]);
  });

  test("a passed share another instance is delivering: left out of the POST and kept; POSTed alone when its holder died, not when it delivered", async () => {
    const { db, r } = setup();
    const a = instance(db, r.url);
    // Another instance leased the 0.5 alert for its tries (60 s on the database's clock), and dies.
    const holder = claimAlertsIn(db.shared);
    const half = (resetsAt: number): AlertEvent => ({ type: "alert", event: "quota_threshold", at: T, subject: "key:ci", detail: { kind: "key_budget", window: "1d", unit: "tokens", limit: 100, used: 60, threshold: 0.5, resets_at: new Date(resetsAt).toISOString() } });
    const dead = alertClaim(half(WINDOW_END));
    const alive = alertClaim(half(WINDOW_END + 86_400_000));
    expect(await holder.take(dead, 60_000, false)).toEqual({ taken: true });
    a.step(0, 95);
    await until(() => a.hook.delivered === 1);
    expect(said(r.got)).toEqual([[0.9, null]]);
    await Bun.sleep(300); // 0.5 kept while the other instance's lease holds (asked again every 50 ms)
    expect(said(r.got)).toEqual([[0.9, null]]);
    db.now += 61_000; // the lease lapsed: its holder died
    await a.settled(2);
    expect(r.got.map((g) => [g.detail.threshold, g.detail.passed ?? null, g.detail.used, g.detail.exhausted ?? null])).toEqual([
      [0.9, null, 95, null],
      [0.5, null, 95, null],
    ]);
    // the next window's 0.5: another instance leased it and delivers it (settles) while this one keeps it
    expect(await holder.take(alive, 60_000, false)).toEqual({ taken: true });
    a.step(0, 95, WINDOW_END + 86_400_000);
    await until(() => a.hook.delivered === 3);
    await Bun.sleep(300);
    expect(r.got).toHaveLength(3);
    await holder.settle(alive);
    await a.settled(4);
    expect(said(r.got)).toEqual([
      [0.9, null],
      [0.5, null],
      [0.9, null],
    ]);
    expect(a.hook.claimedElsewhere).toBe(1);
  });
});
