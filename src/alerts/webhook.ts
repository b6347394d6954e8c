/**
 * The alert webhook (SPEC 9.7): every `alert` event on the bus is POSTed as JSON
 * `{event, at, at_ms, subject, detail}` (`at` an ISO-8601 UTC time, `at_ms` the same time in ms since
 * the epoch, as `GET /admin/api/alerts` and the event stream give it) to `settings.alerts.webhook`, off
 * the request path.
 *
 * Alerts wait in a bounded queue (default 256; when it is full the newest alert is dropped and counted)
 * and are taken in order, up to 4 in delivery at once, so an alert whose delivery is being retried does
 * not hold back the next ones. A delivery that fails (connection error, timeout of 5 s, a 5xx, 408 or
 * 429) is retried with exponential backoff (0.5 s doubling, at most 30 s apart, 10 tries in all: about
 * two minutes, so a receiver restarting misses nothing; {@link retryDelays}); a 4xx other than 408/429
 * is not retried. Until 2026-12-05 it was one delivery at a time with 5 tries over 7.5 s, so a receiver
 * away for 10 s lost every alert raised meanwhile (newuser11's tryout). The tries and waits are an Effect
 * `Schedule` ({@link retrySchedule}, stepped by a driver so that a change of URL can end a wait early;
 * a hand-written loop of timers until 2026-12-05, later). Every try goes to the URL in force
 * when it starts: until 2026-12-05 the URL was read once per alert, so fixing a wrong URL and reloading
 * left the alerts in delivery retrying the old one until dropped (newuser15's tryout, N5). Publishing an alert is a queue offer: a dead or slow webhook
 * never blocks or slows a request. Effect is loaded, and the queue and fiber made, by the first alert
 * published while a webhook is set (src/memory/lazy-effect.ts); alerts published while it loads wait,
 * in order and within the same bound, in a plain list.
 *
 * With `claim` (instances sharing a PostgreSQL store), an alert is POSTed only by the instance that
 * claims it first (src/alerts/alert-claim.ts): one delivery per alert for the gateway, not one per
 * instance. The claim is a lease for the time of the tries ({@link defaultClaimLeaseMs}), settled into
 * the alert's claim once it is delivered or out of tries; an instance refused while another's lease
 * holds keeps the alert beside its queue (as many as the queue's bound) and claims it again when the
 * lease ends, delivering it if the holder stopped without settling (killed): at least once while any
 * instance that raised the alert runs, where until 2026-12-05 (later) an alert whose claiming instance
 * stopped was lost. A claim the store cannot answer delivers the alert anyway (two deliveries beat none).
 * An instance that stops cleanly ({@link AlertWebhook.close}) gives up the leases of the alerts it had
 * not delivered yet, so an instance that raised them too delivers them at its next ask (≤ 5 s), where
 * until 2026-12-05 it waited for the lease's end (~3.4 min); killed, it cannot, and the lease lapses.
 * The shares in a `quota_threshold` alert's `detail.passed` are claimed with the alert once its own
 * claim is taken, leased and settled (or given up) with it: the POST leaves out those another instance
 * said, and keeps as an alert of its own one another instance is still saying (src/alerts/alert-claim.ts,
 * "Passed shares"; {@link AlertWebhook.claimPassed}).
 *
 * What became of each alert is counted by event and result ({@link AlertWebhook.deliveryCounts}), read by
 * `/metrics` as `switchyard_alert_deliveries_total` (src/http/metrics.ts): every alert published while a
 * webhook is set ends under one result, a clean stop included (the alerts still queued, kept for another
 * instance's lease, or in delivery then count as `dropped`, or `delivered` when a POST had succeeded;
 * until 2026-12-05 they were not counted at all).
 */
import type * as Fiber from "effect/Fiber";
import type * as Queue from "effect/Queue";
import type { AlertEvent, EventBus } from "../events/bus.ts";
import { loadEffect, type EffectModules } from "../memory/lazy-effect.ts";
import { scrubValue } from "../../pipeline/index.ts";
import type { ClaimAnswer } from "../store/shared.ts";
import { alertClaim, passedClaims, type AlertClaim, type AlertClaimer, type PassedClaim } from "./alert-claim.ts";

