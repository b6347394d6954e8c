/**
 * Alerts (SPEC 9.7) from the bus to a local webhook receiver: each event once, in the documented shape
 * `{event, at, subject, detail}`, no secret; retries with backoff on failure; the account and circuit
 * events from `account_state`; quota windows and key budgets crossing the configured shares; instances
 * sharing a store deliver each crossing once, and each new period's again.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { Alerts } from "../../src/alerts/alerts.ts";
import { MemoryKeyCounters } from "../../src/limits/counters.ts";
import { AlertWebhook, retryDelays, retrySchedule, type WebhookPayload } from "../../src/alerts/webhook.ts";
import { webhookUrlShown } from "../../src/show-url.ts";
import { loadEffect } from "../../src/memory/lazy-effect.ts";
import { claimAlertsIn, type AlertClaim } from "../../src/alerts/alert-claim.ts";
import { EventBus, type AlertEvent } from "../../src/events/bus.ts";
import type { QuotaWindow } from "../../src/store/types.ts";
import { LocalShared } from "../../src/store/local-shared.ts";
import { webhookReceiver, type WebhookReceiver } from "../support/webhook-receiver.ts";

/** A webhook receiver on 127.0.0.1:0 ({@link webhookReceiver}) answering `statuses` in turn (then 200). */
function receiver(statuses: number[] = []): WebhookReceiver<WebhookPayload> {
  return webhookReceiver<WebhookPayload>({ answer: () => statuses.shift() ?? 200, path: "/hook" });
}

/**
 * Waits for `cond`; the test's own timeout bounds the wait (the first alert loads Effect, which takes
 * seconds on a loaded machine).
 */
async function until(cond: () => boolean): Promise<void> {
  while (!cond()) await Bun.sleep(5);
}

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

const T = Date.UTC(2026, 11, 1, 12, 0, 0);

/** A fetch whose every POST hangs until its signal aborts (a stop ends it); `posts` counts the POSTs. */
function hangingFetch(): typeof fetch & { posts: number } {
  const f = Object.assign(
    (_url: unknown, init?: RequestInit) => {
      f.posts++;
      return new Promise<Response>((_, reject) => init?.signal?.addEventListener("abort", () => reject(new Error("aborted"))));
    },
    { preconnect: fetch.preconnect, posts: 0 },
  );
  return f as unknown as typeof fetch & { posts: number };
}

