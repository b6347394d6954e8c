/**
 * The lines a stop writes (src/log-lines.ts; src/main.ts writes them on stderr beside "shutting down"):
 * the closing `stopped` line of every stop (try22 P8), a second signal's line saying only what applies
 * to the requests still open (try22 P5), a third signal's line counting the requests whose log lines and
 * usage rows may be lost (try22 P3), the outage stop's line naming what ended its retries (try22 P5), and
 * that line counting as lost the key budget use a store closing already could not take.
 */
import { describe, expect, test } from "bun:test";
import { secondSignalLine, stoppedLine, thirdSignalLine, unwrittenAtCloseLine } from "../src/log-lines.ts";
import { SharedKeyCounters } from "../src/limits/shared-counters.ts";
import { stopGateway } from "../src/stop-gateway.ts";
import { idleStopParts } from "./support/stop-parts.ts";
import type { Store } from "../src/store/types.ts";

const progress = (inflightAtStart: number, open: { requests: number; streams: number }, more: { endedAtGraceEnd?: number; lastUsageRows?: number } = {}) => ({
  startedAt: 1_000_000,
  inflightAtStart,
  open: () => open,
  ...more,
});

describe("the closing line of a stop", () => {
  test("a clean stop: info, exit 0, how long, how the requests in flight ended, the last flush's rows", () => {
    const line = JSON.parse(stoppedLine(progress(7, { requests: 0, streams: 0 }, { endedAtGraceEnd: 2, lastUsageRows: 7 }), 0, undefined, 1_008_090));
    expect(line).toMatchObject({ level: "info", exitCode: 0, ms: 8090, inflightAtStart: 7, finishedInGrace: 5, endedAtGraceEnd: 2, lastFlushUsageRows: 7 });
    expect(line.msg).toBe(
      "stopped: exit 0 after 8.1 s; of 7 requests in flight at its start, 5 finished within the grace period and 2 were ended at its end (a stream with its in-band error, a request still waiting on its upstream with a 503); the last flush had 7 usage rows to write",
    );
  });

  test("nothing in flight; a stop a second signal ended early says so, warn, its exit code", () => {
    expect(JSON.parse(stoppedLine(progress(0, { requests: 0, streams: 0 }, { endedAtGraceEnd: 0, lastUsageRows: 0 }), 0, undefined, 1_000_050)).msg).toBe(
      "stopped: exit 0 after 0.1 s; no request was in flight; the last flush had 0 usage rows to write",
    );
    const forced = JSON.parse(stoppedLine(progress(1, { requests: 0, streams: 0 }, { endedAtGraceEnd: 1, lastUsageRows: 1 }), 143, "SIGTERM", 1_002_200));
    expect(forced).toMatchObject({ level: "warn", signal: "SIGTERM", exitCode: 143, endedAtGraceEnd: 1, finishedInGrace: 0 });
    expect(forced.msg).toStartWith("stopped early by a second SIGTERM: exit 143 after 2.2 s; of 1 request in flight at its start, 0 finished within the grace period and 1 was ended");
  });
});

describe("a second signal's line says only what applies", () => {
  test("no request open: no word of streams or 503s", () => {
    const line = JSON.parse(secondSignalLine("SIGTERM", { requests: 0, streams: 0 }, 1));
    expect(line.msg).toBe("second SIGTERM during the shutdown grace period: ending it now; no request is still open; a third signal exits at once");
    expect(line.inflight).toBe(0);
  });

  test("streams and requests waiting on their upstream, each counted", () => {
    expect(JSON.parse(secondSignalLine("SIGINT", { requests: 1, streams: 1 }, 1)).msg).toBe(
      "second SIGINT during the shutdown grace period: ending it now; a stream still open ends with its in-band error; a third signal exits at once",
    );
    expect(JSON.parse(secondSignalLine("SIGINT", { requests: 5, streams: 2 }, 1)).msg).toBe(
      "second SIGINT during the shutdown grace period: ending it now; 2 streams still open end with their in-band error and 3 requests still waiting on their upstream get a 503; a third signal exits at once",
    );
  });
});