/**
 * Time allowed per POST, ms (5 s). An alert is a few hundred bytes of JSON that a working receiver
 * accepts in milliseconds; one that accepted the connection and has said nothing for 5 s is hung (a
 * service stuck behind a load balancer, a firewall dropping packets). Until 2026-12-05 it was 10 s, so
 * such a receiver held each of the 4 delivery slots for 10 tries × 10 s plus the backoff (~3.7 min) and
 * a burst of budget alerts held back an `account_locked` raised after it (newuser15's tryout, N5).
 */
export const DEFAULT_TRY_TIMEOUT_MS = 5_000;

/** How often a try in progress, or a wait between tries, checks whether the webhook URL changed, ms. */
const URL_POLL_MS = 250;

/** How long after another instance's lease ends an alert it refused is claimed again, ms. */
const RETAKE_AFTER_MS = 100;

/**
 * The longest an alert refused for another instance's lease waits before it asks again, ms: the holder
 * usually settles within a second (its first POST succeeded), and until a retake hears "done" the alert
 * holds one of the kept places (review17 R3: with the lease's whole 201.5 s an alert storm on a shared
 * store filled them and counted alerts the holder had delivered as dropped). A retake that still finds
 * the lease is kept again.
 */
const RETAKE_EVERY_MS = 5_000;

/** The JSON body POSTed per alert. */
export interface WebhookPayload {
  event: string;
  /** ISO-8601 UTC time of the alert (SPEC 9.7's `at`; kept as it was for the receivers that read it). */
  at: string;
  /**
   * The same time in ms since the epoch, as `GET /admin/api/alerts` and `GET /admin/api/events` give
   * `at`: a consumer of both compares the numbers (added 2026-12-05; before, only the ISO string).
   */
  at_ms: number;
  subject: string;
  detail: Record<string, unknown>;
}

/** Options of {@link AlertWebhook}. */
export interface WebhookOptions {
  /**
   * The webhook URL in force, re-read before every try (a config reload that changes it re-aims the alerts
   * already in delivery, and a try or wait in progress to the old URL ends within 250 ms); undefined = off.
   */
  url: () => string | undefined;
  /** Every secret the instance holds; scrubbed from payloads (none should be there). */
  secrets?: () => Iterable<string>;
  fetchImpl?: typeof fetch;
  /** Queue bound. Default 256. */
  capacity?: number;
  /** First retry delay, ms. Default 500. */
  baseDelayMs?: number;
  /** Longest delay between two tries, ms. Default 30 000. */
  maxDelayMs?: number;
  /** Tries per alert, the first included. Default 10. */
  attempts?: number;
  /** Alerts in delivery at once. Default 4. */
  concurrency?: number;
  /** Time allowed per POST, ms. Default {@link DEFAULT_TRY_TIMEOUT_MS} (5 000). */
  timeoutMs?: number;
  log?: (line: string) => void;
  /**
   * Claims alerts across instances (alert-claim.ts `claimAlertsIn`: a lease of the alert's claim, taken
   * before the first try and settled after the last). Omit on a store of one instance. Its calls may
   * reject (then the alert is delivered).
   */
  claim?: AlertClaimer;
  /**
   * With `claim`: how many other instances sharing the store run now (asked once, by a stop that drops
   * alerts, for its line: with none it says they are lost). Undefined, a rejection or no answer within
   * 2 s: not known, and the line says another instance delivers them only if one runs that raised them.
   */
  othersRunning?: () => Promise<number>;
  /** How long a claim's lease holds, ms. Default {@link defaultClaimLeaseMs} of these options (~3.4 min). */
  claimLeaseMs?: number;
  /** The longest an alert refused for another instance's lease waits before asking again, ms. Default {@link RETAKE_EVERY_MS} (5 s). */
  retakeEveryMs?: number;
}

/**
 * How long an instance's lease of an alert's claim holds by default, ms: every try at its longest
 * (`attempts` × `timeoutMs`), the waits between them ({@link retryDelays}) and 30 s more (defaults: 50 +
 * 121.5 + 30 = 201.5 s). Past it, an instance that was refused the alert delivers it.
 */
export function defaultClaimLeaseMs(opts: Pick<WebhookOptions, "baseDelayMs" | "maxDelayMs" | "attempts" | "timeoutMs"> = {}): number {
  const waits = retryDelays(opts).reduce((a, b) => a + b, 0);
  return Math.max(1, opts.attempts ?? 10) * (opts.timeoutMs ?? DEFAULT_TRY_TIMEOUT_MS) + waits + 30_000;
}