describe("the webhook", () => {
  test("each alert arrives once as {event, at, at_ms, subject, detail}; a secret in a reason is scrubbed", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const bus = new EventBus();
    const hook = new AlertWebhook(bus, { url: () => r.url, secrets: () => ["sk-upstream-secret-12345"] });
    cleanups.push(() => hook.close());
    const alert: AlertEvent = { type: "alert", event: "account_locked", at: T, subject: "account:glm-main", detail: { reason: "402 for key sk-upstream-secret-12345" } };
    bus.publish(alert);
    bus.publish({ ...alert, event: "circuit_open", subject: "provider:glm", detail: {} });
    // Both delivered (the receiver's answers read) and nothing left in the queue: no other POST can follow.
    await until(() => hook.delivered === 2 && hook.pending() === 0);
    expect(r.hits).toBe(2);
    // `at` as ISO-8601 (SPEC 9.7, as receivers read it) and `at_ms`, the ms GET /admin/api/alerts and the event stream give
    expect(r.got[0]).toEqual({ event: "account_locked", at: "2026-12-01T12:00:00.000Z", at_ms: T, subject: "account:glm-main", detail: { reason: "402 for key [redacted]" } });
    expect(Object.keys(r.got[1])).toEqual(["event", "at", "at_ms", "subject", "detail"]);
    expect(JSON.stringify(r.got)).not.toContain("sk-upstream-secret-12345");
    expect(hook.delivered).toBe(2);
  });

  test("a 503 is retried with backoff until it is accepted; a 400 is not retried", async () => {
    const r = receiver([503, 503]);
    cleanups.push(r.stop);
    const bus = new EventBus();
    const hook = new AlertWebhook(bus, { url: () => r.url, baseDelayMs: 20, log: () => {} });
    cleanups.push(() => hook.close());
    bus.publish({ type: "alert", event: "circuit_closed", at: T, subject: "provider:glm", detail: {} });
    await until(() => r.got.length === 1);
    expect(r.hits).toBe(3);

    const bad = receiver([400]);
    cleanups.push(bad.stop);
    const hook2 = new AlertWebhook(bus, { url: () => bad.url, baseDelayMs: 20, log: () => {} });
    cleanups.push(() => hook2.close());
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:x", detail: {} });
    await until(() => hook2.dropped === 1); // the delivery has ended: a retry would have come before it
    expect(bad.hits).toBe(1);
  });

  test("by default a failed delivery is retried for about two minutes, at most 30 s apart (a receiver restarting misses nothing)", () => {
    const d = retryDelays();
    expect(d).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    expect(d.reduce((a, b) => a + b, 0)).toBe(121_500);
    expect(retryDelays({ attempts: 1 })).toEqual([]);
  });

  test("the retries are the Effect Schedule's: its waits are the documented ones, 10 tries in all, and it stops at a failure not worth retrying", async () => {
    const E = await loadEffect();
    /** The waits the schedule takes for these failures, ms, until it ends. */
    const waits = (failures: Array<{ retryable: boolean }>, opts = {}) => {
      const driven = E.Effect.runSync(E.Schedule.run(E.Schedule.delays(retrySchedule(E, opts)), 0, failures));
      // the last step is the schedule ending (a zero wait, no retry)
      return [...driven].slice(0, -1).map((d) => E.Duration.toMillis(d));
    };
    const failing = Array.from({ length: 20 }, () => ({ retryable: true }));
    expect(waits(failing)).toEqual(retryDelays());
    expect(waits(failing).length + 1).toBe(10);
    expect(waits(failing, { baseDelayMs: 20, maxDelayMs: 50, attempts: 5 })).toEqual([20, 40, 50, 50]);
    expect(waits([{ retryable: true }, { retryable: false }, { retryable: true }])).toEqual([500]);
  });

  test("an alert being retried does not hold back the next ones; a receiver away for a while still gets it", async () => {
    // newuser11's tryout: one delivery at a time, 5 tries over 7.5 s: the 95 % alert waited behind the
    // failing 80 % one, and a receiver restarting for ~10 s lost every alert raised meanwhile
    let away = true;
    const r = webhookReceiver<WebhookPayload>({ answer: (body) => (away && body.subject === "key:first" ? 503 : 200), path: "/hook" });
    cleanups.push(r.stop);
    const got = r.got;
    const bus = new EventBus();
    const hook = new AlertWebhook(bus, { url: () => r.url, baseDelayMs: 20, maxDelayMs: 40, attempts: 40, log: () => {} });
    cleanups.push(() => hook.close());
    bus.publish({ type: "alert", event: "quota_threshold", at: T, subject: "key:first", detail: {} });
    bus.publish({ type: "alert", event: "quota_threshold", at: T, subject: "key:second", detail: {} });
    bus.publish({ type: "alert", event: "quota_threshold", at: T, subject: "key:third", detail: {} });
    await until(() => got.length === 2);
    // (delivered side by side: in either order)
    expect(got.map((g) => g.subject).sort()).toEqual(["key:second", "key:third"]);
    away = false;
    await until(() => got.length === 3);
    expect(got[2]!.subject).toBe("key:first");
    expect(hook.dropped).toBe(0);
  });

  test("a dead webhook: tries stop after the configured number, the alert is dropped and logged", async () => {
    const dead = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(null) });
    const url = `http://127.0.0.1:${dead.port}/hook`;
    dead.stop(true);
    const bus = new EventBus();
    const logs: string[] = [];
    const hook = new AlertWebhook(bus, { url: () => url, baseDelayMs: 5, attempts: 3, log: (l) => logs.push(l) });
    cleanups.push(() => hook.close());
    bus.publish({ type: "alert", event: "account_locked", at: T, subject: "account:a", detail: {} });
    await until(() => hook.dropped === 1);
    expect(JSON.parse(logs[0])).toMatchObject({ level: "warn", msg: "alert webhook delivery failed; alert dropped", event: "account_locked", subject: "account:a" });
  });

  test("a receiver that keeps failing: exactly `attempts` tries, each but the last counted as retried, then the alert counted as dropped (/metrics)", async () => {
    const r = receiver([503, 503, 503, 503, 503, 503]);
    cleanups.push(r.stop);
    const bus = new EventBus();
    const hook = new AlertWebhook(bus, { url: () => r.url, baseDelayMs: 5, attempts: 4, log: () => {} });
    cleanups.push(() => hook.close());
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:p", detail: {} });
    await until(() => hook.dropped === 1);
    expect(r.hits).toBe(4);
    expect(hook.deliveryCounts()).toEqual([
      { event: "circuit_open", result: "retried", count: 3 },
      { event: "circuit_open", result: "dropped", count: 1 },
    ]);
  });

  test("a webhook removed while an alert waits for its next try: the alert is counted as dropped, so the results add up to the alerts raised (review16 R8)", async () => {
    const r = receiver([503, 503, 503]);
    cleanups.push(r.stop);
    const bus = new EventBus();
    let url: string | undefined = r.url;
    const hook = new AlertWebhook(bus, { url: () => url, baseDelayMs: 200, attempts: 4, log: () => {} });
    cleanups.push(() => hook.close());
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:p", detail: {} });
    await until(() => r.hits === 1);
    url = undefined; // a reload removes the webhook during the wait
    await until(() => hook.deliveryCounts().some((c) => c.result === "dropped"));
    expect(r.hits).toBe(1); // no try made again (no "retried"): the one alert ends as dropped
    expect(hook.deliveryCounts()).toEqual([{ event: "circuit_open", result: "dropped", count: 1 }]);
  });

  test("with a claim (instances sharing a store): only the claimed alert is POSTed; a claim the store cannot answer delivers anyway", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const bus = new EventBus();
    const asked: AlertClaim[] = [];
    const logs: string[] = [];
    const hook = new AlertWebhook(bus, {
      url: () => r.url,
      log: (l) => logs.push(l),
      claim: {
        take: async (c) => {
          asked.push(c);
          if (c.name.includes("provider:down")) throw new Error("database unavailable");
          return c.name.includes(":0.5:") ? { taken: false, holder: "done" } : { taken: true };
        },
        settle: async () => {},
      },
    });
    cleanups.push(() => hook.close());
    const budget = (threshold: number): AlertEvent => ({ type: "alert", event: "quota_threshold", at: T, subject: "key:ci", detail: { kind: "key_budget", window: "1d", unit: "tokens", limit: 100, used: 95, threshold, resets_at: "2026-12-02T00:00:00.000Z" } });
    bus.publish(budget(0.5)); // another instance claimed it
    bus.publish(budget(0.9));
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:down", detail: {} });
    await until(() => hook.delivered + hook.claimedElsewhere === 3 && hook.pending() === 0);
    expect(r.got.map((g) => [g.event, g.subject, g.detail.threshold ?? null])).toEqual([
      ["quota_threshold", "key:ci", 0.9],
      ["circuit_open", "provider:down", null],
    ]);
    expect(hook.claimedElsewhere).toBe(1);
    // The budget's claim names its amount (a changed budget's crossing is a new alert) and its window's
    // end (the same crossing in the next window is a new alert) and holds until an hour past it; a
    // circuit change's holds a minute.
    expect(asked.map((c) => [c.name, new Date(c.until).toISOString()])).toEqual([
      ["alert:quota_threshold:key:ci:budget:1d:tokens:100:0.5:2026-12-02T00:00:00.000Z", "2026-12-02T01:00:00.000Z"],
      ["alert:quota_threshold:key:ci:budget:1d:tokens:100:0.9:2026-12-02T00:00:00.000Z", "2026-12-02T01:00:00.000Z"],
      ["alert:circuit_open:provider:down", "2026-12-01T12:01:00.000Z"],
    ]);
    expect(JSON.parse(logs[0])).toMatchObject({ level: "warn", msg: "alert claim failed (the shared store did not answer); delivering the alert" });
  });

  test("refused for another instance's lease, then the store stops answering: kept while the lease runs (no second POST), delivered once it has ended", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const bus = new EventBus();
    const logs: string[] = [];
    // "trying" for 150 ms (1 s) at first; the store then cannot answer until `back` (or never).
    let back = Number.POSITIVE_INFINITY;
    const asked: Record<string, number> = {};
    const hook = new AlertWebhook(bus, {
      url: () => r.url,
      log: (l) => logs.push(l),
      retakeEveryMs: 100, // asks again every 100 ms while a lease holds (5 s by default)
      claim: {
        take: async (c, _ms, retake) => {
          const short = c.name.endsWith("provider:short");
          asked[String(short)] = (asked[String(short)] ?? 0) + 1;
          if (!retake) return { taken: false, holder: "trying", retryInMs: short ? 1_000 : 150 };
          if (Date.now() < back) throw new Error("database unavailable");
          return { taken: false, holder: "done" };
        },
        settle: async () => {},
      },
    });
    cleanups.push(() => hook.close());
    // The outage outlasts the first alert's 150 ms lease: it is delivered once the lease has ended.
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:gone", detail: {} });
    await until(() => hook.delivered === 1);
    expect(r.got.map((g) => g.subject)).toEqual(["provider:gone"]);
    // The second's outage ends within its lease (the holder delivered it): it is never POSTed here.
    back = Date.now() + 400;
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:short", detail: {} });
    await until(() => hook.claimedElsewhere === 1 && hook.pending() === 0);
    expect(r.got.map((g) => g.subject)).toEqual(["provider:gone"]);
    expect(asked["true"]).toBeGreaterThanOrEqual(3); // refused, unanswered at least once, then "done"
    expect(logs.map((l) => JSON.parse(l).msg)).toContain("alert claim failed (the shared store did not answer) while another instance's lease holds; asking again");
  });

  test("a clean stop counts every alert it ends as dropped (in delivery, kept for another instance's lease, queued) and gives up its leases of the undelivered ones; it counted none and kept the leases (README 'Not done yet', review17 R3)", async () => {
    const bus = new EventBus();
    const hangs = hangingFetch(); // every POST hangs until the stop aborts it
    const asked: string[] = [];
    const released: string[] = [];
    const logs: string[] = [];
    const hook = new AlertWebhook(bus, {
      url: () => "http://127.0.0.1:9/hook",
      fetchImpl: hangs,
      concurrency: 2,
      log: (l) => void logs.push(l),
      claim: {
        // another instance's lease holds provider:held's claim; the others are this instance's
        take: async (c) => (asked.push(c.name), c.name.endsWith("provider:held") ? { taken: false, holder: "trying", retryInMs: 60_000 } : { taken: true }),
        settle: async () => {},
        release: async (c) => void released.push(c.name),
      },
    });
    for (const subject of ["provider:a", "provider:held", "provider:c", "provider:queued"]) bus.publish({ type: "alert", event: "circuit_open", at: T, subject, detail: {} });
    // a and c in delivery (their POSTs hang), held kept for the other lease, queued waiting for a place
    await until(() => hangs.posts === 2 && asked.length === 3);
    expect(hook.pending()).toBe(2);
    await hook.close();
    expect(hook.deliveryCounts()).toEqual([{ event: "circuit_open", result: "dropped", count: 4 }]);
    expect(released.sort()).toEqual(["alert:circuit_open:provider:a", "alert:circuit_open:provider:c"]);
    // the stop says so (try22 P6: it said nothing), and that another instance that raised them delivers them
    expect(logs.map((l) => JSON.parse(l))).toEqual([
      {
        level: "warn",
        time: expect.any(Number),
        msg: "stopping: 4 alerts not delivered to the webhook by this instance are dropped here; another instance sharing the database that raised them too delivers them if one is running (this instance's leases are given up); otherwise they are lost",
        dropped: 4,
        events: { circuit_open: 4 },
      },
    ]);
  });

  test("on a shared store the stop's line about dropped alerts follows the other instances running: none, they are lost; some, how many, and that one which raised them too delivers them; no answer, if one is running", async () => {
    const stopLine = async (othersRunning?: () => Promise<number>) => {
      const bus = new EventBus();
      const hangs = hangingFetch(); // every POST hangs until the stop aborts it
      const logs: string[] = [];
      const claim = { take: async () => ({ taken: true as const }), settle: async () => {}, release: async () => {} };
      const hook = new AlertWebhook(bus, { url: () => "http://127.0.0.1:9/hook", fetchImpl: hangs, log: (l) => void logs.push(l), claim, othersRunning });
      for (const subject of ["key:a", "key:b"]) bus.publish({ type: "alert", event: "quota_threshold", at: T, subject, detail: {} });
      await until(() => hangs.posts === 2);
      await hook.close();
      expect(logs).toHaveLength(1);
      return JSON.parse(logs[0]!).msg as string;
    };
    expect(await stopLine(async () => 0)).toBe("stopping: 2 alerts not delivered to the webhook are dropped (lost: no other instance sharing the database runs to deliver them)");
    expect(await stopLine(async () => 2)).toBe(
      "stopping: 2 alerts not delivered to the webhook by this instance are dropped here; another instance sharing the database that raised them too delivers them (2 other instances run; this instance's leases are given up); otherwise they are lost",
    );
    expect(await stopLine(async () => Promise.reject(new Error("database away")))).toContain("delivers them if one is running (this instance's leases are given up); otherwise they are lost");
  });

  test("a clean stop of an instance alone (no claims) logs the alerts it drops as lost; one that drops none logs nothing", async () => {
    const bus = new EventBus();
    const hangs = hangingFetch(); // every POST hangs until the stop aborts it
    const logs: string[] = [];
    const hook = new AlertWebhook(bus, { url: () => "http://127.0.0.1:9/hook", fetchImpl: hangs, log: (l) => void logs.push(l) });
    bus.publish({ type: "alert", event: "quota_threshold", at: T, subject: "key:ci", detail: {} });
    await until(() => hangs.posts === 1);
    await hook.close();
    expect(logs.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({ level: "warn", msg: "stopping: 1 alert not delivered to the webhook are dropped (lost: no other instance delivers it)", dropped: 1, events: { quota_threshold: 1 } })]);
    const quiet: string[] = [];
    await new AlertWebhook(new EventBus(), { url: () => "http://127.0.0.1:9/hook", log: (l) => void quiet.push(l) }).close();
    expect(quiet).toEqual([]);
  });

  test("an alert whose claim hears 'another instance is trying' just as the webhook stops is counted dropped, not lost from the counts (review18 R3)", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const bus = new EventBus();
    let answer!: (a: { taken: false; holder: "trying"; retryInMs: number }) => void;
    let asked = false;
    const hook = new AlertWebhook(bus, {
      url: () => r.url,
      log: () => {},
      claim: {
        take: () => {
          asked = true;
          return new Promise((resolve) => (answer = resolve));
        },
        settle: async () => {},
      },
    });
    bus.publish({ type: "alert", event: "circuit_open", at: T, subject: "provider:p", detail: {} });
    await until(() => asked);
    answer({ taken: false, holder: "trying", retryInMs: 60_000 });
    await hook.close();
    expect(hook.deliveryCounts()).toEqual([{ event: "circuit_open", result: "dropped", count: 1 }]);
    expect(r.hits).toBe(0);
  });

  test("alerts raised while no webhook is configured are not sent later", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const bus = new EventBus();
    let url: string | undefined;
    const hook = new AlertWebhook(bus, { url: () => url });
    cleanups.push(() => hook.close());
    bus.publish({ type: "alert", event: "account_locked", at: T, subject: "account:a", detail: {} });
    url = r.url; // a config reload sets it
    bus.publish({ type: "alert", event: "account_locked", at: T, subject: "account:b", detail: {} });
    // One alert delivered and none waiting: the first alert, had it been queued, would have been delivered before it.
    await until(() => hook.delivered === 1 && hook.pending() === 0);
    expect(r.got.map((p) => p.subject)).toEqual(["account:b"]);
  });
});