test("a third signal's line counts the requests answered since the stop began, which may have no log line or usage row", () => {
  const line = JSON.parse(thirdSignalLine("SIGTERM", 143, progress(7, { requests: 1, streams: 1 }), 1));
  expect(line).toMatchObject({ level: "warn", answeredSinceStop: 6, inflight: 1 });
  expect(line.msg).toBe(
    "third signal (SIGTERM) during the shutdown: exit 143 now, without waiting for the last writes: the 6 requests answered since the stop began (and any answered just before it) may have no log line or usage row, and 1 request still open is cut off",
  );
});

describe("the outage stop's line names what ended its retries", () => {
  const store = { usage: 0, traces: 0, state: 0, kept: { file: "/d/unwritten-rows.jsonl", usage: 7, traces: 7, state: 2 } };
  test("the grace period", () => {
    const lines: string[] = [];
    unwrittenAtCloseLine({ ...store, usage: 1 }, 2, 1, (l) => lines.push(l));
    expect(JSON.parse(lines[0]!).msg).toContain("were not written within the shutdown grace period (server.shutdown_grace_ms) and are lost");
  });
  test("key budget use kept in the file is said to be kept, not lost: a warn line, exit 0; the rpm/tpm minute windows not reported are said, a warn line all the same (they lapse); budget windows the file could not keep are lost", () => {
    const lines: string[] = [];
    const keptUse = { usage: 0, traces: 0, state: 0, keyUse: 0, kept: { file: "/d/unwritten-rows.jsonl", usage: 3, traces: 3, state: 0, keyUse: 2 } };
    expect(unwrittenAtCloseLine(keptUse, 0, 1, (l) => lines.push(l))).toBeUndefined();
    const warn = JSON.parse(lines[0]!);
    expect(warn).toMatchObject({ level: "warn", keyLimitWindows: 0, keptKeyLimitWindows: 2, keptUsage: 3 });
    expect(warn.msg).toBe(
      "stopping while the database is away: 3 usage rows, 3 route traces, 0 routing/budget state changes and the key budget use of 2 windows were not written within the shutdown grace period (server.shutdown_grace_ms) and are kept in /d/unwritten-rows.jsonl, which the next start with this data directory writes to the database (counting the budget use back into each window still open then); nothing is lost",
    );
    // the team-operator tryout (session 37): every row kept, only the rpm/tpm use not reported, and the stop exited 1
    expect(unwrittenAtCloseLine(keptUse, 1, 1, (l) => lines.push(l))).toBeUndefined();
    const minute = JSON.parse(lines[1]!);
    expect(minute).toMatchObject({ level: "warn", keyLimitWindows: 1, keptKeyLimitWindows: 2 });
    expect(minute.msg).toBe(
      "stopping while the database is away: 3 usage rows, 3 route traces, 0 routing/budget state changes and the key budget use of 2 windows were not written within the shutdown grace period (server.shutdown_grace_ms) and are kept in /d/unwritten-rows.jsonl, which the next start with this data directory writes to the database (counting the budget use back into each window still open then); the rpm/tpm use of 1 minute windows was not reported (not kept: a minute window lapses within a minute); nothing else is lost",
    );
    // nothing else unwritten at all: the same warning
    expect(unwrittenAtCloseLine({ usage: 0, traces: 0, state: 0 }, 2, 1, (l) => lines.push(l))).toBeUndefined();
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({
      level: "warn",
      msg: "stopping while the database is away: the rpm/tpm use of 2 minute windows was not reported within the shutdown grace period (server.shutdown_grace_ms) (not kept: a minute window lapses within a minute); nothing else is lost",
    });
    // with something lost besides: the error line names the minute windows too
    expect(unwrittenAtCloseLine({ ...keptUse, usage: 1 }, 1, 1, (l) => lines.push(l))).toBeDefined();
    const both = JSON.parse(lines.at(-1)!);
    expect(both).toMatchObject({ level: "error", usage: 1, keyLimitWindows: 1 });
    expect(both.msg).toContain("and the key-limit use of 1 windows (1 rpm/tpm minute windows, not kept: they lapse within a minute) were not written");
    expect(unwrittenAtCloseLine({ usage: 3, traces: 3, state: 0, keyUse: 2 }, 0, 1, (l) => lines.push(l))).toBeDefined();
    const unkept = JSON.parse(lines.at(-1)!);
    expect(unkept).toMatchObject({ level: "error", keyLimitWindows: 2 });
    expect(unkept.msg).toContain("the key-limit use of 2 windows (2 budget windows that could not be kept) were not written");
  });
  test("a second signal (before: the grace period, which had not ended)", () => {
    const lines: string[] = [];
    expect(unwrittenAtCloseLine({ ...store, usage: 1 }, 2, 1, (l) => lines.push(l), true)).toBeDefined();
    unwrittenAtCloseLine({ ...store, kept: store.kept }, 0, 1, (l) => lines.push(l), true);
    for (const l of lines) {
      expect(JSON.parse(l).msg).toContain("were not written before a second signal ended the stop and are");
      expect(JSON.parse(l).msg).not.toContain("grace period");
    }
  });
});