/**
 * What the webhook did with an alert, as `/metrics` counts it (`switchyard_alert_deliveries_total`'s
 * `result` label): `delivered` (a 2xx), `dropped` (the queue was full, Effect could not be loaded, the
 * receiver refused it with a 4xx other than 408/429, every try failed, or the webhook was removed
 * while it waited for its next try, or more alerts than the queue's bound waited for other instances'
 * leases), `claimed_elsewhere` (another instance on the shared store took it and finished with it:
 * delivered it, or ran out of tries; an alert kept while the other instance is still trying counts
 * nothing until then, and one taken over after that instance stopped counts as this instance's
 * delivery; so does a share of another alert's `passed` kept for another instance's lease, as an alert
 * of its own). `retried` counts tries, not alerts: one per failed try that is followed by another. A clean
 * stop counts what it ends ({@link AlertWebhook.close}): every alert still queued, kept or in delivery
 * as `dropped` (or `delivered` when its POST had succeeded).
 */
export type AlertDeliveryResult = "delivered" | "retried" | "dropped" | "claimed_elsewhere";

/** One count of {@link AlertWebhook.deliveryCounts}: alerts (or retries) of one event with one result. */
export interface AlertDeliveryCount {
  /** The alert's event (`account_locked`, `quota_threshold`, … SPEC 9.7). */
  event: string;
  result: AlertDeliveryResult;
  count: number;
}

/**
 * An alert waiting for delivery: its payload and, with {@link WebhookOptions.claim}, its claim and
 * whether another instance's lease refused it before (`retake`).
 */
interface Pending {
  payload: WebhookPayload;
  claim?: AlertClaim;
  /** With a claim: the claims of the shares in the payload's `detail.passed` (alert-claim.ts {@link passedClaims}). */
  passed?: PassedClaim[];
  /** In delivery: the claims of passed shares being taken, then those this instance holds (settled or given up with the alert's own). */
  passedTaking?: Promise<AlertClaim[]>;
  retake?: boolean;
  /** When the lease that last refused it ends, ms since the epoch on this instance's clock. */
  leaseEndsAt?: number;
  /** In delivery: the claim's take in flight or answered (what {@link AlertWebhook.close} reads to know whether this instance holds the lease). */
  taking?: Promise<ClaimAnswer>;
  /** In delivery: a POST of it was accepted (set before the try's promise settles, so a stop in between still knows). */
  posted?: boolean;
}

/** Why one try failed, and whether another may follow (connection error, timeout, 5xx, 408, 429). */
class DeliveryError {
  readonly _tag = "DeliveryError";
  constructor(
    readonly message: string,
    readonly retryable: boolean,
  ) {}
}

/**
 * The waits before each retry of a failed delivery, ms: `baseDelayMs` doubling, at most `maxDelayMs`,
 * `attempts - 1` of them (defaults: 500, 1000, …, 16000, then 30000 three times: 121.5 s in all): what
 * {@link retrySchedule} waits, written out (test/alerts/alerts.test.ts compares the two).
 */
export function retryDelays(opts: Pick<WebhookOptions, "baseDelayMs" | "maxDelayMs" | "attempts"> = {}): number[] {
  const base = opts.baseDelayMs ?? 500;
  const max = opts.maxDelayMs ?? 30_000;
  return Array.from({ length: Math.max(0, (opts.attempts ?? 10) - 1) }, (_, i) => Math.min(max, base * 2 ** i));
}

/**
 * The retry schedule of a failed delivery ({@link retryDelays} are its waits): `baseDelayMs` doubling
 * (`Schedule.exponential`), each wait at most `maxDelayMs` (the union with `Schedule.spaced`, which takes
 * the shorter wait), `attempts - 1` retries (`Schedule.recurs`), and only while the try's failure is
 * retryable (its input, a {@link DeliveryError}). No jitter: the waits are the documented ones, and one
 * instance's few alerts in delivery do not stampede a receiver.
 */
export function retrySchedule(E: Pick<EffectModules, "Schedule" | "Duration">, opts: Pick<WebhookOptions, "baseDelayMs" | "maxDelayMs" | "attempts"> = {}) {
  const { Schedule, Duration } = E;
  return Schedule.exponential(Duration.millis(opts.baseDelayMs ?? 500), 2).pipe(
    Schedule.union(Schedule.spaced(Duration.millis(opts.maxDelayMs ?? 30_000))),
    Schedule.intersect(Schedule.recurs(Math.max(0, (opts.attempts ?? 10) - 1))),
    Schedule.whileInput((e: { retryable: boolean }) => e.retryable),
  );
}