describe("the webhook URL as settings show it", () => {
  test("scheme, host and path are shown; userinfo, query and token-shaped path segments are not", () => {
    const sha = (u: string) => new Bun.CryptoHasher("sha256").update(u).digest("hex").slice(0, 8);
    // host and port shown; the rest only as a hash of the whole URL (review15 R2: Zapier's catch-hook
    // path, a short or lower-case token were shown whole)
    for (const url of [
      "https://alerts.example.com/hooks/switchyard",
      "https://user:pw-secret@alerts.example.com:8443/in?token=q-secret#f",
      "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/AbCdEfGhIjKlMnOpQrStUvWx",
      "https://hooks.zapier.com/hooks/catch/1234567/abcde12/",
      "https://example.com/alerts/s3cr3t-t0ken",
    ]) {
      const shown = webhookUrlShown(url);
      expect(shown).toBe(`${new URL(url).protocol}//${new URL(url).host}/… (sha256 ${sha(url)})`);
      for (const secret of ["pw-secret", "q-secret", "AbCdEfGh", "abcde12", "s3cr3t", "switchyard"]) expect(shown).not.toContain(secret);
    }
    expect(webhookUrlShown("env:SWITCHYARD_ALERT_WEBHOOK")).toBe("env:SWITCHYARD_ALERT_WEBHOOK");
    expect(webhookUrlShown("not a url sk-secret")).toBe("[redacted]");
  });
});

