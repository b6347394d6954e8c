/**
 * The shared deadline sweep (pipeline/deadline-sweep.ts): the body, header and idle timeouts are
 * deadlines on one list rather than a timer each. What callers rely on: a deadline never comes due
 * before its length, does come due (once) after it, a renewed one counts again from the renewal, a
 * disarmed one never fires, and one that throws does not keep the others from theirs.
 */
import { describe, expect, test } from "bun:test";
import { armedDeadlines, CallbackDeadline, Deadline, sweepPeriodMs } from "../../pipeline/deadline-sweep.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `done()` (polling every 5 ms), at most `ms`; returns whether it became true. */
async function until(done: () => boolean, ms = 10_000): Promise<boolean> {
  const end = performance.now() + ms;
  while (!done() && performance.now() < end) await sleep(5);
  return done();
}

describe("deadline sweep", () => {
  test("a deadline comes due once, not before its length, and leaves the list", async () => {
    const fired: number[] = [];
    const armedAt = performance.now();
    const d = new CallbackDeadline(() => fired.push(performance.now() - armedAt));
    d.arm(80);
    expect(d.armed).toBe(true);
    expect(await until(() => fired.length > 0)).toBe(true);
    await sleep(150);
    expect(fired.length).toBe(1);
    expect(fired[0]!).toBeGreaterThanOrEqual(80);
    expect(d.armed).toBe(false);
  });

  test("a disarmed deadline never fires; disarm is idempotent", async () => {
    let fired = 0;
    const d = new CallbackDeadline(() => fired++);
    const witness = new CallbackDeadline(() => {});
    d.arm(40);
    witness.arm(200);
    d.disarm();
    d.disarm();
    // the witness's expiry proves the sweep ran past the disarmed one's due time
    expect(await until(() => !witness.armed)).toBe(true);
    expect(fired).toBe(0);
  });

  test("renew counts the length again from now (a read that arrived), and re-arming moves the due time", async () => {
    /** How long after the last renewal each expiry came (ms). */
    const sinceRenewal: number[] = [];
    let renewedAt = 0;
    const d = new CallbackDeadline(() => sinceRenewal.push(performance.now() - renewedAt));
    d.arm(120);
    renewedAt = performance.now();
    const start = renewedAt;
    // renewed every 20 ms for ~400 ms: it comes due only if a renewal was late by more than 120 ms
    while (performance.now() - start < 400 && d.armed) {
      await sleep(20);
      d.renew();
      renewedAt = performance.now();
    }
    for (const ms of sinceRenewal) expect(ms).toBeGreaterThanOrEqual(119); // renewedAt is read just after renew()
    d.arm(60);
    renewedAt = performance.now();
    expect(await until(() => !d.armed)).toBe(true);
    expect(sinceRenewal.at(-1)!).toBeGreaterThanOrEqual(59);
  });

  test("an expiry that throws does not keep another due deadline from its own", async () => {
    class Throws extends Deadline {
      expire(): void {
        throw new Error("boom");
      }
    }
    let other = 0;
    const t = new Throws();
    const d = new CallbackDeadline(() => other++);
    d.arm(30);
    t.arm(30);
    expect(await until(() => other > 0)).toBe(true);
    expect(t.armed).toBe(false);
    expect(armedDeadlines()).toBe(0);
  });

  test("a deadline re-armed from its own expiry is on the list again", async () => {
    let fired = 0;
    const d: CallbackDeadline = new CallbackDeadline(() => {
      fired++;
      if (fired === 1) d.arm(30);
    });
    d.arm(30);
    expect(await until(() => fired === 2)).toBe(true);
    expect(armedDeadlines()).toBe(0);
  });
});

describe("deadline sweep period", () => {
  test("a short deadline speeds the sweep up; once it is gone the sweep slows down again", async () => {
    const long = new CallbackDeadline(() => {});
    long.arm(60_000);
    const short = new CallbackDeadline(() => {});
    short.arm(40);
    expect(sweepPeriodMs()).toBe(10);
    expect(await until(() => !short.armed)).toBe(true);
    // the next pass sees only the 60 s deadline: a quarter of it, at most 250 ms
    expect(await until(() => sweepPeriodMs() === 250)).toBe(true);
    long.disarm();
  });
});

describe("deadline sweep and expiries that change the list (review19 R3)", () => {
  test("a deadline disarmed by another's expiry in the same pass does not fire, and the pass goes on to the rest", async () => {
    const fired: string[] = [];
    const named = (name: string, then?: () => void) =>
      new CallbackDeadline(() => {
        fired.push(name);
        then?.();
      });
    const b = named("b");
    const c = named("c");
    const a = named("a", () => {
      b.disarm();
      c.disarm();
    });
    const d = named("d");
    // The list runs from the last armed: a, c, b, d. All due at the same instant, so one pass sees them.
    for (const x of [d, b, c, a]) x.arm(30);
    const dueAt = Math.max(a.dueAt, b.dueAt, c.dueAt, d.dueAt);
    for (const x of [a, b, c, d]) x.dueAt = dueAt;
    expect(await until(() => !d.armed)).toBe(true);
    await sleep(100);
    expect(fired).toEqual(["a", "d"]);
    expect(armedDeadlines()).toBe(0);
  });
});