/** The payload of an alert event, scrubbed of every known secret. */
export function webhookPayload(e: AlertEvent, secrets: Iterable<string> = []): WebhookPayload {
  return scrubValue({ event: e.event, at: new Date(e.at).toISOString(), at_ms: e.at, subject: e.subject, detail: e.detail }, secrets);
}

/** `detail` with `passed` set to `shares` (ascending), or without it when none is left. */
function withPassed(detail: Record<string, unknown>, shares: number[]): Record<string, unknown> {
  const { passed: _, ...rest } = detail;
  return shares.length > 0 ? { ...rest, passed: shares } : rest;
}

/**
 * The payload of a share passed in `p` said as an alert of its own (another instance was delivering
 * it and may have died: {@link AlertWebhook}'s passed-share claims): `p` with `share` as its
 * `threshold`, no `passed` and no `exhausted` (a passed share is below the alert's, so below 1).
 */
function saidAlone(p: WebhookPayload, share: number): WebhookPayload {
  const { exhausted: _, ...detail } = withPassed(p.detail, []);
  return { ...p, detail: { ...detail, threshold: share } };
}

/** Delivers alerts from the bus to the webhook; see the module comment. */
export class AlertWebhook {
  /** Alerts dropped because the queue was full, or after every try failed. */
  dropped = 0;
  /** Alerts delivered (a 2xx answer). */
  delivered = 0;
  /** Alerts another instance claimed first and finished with (delivered, or out of tries). */
  claimedElsewhere = 0;
  /** Alerts kept while another instance's lease holds, by the timer that claims each again. */
  private readonly held = new Map<ReturnType<typeof setTimeout>, Pending>();
  /** Alerts taken from the queue whose delivery has not ended (counted): what a clean stop ends ({@link close}). */
  private readonly inDelivery = new Set<Pending>();
  /** Counts by event, then by result ({@link count}). */
  private readonly counts = new Map<string, Record<AlertDeliveryResult, number>>();
  /** The queue, its delivering fiber and Effect, once the first alert has started them. */
  private delivery?: { E: EffectModules; queue: Queue.Queue<Pending>; fiber: Fiber.RuntimeFiber<never, never> };
  /** Loading Effect and starting the delivery (from the first alert on). */
  private starting?: Promise<void>;
  /** Alerts published while {@link starting}: offered to the queue, in order, once it exists. */
  private early: Pending[] = [];
  private closed = false;
  /** Effect could not be loaded (not in the install): alerts are counted as dropped instead of waiting. */
  private unavailable = false;
  private readonly capacity: number;
  private readonly retakeEveryMs: number;
  private readonly unsubscribe: () => void;

  constructor(
    bus: EventBus,
    private readonly opts: WebhookOptions,
  ) {
    this.capacity = opts.capacity ?? 256;
    this.retakeEveryMs = opts.retakeEveryMs ?? RETAKE_EVERY_MS;
    this.unsubscribe = bus.subscribe((e) => {
      if (e.type !== "alert" || !opts.url()) return;
      const payload: Pending = { payload: webhookPayload(e, opts.secrets?.() ?? []) };
      if (opts.claim) {
        payload.claim = alertClaim(e);
        const passed = passedClaims(e);
        if (passed.length > 0) payload.passed = passed;
      }
      const d = this.delivery;
      if (d) {
        if (!d.E.Effect.runSync(d.E.Queue.offer(d.queue, payload))) this.count(e.event, "dropped");
        return;
      }
      // Same bound as the queue's while it is being made: the newest alert is dropped when full.
      if (this.unavailable || this.early.length >= this.capacity) this.count(e.event, "dropped");
      else this.early.push(payload);
      this.starting ??= this.start().catch((err) => {
        this.unavailable = true;
        for (const p of this.early) this.count(p.payload.event, "dropped");
        this.early = [];
        this.logLine({ level: "error", time: Date.now(), msg: "alert webhook unavailable: Effect could not be loaded", error: err instanceof Error ? err.message : String(err) });
      });
    }, ["alert"]);
  }