describe("alert events", () => {
  const collect = (bus: EventBus) => {
    const out: AlertEvent[] = [];
    bus.subscribe((e) => {
      if (e.type === "alert") out.push(e);
    });
    return out;
  };

  test("account_state quarantine/lock become account alerts; a circuit change is raised once per provider", () => {
    const bus = new EventBus();
    const got = collect(bus);
    const alerts = new Alerts(bus, { thresholds: () => [0.8], now: () => T });
    cleanups.push(() => alerts.close());
    bus.publish({ type: "account_state", at: T, account: "cc-1", change: "quarantine", reason: "refresh token rejected" });
    bus.publish({ type: "account_state", at: T, account: "glm-main", change: "lock", reason: "402 payment required", until: T + 3_600_000 });
    bus.publish({ type: "account_state", at: T, account: "glm-main", change: "cooldown_start", reason: "429" });
    for (const account of ["glm-a", "glm-b"]) bus.publish({ type: "account_state", at: T, account, provider: "glm", change: "circuit_open" } as never);
    for (const account of ["glm-a", "glm-b"]) bus.publish({ type: "account_state", at: T + 1, account, provider: "glm", change: "circuit_closed" } as never);
    expect(got).toEqual([
      { type: "alert", event: "account_quarantined", at: T, subject: "account:cc-1", detail: { reason: "refresh token rejected" } },
      { type: "alert", event: "account_locked", at: T, subject: "account:glm-main", detail: { reason: "402 payment required", until: "2026-12-01T13:00:00.000Z" } },
      { type: "alert", event: "circuit_open", at: T, subject: "provider:glm", detail: {} },
      { type: "alert", event: "circuit_closed", at: T + 1, subject: "provider:glm", detail: {} },
    ]);
  });

  test("key budgets: each configured share is raised once, when crossed; one step past several, only the highest (the others as passed)", () => {
    const bus = new EventBus();
    const got = collect(bus);
    const alerts = new Alerts(bus, { thresholds: () => [0.5, 0.8, 0.95], now: () => T });
    cleanups.push(() => alerts.close());
    const budget = { window: "1d" as const, usd: 10 };
    alerts.budgetChanged("ci", [{ budget, before: 0, after: 4, resetsAt: T + 86_400_000 }], T);
    alerts.budgetChanged("ci", [{ budget, before: 4, after: 8.5, resetsAt: T + 86_400_000 }], T);
    alerts.budgetChanged("ci", [{ budget, before: 8.5, after: 9, resetsAt: T + 86_400_000 }], T);
    expect(got.map((a) => [a.subject, a.detail.threshold, a.detail.used])).toEqual([["key:ci", 0.8, 8.5]]);
    expect(got[0].detail).toEqual({ kind: "key_budget", window: "1d", unit: "usd", limit: 10, used: 8.5, threshold: 0.8, passed: [0.5], resets_at: "2026-12-02T12:00:00.000Z" });
    // one threshold crossed: one alert, no `passed`
    alerts.budgetChanged("ci", [{ budget, before: 9, after: 9.6, resetsAt: T + 86_400_000 }], T);
    expect(got.at(-1)!.detail).toEqual({ kind: "key_budget", window: "1d", unit: "usd", limit: 10, used: 9.6, threshold: 0.95, resets_at: "2026-12-02T12:00:00.000Z" });
  });

  test("one budget window's alerts name one reset time, to the second, as the client's 429 does", () => {
    // newuser11's tryout: the window's start is re-read on the wall clock at each look (monotonic
    // measure, src/limits/counters.ts), so the 80 % and 95 % alerts said …30.382Z and …30.377Z
    const bus = new EventBus();
    const got = collect(bus);
    const alerts = new Alerts(bus, { thresholds: () => [0.8, 0.95], now: () => T });
    cleanups.push(() => alerts.close());
    const budget = { window: "1d" as const, tokens: 100 };
    alerts.budgetChanged("ci", [{ budget, before: 0, after: 90, resetsAt: Date.parse("2026-12-06T01:45:30.382Z") }], T);
    alerts.budgetChanged("ci", [{ budget, before: 90, after: 108, resetsAt: Date.parse("2026-12-06T01:45:30.377Z") }], T);
    expect(got.map((a) => [a.detail.threshold, a.detail.resets_at])).toEqual([
      [0.8, "2026-12-06T01:45:30.000Z"],
      [1, "2026-12-06T01:45:30.000Z"],
    ]);
  });

  test("a key budget used up: the share 1 with exhausted: true, after the configured shares, once per window, configured or not", () => {
    for (const configured of [[0.8, 0.95], [0.8, 1]]) {
      const bus = new EventBus();
      const got = collect(bus);
      const alerts = new Alerts(bus, { thresholds: () => configured, now: () => T });
      cleanups.push(() => alerts.close());
      const budget = { window: "1d" as const, usd: 0.03 };
      const day1 = T + 86_400_000;
      // newuser11's tryout: $0.028 then $0.035 of $0.03 (the 95 % alert said it, nothing said "used up")
      alerts.budgetChanged("bud", [{ budget, before: 0, after: 0.028, resetsAt: day1 }], T);
      alerts.budgetChanged("bud", [{ budget, before: 0.028, after: 0.035, resetsAt: day1 }], T); // past 0.95 and all of it: the share 1 alone
      alerts.budgetChanged("bud", [{ budget, before: 0.035, after: 0.04, resetsAt: day1 }], T); // over it still: nothing new
      alerts.budgetChanged("bud", [{ budget, before: 0, after: 0.03, resetsAt: day1 + 86_400_000 }], T + 86_400_000); // the next window, reached exactly
      const wanted = [[0.8, 0.028, null], [1, 0.035, true]];
      expect(got.map((a) => [a.detail.threshold, a.detail.used, a.detail.exhausted ?? null]).slice(0, wanted.length), String(configured)).toEqual(wanted);
      expect(got.slice(wanted.length).map((a) => [a.detail.threshold, a.detail.exhausted ?? null]).at(-1), String(configured)).toEqual([1, true]);
      expect(got.filter((a) => a.detail.threshold === 1), String(configured)).toHaveLength(2);
      expect(got[1]!.detail.passed ?? null, String(configured)).toEqual(configured.includes(0.95) ? [0.95] : null);
      // the next window's 0 to 0.03: past 0.8 (and 0.95) and all of it, said once
      expect(got.at(-1)!.detail.passed, String(configured)).toEqual([0.8, ...(configured.includes(0.95) ? [0.95] : [])]);
    }
  });

  test("key budgets in USD: a share reached exactly by a sum of costs is crossed (binary floating point), and used reads as a price", () => {
    const bus = new EventBus();
    const got = collect(bus);
    const alerts = new Alerts(bus, { thresholds: () => [0.5, 0.8], now: () => T });
    cleanups.push(() => alerts.close());
    const budget = { window: "1d" as const, usd: 0.05 };
    // The changes the counters give for three requests of $0.02 and one of $0.018 (seen with scripts/demo and a USD budget)
    const counters = new MemoryKeyCounters();
    for (const cost of [0.02, 0.02, 0.018]) alerts.budgetChanged("ci", counters.settle("ci", { budgets: [budget] }, { tokens: 10, usd: cost }, T), T);
    // 0.02 + 0.02 is 80 % of $0.05 exactly: 0.8 then (0.5 passed with it), not one request later; $0.058 used it up
    expect(got.map((a) => [a.detail.threshold, a.detail.used, a.detail.passed])).toEqual([
      [0.8, 0.04, [0.5]],
      [1, 0.058, undefined],
    ]);
    // the counters sum $0.036 + $0.018 as $0.054 (binary floating point: 0.054000000000000006), so the alert reads it
    expect(0.036 + 0.018).not.toBe(0.054);
    const five = { budgets: [{ window: "5h" as const, usd: 0.1 }] };
    counters.settle("ci", five, { tokens: 10, usd: 0.036 }, T);
    alerts.budgetChanged("ci", counters.settle("ci", five, { tokens: 10, usd: 0.018 }, T), T);
    expect(got.at(-1)!.detail.used).toBe(0.054);
  });

  test("account quota windows: a crossing seen by the scan is raised once per reset period", () => {
    const bus = new EventBus();
    const got = collect(bus);
    let windows: QuotaWindow[] = [];
    let now = T;
    const alerts = new Alerts(bus, { thresholds: () => [0.8, 0.95], quotaWindows: () => windows, now: () => now, quotaScanMs: 3_600_000 });
    cleanups.push(() => alerts.close());
    // stored before this start and already past 0.8: raised by the previous run, not again
    windows = [{ accountId: "cc-1", window: "7d", model: "*", usedPercent: 85, resetAt: T + 1e9, updatedAt: T - 1000 }];
    alerts.scanQuotas();
    expect(got).toEqual([]);
    now = T + 10;
    windows = [
      { accountId: "cc-1", window: "7d", model: "*", usedPercent: 96, resetAt: T + 1e9, updatedAt: T + 5 },
      { accountId: "cx-1", window: "5h", model: "*", usedPercent: 81, resetAt: T + 1e7, updatedAt: T + 5 },
    ];
    alerts.scanQuotas();
    alerts.scanQuotas();
    expect(got.map((a) => [a.subject, a.detail.window, a.detail.threshold])).toEqual([
      ["account:cc-1", "7d", 0.95],
      ["account:cx-1", "5h", 0.8],
    ]);
    // the 5h window resets (its reset time passes) and fills again: raised again for the new period
    now = T + 1e7;
    windows = [{ accountId: "cx-1", window: "5h", model: "*", usedPercent: 90, resetAt: T + 2e7, updatedAt: T + 1e7 }];
    alerts.scanQuotas();
    expect(got.at(-1)!.detail).toEqual({ kind: "account_quota", window: "5h", model: "*", used_share: 0.9, threshold: 0.8, resets_at: new Date(T + 2e7).toISOString() });
    expect(got.length).toBe(3);
  });

  test("a rolling window (its reset time moves with every response, as OpenAI's x-ratelimit-reset-* and Anthropic's token buckets do): raised once per period, not at every scan", () => {
    const bus = new EventBus();
    const got = collect(bus);
    let now = T;
    let used = 95;
    const windows = () => [{ accountId: "oai-1", window: "tokens", model: "gpt-5", usedPercent: used, resetAt: now + 20_000, updatedAt: now }];
    const alerts = new Alerts(bus, { thresholds: () => [0.8, 0.95], quotaWindows: windows, now: () => now, quotaScanMs: 3_600_000 });
    cleanups.push(() => alerts.close());
    alerts.scanQuotas();
    // past 0.8 and 0.95 at the first reading: the highest, 0.8 passed with it
    expect(got.map((a) => [a.detail.threshold, a.detail.passed])).toEqual([[0.95, [0.8]]]);
    // busy above both thresholds for 15 s, scanned every 5 s, the reset 20 s ahead each time
    for (let i = 1; i <= 3; i++) {
      now = T + i * 5000;
      alerts.scanQuotas();
    }
    expect(got).toHaveLength(1);
    // flapping around 0.8 inside the period raises nothing more
    for (const share of [79, 81, 79, 81]) {
      used = share;
      now += 1000;
      alerts.scanQuotas();
    }
    expect(got).toHaveLength(1);
    // past the first reading's reset time (T + 20 s) the period is over: a share still past 0.8 is raised again, once
    now = T + 20_000;
    alerts.scanQuotas();
    now += 5000;
    alerts.scanQuotas();
    expect(got.map((a) => a.detail.threshold)).toEqual([0.95, 0.8]);
  });
});