describe("a stop whose store can no longer take the key budget use the key counters could not report", () => {
  test("that use is counted lost in the outage stop's line (an error line; the stop resolves false), not silently ignored", async () => {
    const use = (name: string) => ({ name, windowStart: 0, windowEnd: 3_600_000, pending: false, used: 50, reported: 10 });
    // the leased key counters, which could report neither the budgets' use nor one rpm minute window's
    const keyCounters = Object.create(SharedKeyCounters.prototype) as SharedKeyCounters;
    keyCounters.close = async () => ({ budgets: [use("key:a:budget:5h:tokens"), use("key:b:budget:5h:usd")], minuteWindows: 1 });
    // a store closing already: it takes no more use (and everything else it had was written)
    const store = { keepUnreportedUse: () => false, flush: async () => {}, close: async () => undefined, stats: () => ({ pendingUsage: 0 }) } as unknown as Store;
    const lines: string[] = [];
    const parts = idleStopParts(lines, { keyCounters, store });
    expect(await stopGateway(parts, 0, () => false)).toBe(false);
    expect(lines).toHaveLength(1);
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: "error", usage: 0, traces: 0, state: 0, keyLimitWindows: 3 });
    expect(line.msg).toContain("the key-limit use of 3 windows (1 rpm/tpm minute windows, not kept: they lapse within a minute; 2 budget windows that could not be kept) were not written");
  });
});

describe("account state changes lost before the stop are said as what happened, apart from those still on their way at it", () => {
  test("rejected by the database earlier, with one still on its way at the stop: each said as it happened, and the total", () => {
    const lines: string[] = [];
    const store = { usage: 0, traces: 0, state: 1, while: "account state writes were still on their way", earlierState: { rejected: 2, droppedAtCap: 0 } };
    expect(unwrittenAtCloseLine(store, 0, 1, (l) => lines.push(l))).toBeDefined();
    expect(JSON.parse(lines[0]!)).toEqual({
      level: "error",
      time: 1,
      msg: "stopping while account state writes were still on their way: 0 usage rows, 0 route traces, 1 routing/budget state changes and the key-limit use of 0 windows were not written at the stop and are lost; before, 2 account state changes rejected earlier (each said in its error line then) are lost too: 3 routing/budget state changes lost in all",
      usage: 0,
      traces: 0,
      state: 1,
      keyLimitWindows: 0,
      rejectedState: 2,
      droppedState: 0,
      lostState: 3,
    });
  });
  test("the embedded store's writes dropped at its cap, nothing else lost: not said to be unwritten at the stop", () => {
    const lines: string[] = [];
    expect(unwrittenAtCloseLine({ usage: 0, traces: 0, state: 0, earlierState: { rejected: 0, droppedAtCap: 4 } }, 0, 1, (l) => lines.push(l))).toBeDefined();
    const line = JSON.parse(lines[0]!);
    expect(line).toMatchObject({ level: "error", state: 0, rejectedState: 0, droppedState: 4, lostState: 4 });
    expect(line.msg).toBe("stopping: 4 account state changes dropped earlier at the cap on writes waiting while the store refused them are lost: 4 routing/budget state changes lost in all; the rest was written");
  });
  test("rows refused at the store's cap and state changes rejected earlier, in one sentence", () => {
    const lines: string[] = [];
    const refused = { usage: 5, traces: 1, while: "at the store's cap" };
    unwrittenAtCloseLine({ usage: 0, traces: 0, state: 0, refused, earlierState: { rejected: 1, droppedAtCap: 0 } }, 0, 1, (l) => lines.push(l));
    expect(JSON.parse(lines[0]!).msg).toBe("stopping: 5 usage rows and 1 route traces refused at the store's cap, and 1 account state changes rejected earlier (each said in its error line then) are lost: 5 usage rows and 1 route traces, and 1 routing/budget state changes lost in all; the rest was written");
  });
});