  /** Counts one `result` of an alert of `event` (and the totals {@link delivered}, {@link dropped}, {@link claimedElsewhere}). */
  private count(event: string, result: AlertDeliveryResult): void {
    let c = this.counts.get(event);
    if (c === undefined) this.counts.set(event, (c = { delivered: 0, retried: 0, dropped: 0, claimed_elsewhere: 0 }));
    c[result]++;
    if (result === "delivered") this.delivered++;
    else if (result === "dropped") this.dropped++;
    else if (result === "claimed_elsewhere") this.claimedElsewhere++;
  }

  /**
   * What became of the alerts since start, by event and {@link AlertDeliveryResult} (only counts above
   * zero), for `/metrics`. Events are SPEC 9.7's five, so the list stays short.
   */
  deliveryCounts(): AlertDeliveryCount[] {
    const out: AlertDeliveryCount[] = [];
    for (const [event, c] of this.counts) {
      for (const result of ["delivered", "retried", "dropped", "claimed_elsewhere"] as const) if (c[result] > 0) out.push({ event, result, count: c[result] });
    }
    return out;
  }

  private logLine(line: Record<string, unknown>): void {
    (this.opts.log ?? ((l: string) => console.error(l)))(JSON.stringify(line));
  }

  /** Loads Effect, makes the queue and its fiber, and hands them the alerts published meanwhile. */
  private async start(): Promise<void> {
    const E = await loadEffect();
    if (this.closed) return;
    const { Effect, Queue, Schedule, Duration, Option } = E;
    const opts = this.opts;
    const f = opts.fetchImpl ?? fetch;
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TRY_TIMEOUT_MS;
    const queue = Effect.runSync(Queue.dropping<Pending>(this.capacity));
    const waits = Schedule.delays(retrySchedule(E, opts)).pipe(Schedule.modifyDelay(() => Duration.zero));
    /** One POST to `url`; undefined when accepted, else why not. Aborted at once when the URL in force changes. */
    const tryOnce = async (url: string, p: WebhookPayload, signal: AbortSignal): Promise<DeliveryError | undefined> => {
      const moved = new AbortController();
      const watch = setInterval(() => opts.url() !== url && moved.abort(), URL_POLL_MS);
      try {
        const res = await f(url, {
          method: "POST",
          headers: { "content-type": "application/json", "user-agent": "switchyard-alerts" },
          body: JSON.stringify(p),
          signal: AbortSignal.any([signal, moved.signal, AbortSignal.timeout(timeoutMs)]),
        });
        void res.body?.cancel().catch(() => {});
        if (res.ok) return undefined;
        return new DeliveryError(`HTTP ${res.status}`, res.status >= 500 || res.status === 408 || res.status === 429);
      } catch (e) {
        if (signal.aborted) throw e;
        return new DeliveryError(moved.signal.aborted ? "the webhook URL changed during the try" : e instanceof Error ? e.message : String(e), true);
      } finally {
        clearInterval(watch);
      }
    };
    /** Succeeds once the webhook URL in force is no longer `url`, polled every {@link URL_POLL_MS}. */
    const urlMoved = (url: string) =>
      Effect.sync(() => opts.url() !== url).pipe(Effect.repeat({ schedule: Schedule.spaced(Duration.millis(URL_POLL_MS)), until: (moved) => moved }), Effect.asVoid);
    /**
     * Every try of one alert, each to the URL in force when it starts (a reload that fixes the URL re-aims
     * the alerts already in delivery; a wait between tries ends early when the URL changes), the waits
     * and their number the {@link retrySchedule}'s. "off" when the webhook was removed meanwhile (the
     * alert is not sent, as one raised while none is set); fails with the last try's error when the
     * schedule ends (out of tries, or a failure not worth retrying).
     */
    const tries = (item: Pending) =>
      Effect.gen(this, function* () {
        const p = item.payload;
        // The schedule's waits as its output, stepped by a driver that does not sleep them itself (a
        // zero delay): the wait below can then end early when the URL changes, the step still counted.
        const retries = yield* Schedule.driver(waits);
        for (let retry = false; ; retry = true) {
          const url = opts.url();
          if (!url) return "off" as const;
          if (retry) this.count(p.event, "retried");
          const failed = yield* Effect.tryPromise({
            try: (signal) =>
              tryOnce(url, p, signal).then((failed) => {
                if (!failed) item.posted = true;
                return failed;
              }),
            catch: (e) => new DeliveryError(e instanceof Error ? e.message : String(e), false),
          });
          if (!failed) return "delivered" as const;
          // None: no try is left, or the failure is not worth another
          const wait = yield* Effect.option(retries.next(failed));
          if (Option.isNone(wait)) return yield* Effect.fail(failed);
          yield* Effect.sleep(wait.value).pipe(Effect.raceFirst(urlMoved(url)));
        }
      });
    const claimer = opts.claim;
    const leaseMs = opts.claimLeaseMs ?? defaultClaimLeaseMs(opts);
    const cause = (e: { cause?: unknown; message: string }) => (e.cause instanceof Error ? e.cause.message : e.message);
    // What the store says of the alert's claim: a claim it cannot answer delivers the alert ("unanswered").
    // A retake the store cannot answer while the lease that refused it still runs is kept again: the
    // holder was delivering it, and a short outage must not make a second POST (it did until this
    // change: an outage within seconds of the alert delivered it twice). Past the lease's end it is
    // delivered: the holder may have stopped (at least once).
    const claimed = (item: Pending) =>
      Effect.tryPromise(() => (item.taking = claimer!.take(item.claim!, leaseMs, item.retake === true))).pipe(
        Effect.catchAll((e) =>
          Effect.sync(() => {
            const leaseLeft = item.retake && item.leaseEndsAt !== undefined ? item.leaseEndsAt - Date.now() : 0;
            if (leaseLeft > 0) {
              this.logLine({ level: "warn", time: Date.now(), msg: "alert claim failed (the shared store did not answer) while another instance's lease holds; asking again", error: cause(e) });
              return { taken: false, holder: "trying", retryInMs: leaseLeft } as const;
            }
            this.logLine({ level: "warn", time: Date.now(), msg: "alert claim failed (the shared store did not answer); delivering the alert", error: cause(e) });
            return "unanswered" as const;
          }),
        ),
      );
    // The tries are over (delivered, out of tries, or the webhook removed): the lease becomes the
    // alert's claim. Not when the delivery is interrupted (close): the lease then lapses and another
    // instance delivers the alert. A store that cannot answer leaves the lease to lapse (another
    // instance may then deliver the alert again).
    const settle = (c: AlertClaim, p: WebhookPayload) =>
      Effect.tryPromise(() => claimer!.settle(c)).pipe(
        Effect.catchAll((e) =>
          Effect.sync(() => this.logLine({ level: "warn", time: Date.now(), msg: "alert claim not settled (the shared store did not answer); another instance may deliver the alert again", event: p.event, subject: p.subject, error: cause(e) })),
        ),
      );
    /**
     * Every try of `p`, then `claim`'s lease settled (with a claim taken), then the alert counted under
     * its result: a count read by a test or a scrape means the claim is settled for the other instances.
     */
    const send = (item: Pending, claim?: AlertClaim) => {
      const p = item.payload;
      return tries(item).pipe(
        // "off": the webhook was removed while the alert waited for its next try; it is dropped (every
        // alert at the webhook ends under one result: review16 R8)
        Effect.map((r) => () => this.count(p.event, r === "delivered" ? "delivered" : "dropped")),
        Effect.catchAll((e) =>
          Effect.succeed(() => {
            this.count(p.event, "dropped");
            this.logLine({ level: "warn", time: Date.now(), msg: "alert webhook delivery failed; alert dropped", event: p.event, subject: p.subject, error: e.message });
          }),
        ),
        // counted and no longer in delivery in one step: a stop between the two cannot count it twice
        Effect.flatMap((record) =>
          (claim ? Effect.promise(async () => [claim, ...((await item.passedTaking) ?? [])]).pipe(Effect.flatMap((cs) => Effect.forEach(cs, (c) => settle(c, p), { discard: true }))) : Effect.void).pipe(
            Effect.zipRight(
              Effect.sync(() => {
                this.inDelivery.delete(item);
                record();
              }),
            ),
          ),
        ),
      );
    };
    const deliver = (item: Pending) => {
      const { payload: p, claim } = item;
      if (!opts.url()) return Effect.void;
      this.inDelivery.add(item);
      if (!claim || !claimer) return send(item);
      return claimed(item).pipe(
        Effect.flatMap((answer) => {
          if (answer === "unanswered") return send(item);
          // taken: the passed shares are claimed too, and those said elsewhere left out of the POST
          if (answer.taken) return (item.passed ? Effect.promise(() => (item.passedTaking = this.claimPassed(item, leaseMs))) : Effect.void).pipe(Effect.zipRight(Effect.suspend(() => send(item, claim))));
          this.inDelivery.delete(item);
          if (answer.holder === "trying") this.hold(item, answer.retryInMs);
          else this.count(p.event, "claimed_elsewhere");
          return Effect.void;
        }),
      );
    };
    // Up to `concurrency` deliveries at once: a permit is taken before the next alert, so the queue
    // keeps its bound; each delivery runs in a child fiber (interrupted with the loop at close).
    const permits = Effect.runSync(Effect.makeSemaphore(Math.max(1, opts.concurrency ?? 4)));
    const fiber = Effect.runFork(
      Effect.forever(
        permits.take(1).pipe(
          Effect.zipRight(Queue.take(queue)),
          Effect.flatMap((p) => Effect.fork(deliver(p).pipe(Effect.ensuring(permits.release(1))))),
        ),
      ),
    );
    for (const p of this.early) if (!Effect.runSync(Queue.offer(queue, p))) this.count(p.payload.event, "dropped");
    this.early = [];
    this.delivery = { E, queue, fiber };
  }