describe("one request past several shares of a budget at once (tryout5)", () => {
  test("past 50 %, 80 % and the whole budget in one request: one event and one webhook POST, the used-up one, naming the shares it passed; a later window's single crossing is one alert as before", async () => {
    // tryout5: a 10-token budget, one request of 18 tokens: three alerts (50 %, 80 %, used up), each
    // saying the key's requests were refused until the window reset
    const r = receiver();
    cleanups.push(r.stop);
    const bus = new EventBus();
    const events: AlertEvent[] = [];
    bus.subscribe((e) => void (e.type === "alert" && events.push(e)), ["alert"]);
    const alerts = new Alerts(bus, { thresholds: () => [0.5, 0.8], now: () => T });
    const hook = new AlertWebhook(bus, { url: () => r.url });
    cleanups.push(() => alerts.close(), () => hook.close());
    const counters = new MemoryKeyCounters();
    const limits = { budgets: [{ window: "1d" as const, tokens: 10 }] };
    alerts.budgetChanged("small", counters.settle("small", limits, { tokens: 18, usd: 0 }, T), T);
    await until(() => hook.delivered === 1 && hook.pending() === 0);
    expect(events.map((e) => [e.event, e.subject, e.detail.threshold, e.detail.exhausted, e.detail.passed])).toEqual([["quota_threshold", "key:small", 1, true, [0.5, 0.8]]]);
    expect(r.hits).toBe(1);
    expect(r.got[0]!.detail).toMatchObject({ kind: "key_budget", window: "1d", unit: "tokens", limit: 10, used: 18, threshold: 1, exhausted: true, passed: [0.5, 0.8] });
    // another key's budget crossing one share at a time: one alert each, no `passed`
    const big = { budgets: [{ window: "1d" as const, tokens: 100 }] };
    for (const tokens of [60, 25, 20]) alerts.budgetChanged("big", counters.settle("big", big, { tokens, usd: 0 }, T), T);
    await until(() => hook.delivered === 4 && hook.pending() === 0);
    expect(events.slice(1).map((e) => [e.subject, e.detail.threshold, e.detail.used, e.detail.passed ?? null])).toEqual([
      ["key:big", 0.5, 60, null],
      ["key:big", 0.8, 85, null],
      ["key:big", 1, 105, null],
    ]);
    expect(r.hits).toBe(4);
  });
});