  /**
   * Keeps `item`, refused while another instance's lease holds, and offers it to the queue again
   * `retryInMs` (+ {@link RETAKE_AFTER_MS}) later, or {@link RETAKE_EVERY_MS} when that is sooner, to be
   * claimed with `retake`. As many are kept as the queue holds; one more is dropped.
   */
  private hold(item: Pending, retryInMs: number): void {
    // A "trying" answer heard while the webhook stops: no longer in delivery, so counted here (review18 R3).
    if (this.closed) {
      this.count(item.payload.event, "dropped");
      return;
    }
    if (this.held.size >= this.capacity) {
      this.count(item.payload.event, "dropped");
      return;
    }
    const leaseEndsAt = Date.now() + Math.max(0, retryInMs);
    const timer = setTimeout(() => {
      this.held.delete(timer);
      const d = this.delivery;
      if (!d || this.closed) return;
      const again: Pending = { payload: item.payload, claim: item.claim, passed: item.passed, retake: true, leaseEndsAt };
      if (!d.E.Effect.runSync(d.E.Queue.offer(d.queue, again))) this.count(item.payload.event, "dropped");
    }, Math.min(Math.max(0, retryInMs) + RETAKE_AFTER_MS, this.retakeEveryMs));
    timer.unref?.();
    this.held.set(timer, item);
  }

  /**
   * Claims the shares in `item`'s `passed` (its own claim taken; alert-claim.ts, "Passed shares"), each
   * leased for `leaseMs`, and leaves out of its payload those another instance holds: said (`done`), or
   * being said (`trying`: then kept as an alert of its own, {@link hold}, claimed again when that lease
   * ends, POSTed alone if its holder died). A claim the store cannot answer keeps its share in `passed`
   * (two sayings beat none). @returns the claims taken, settled or given up with the alert's own. Never rejects.
   */
  private async claimPassed(item: Pending, leaseMs: number): Promise<AlertClaim[]> {
    const claimer = this.opts.claim!;
    const passed = item.passed ?? [];
    const answers = await Promise.all(passed.map((s) => Promise.resolve().then(() => claimer.take(s.claim, leaseMs, false)).catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))));
    const kept: number[] = [];
    const taken: AlertClaim[] = [];
    answers.forEach((a, i) => {
      const s = passed[i]!;
      if (a instanceof Error || a.taken) {
        kept.push(s.share);
        if (a instanceof Error) this.logLine({ level: "warn", time: Date.now(), msg: "alert claim of a passed share failed (the shared store did not answer); delivering it in the alert's passed", event: item.payload.event, subject: item.payload.subject, share: s.share, error: a.message });
        else taken.push(s.claim);
      } else if (a.holder === "trying") this.hold({ payload: saidAlone(item.payload, s.share), claim: s.claim }, a.retryInMs);
    });
    if (kept.length < passed.length) item.payload = { ...item.payload, detail: withPassed(item.payload.detail, kept) };
    return taken;
  }

  /** Alerts waiting for delivery: queued, and kept while another instance's lease holds. */
  pending(): number {
    const d = this.delivery;
    return (d ? Math.max(0, d.E.Effect.runSync(d.E.Queue.size(d.queue))) : this.early.length) + this.held.size;
  }

  /**
   * Stops listening and delivering, a clean stop: every alert not delivered yet is counted `dropped`
   * (those still loading Effect, queued, kept for another instance's lease, or in delivery; one whose
   * POST had succeeded counts `delivered`), so the counts add up across a stop (until 2026-12-05 these
   * were counted nowhere). The leases this instance holds for alerts in delivery are given up
   * (`AlertClaimer.release`): an instance that raised the alert too and was refused by the lease delivers
   * it at its next ask (≤ `retakeEveryMs`, 5 s), not at the lease's end (~3.4 min), as before; the lease
   * of one whose POST succeeded is settled instead. A store that cannot answer leaves the lease to
   * lapse. Resolves once all that is done. When it dropped alerts it logs one `warn` line with their
   * number (`dropped`, and by event: `events`) and whether another instance can still deliver them
   * (with `claim`: one sharing the database that raised them too, if one is running; else they are
   * lost, and with `othersRunning` saying none runs the line says so; until 2026-12-06, later, the stop
   * said nothing of them).
   */
  async close(): Promise<void> {
    const before = new Map([...this.counts].map(([event, c]) => [event, c.dropped] as const));
    await this.end();
    const events: Record<string, number> = {};
    let dropped = 0;
    for (const [event, c] of this.counts) {
      const n = c.dropped - (before.get(event) ?? 0);
      if (n <= 0) continue;
      events[event] = n;
      dropped += n;
    }
    if (dropped === 0) return;
    const alerts = dropped === 1 ? "1 alert" : `${dropped} alerts`;
    const them = dropped === 1 ? "it" : "them";
    const others = this.opts.claim ? await this.othersRunning() : 0;
    const msg =
      others === 0
        ? `stopping: ${alerts} not delivered to the webhook are dropped (lost: no other instance ${this.opts.claim ? "sharing the database runs to deliver" : "delivers"} ${them})`
        : `stopping: ${alerts} not delivered to the webhook by this instance are dropped here; another instance sharing the database that raised ${them} too delivers ${them}${others === undefined ? " if one is running (" : ` (${others === 1 ? "1 other instance runs" : `${others} other instances run`}; `}this instance's leases are given up); otherwise ${dropped === 1 ? "it is" : "they are"} lost`;
    this.logLine({ level: "warn", time: Date.now(), msg, dropped, events });
  }

  /** {@link WebhookOptions.othersRunning}'s answer within 2 s; undefined when it has none, rejects or is late. Never throws. */
  private async othersRunning(): Promise<number | undefined> {
    const ask = this.opts.othersRunning;
    if (!ask) return undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), 2_000)));
    try {
      return await Promise.race([ask().catch(() => undefined), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** {@link close} but its log line. */
  private async end(): Promise<void> {
    this.unsubscribe();
    this.closed = true;
    for (const p of this.early) this.count(p.payload.event, "dropped");
    this.early = [];
    for (const [t, p] of this.held) {
      clearTimeout(t);
      this.count(p.payload.event, "dropped");
    }
    this.held.clear();
    await this.starting;
    const d = this.delivery;
    if (!d) return;
    // The deliveries in progress are interrupted with the loop (their fibers are its children).
    await d.E.Effect.runPromise(d.E.Fiber.interrupt(d.fiber));
    const queued = d.E.Effect.runSync(d.E.Queue.takeAll(d.queue));
    for (const p of queued) this.count(p.payload.event, "dropped");
    await d.E.Effect.runPromise(d.E.Queue.shutdown(d.queue));
    const ended = [...this.inDelivery];
    this.inDelivery.clear();
    await Promise.all(ended.map((p) => this.endDelivery(p)));
  }

  /**
   * One alert whose delivery a stop interrupted: counted (`delivered` when a POST of it succeeded, else
   * `dropped`), and the lease this instance holds for it settled or given up.
   */
  private async endDelivery(p: Pending): Promise<void> {
    this.count(p.payload.event, p.posted ? "delivered" : "dropped");
    const answer = p.taking && (await p.taking.catch(() => undefined));
    const claimer = this.opts.claim;
    if (!answer?.taken || !claimer || !p.claim) return;
    try {
      for (const c of [p.claim, ...((await p.passedTaking) ?? [])]) {
        if (p.posted) await claimer.settle(c);
        else await claimer.release?.(c);
      }
    } catch (e) {
      this.logLine({ level: "warn", time: Date.now(), msg: "alert lease not given up at stop (the shared store did not answer); another instance delivers the alert once the lease ends", event: p.payload.event, subject: p.payload.subject, error: e instanceof Error ? e.message : String(e) });
    }
  }
}