describe("instances sharing a store: each crossing delivered once, each new period's again (SPEC D-2, 9.7)", () => {
  /**
   * One instance of the gateway's alert path: its clock, its Alerts and its webhook claiming in the
   * store they share (here one LocalShared, whose clock is the database's: `db.now`). `settled(n)`
   * waits until its webhook has delivered or left to the other instance `n` alerts in all.
   */
  function instance(db: { now: number; shared: LocalShared }, hookUrl: string, windows: () => QuotaWindow[] = () => []) {
    const bus = new EventBus();
    const self = { now: db.now };
    const alerts = new Alerts(bus, { thresholds: () => [0.8], quotaWindows: windows, now: () => self.now, quotaScanMs: 3_600_000 });
    const hook = new AlertWebhook(bus, { url: () => hookUrl, claim: claimAlertsIn(db.shared) });
    cleanups.push(() => alerts.close(), () => hook.close());
    const settled = (n: number) => until(() => hook.delivered + hook.claimedElsewhere === n && hook.pending() === 0);
    return { self, alerts, hook, settled };
  }
  /** A store shared by the instances, with the database's clock. */
  function sharedStore(start: number) {
    const db = { now: start, shared: undefined as unknown as LocalShared };
    db.shared = new LocalShared(() => db.now);
    return db;
  }

  test("a key budget crossed by the pair's use, raised by each instance either side of midnight UTC: delivered once; the next window's crossing is delivered", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const db = sharedStore(Date.UTC(2026, 11, 1, 23, 59, 59, 900));
    const a = instance(db, r.url);
    const b = instance(db, r.url);
    const budget = { window: "5h" as const, tokens: 100 };
    const windowEnd = Date.UTC(2026, 11, 2, 5); // aligned to 5 h on the database's clock: every instance names it
    a.alerts.budgetChanged("ci", [{ budget, before: 60, after: 85, resetsAt: windowEnd }], db.now);
    await a.settled(1);
    // B learns A's use a fraction of a second later, on the next day (a clock day was the claim's window).
    db.now = Date.UTC(2026, 11, 2, 0, 0, 0, 100);
    b.alerts.budgetChanged("ci", [{ budget, before: 60, after: 85, resetsAt: windowEnd }], db.now);
    await b.settled(1);
    expect(r.got.map((g) => [g.subject, g.detail.threshold, g.detail.resets_at])).toEqual([["key:ci", 0.8, "2026-12-02T05:00:00.000Z"]]);
    expect(a.hook.delivered + b.hook.delivered).toBe(1);
    // The next window (within the same clock day): its crossing is a new alert.
    db.now = Date.UTC(2026, 11, 2, 6);
    b.alerts.budgetChanged("ci", [{ budget, before: 0, after: 90, resetsAt: Date.UTC(2026, 11, 2, 10) }], db.now);
    await b.settled(2);
    expect(r.got.map((g) => g.detail.resets_at)).toEqual(["2026-12-02T05:00:00.000Z", "2026-12-02T10:00:00.000Z"]);
  });

  test("one instance on a shared store, a quota window reset every 10 minutes and busy past the threshold: each period's alert is POSTed, as without a shared store (not once per clock hour)", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const T0 = Date.UTC(2026, 11, 1, 12, 0, 0);
    const db = sharedStore(T0);
    // OpenAI's x-ratelimit-reset-requests: the reset 10 minutes ahead of each response.
    const windows = (): QuotaWindow[] => [{ accountId: "oai-1", window: "requests", model: "gpt-5", usedPercent: 90, resetAt: db.now + 600_000, updatedAt: db.now }];
    const a = instance(db, r.url, windows);
    for (let i = 0; i < 4; i++) {
      // Scans 5 minutes apart: a new period every other scan.
      for (const minutes of [0, 5]) {
        db.now = a.self.now = T0 + i * 600_000 + minutes * 60_000 + i * 1000;
        a.alerts.scanQuotas();
      }
      await a.settled(i + 1);
    }
    expect(a.hook.claimedElsewhere).toBe(0);
    expect(r.got.map((g) => [g.subject, g.detail.threshold, g.at])).toEqual(
      [0, 1, 2, 3].map((i) => ["account:oai-1", 0.8, new Date(T0 + i * 600_000 + i * 1000).toISOString()]),
    );
  });

  test("two instances scanning an account quota window with a fixed reset time, either side of a clock hour: one delivery for the crossing, and one for the next period's", async () => {
    const r = receiver();
    cleanups.push(r.stop);
    const T0 = Date.UTC(2026, 11, 1, 12, 50, 0);
    const db = sharedStore(T0);
    const reset1 = Date.UTC(2026, 11, 1, 15, 0, 0);
    // Claude's unified 5h window as the database holds it (read by either instance, the same for both).
    let win: QuotaWindow = { accountId: "cc-1", window: "5h", model: "*", usedPercent: 40, resetAt: reset1, updatedAt: T0 };
    const a = instance(db, r.url, () => [win]);
    const b = instance(db, r.url, () => [win]);
    a.alerts.scanQuotas();
    b.alerts.scanQuotas();
    win = { ...win, usedPercent: 85, updatedAt: Date.UTC(2026, 11, 1, 12, 59, 58) };
    db.now = a.self.now = Date.UTC(2026, 11, 1, 12, 59, 59);
    a.alerts.scanQuotas();
    await a.settled(1);
    db.now = b.self.now = Date.UTC(2026, 11, 1, 13, 0, 3);
    b.alerts.scanQuotas();
    await b.settled(1);
    expect(r.got.map((g) => [g.subject, g.detail.threshold, g.detail.resets_at])).toEqual([["account:cc-1", 0.8, "2026-12-01T15:00:00.000Z"]]);
    // The window resets and fills again: a new period, delivered once more (by whichever claims first).
    const reset2 = Date.UTC(2026, 11, 1, 20, 0, 0);
    win = { ...win, usedPercent: 90, resetAt: reset2, updatedAt: Date.UTC(2026, 11, 1, 15, 30, 0) };
    db.now = b.self.now = Date.UTC(2026, 11, 1, 15, 30, 2);
    b.alerts.scanQuotas();
    await b.settled(2);
    db.now = a.self.now = Date.UTC(2026, 11, 1, 15, 30, 4);
    a.alerts.scanQuotas();
    await a.settled(2);
    expect(r.got.map((g) => g.detail.resets_at)).toEqual(["2026-12-01T15:00:00.000Z", "2026-12-01T20:00:00.000Z"]);
    expect([a.hook.claimedElsewhere, b.hook.claimedElsewhere]).toEqual([1, 1]);
  });
});
