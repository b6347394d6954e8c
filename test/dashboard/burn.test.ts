import { describe, expect, test } from "bun:test";
import { currentWindowSamples, estimateBurn, usedShare, windowLengthMs } from "../../src/dashboard/burn.ts";

const H = 3_600_000;
const M = 60_000;
const now = Date.UTC(2026, 11, 1, 12, 0, 0);

describe("windowLengthMs", () => {
  test("reads the length from the names providers use", () => {
    expect(windowLengthMs("5h")).toBe(5 * H);
    expect(windowLengthMs("7d")).toBe(7 * 24 * H);
    expect(windowLengthMs("7d_opus")).toBe(7 * 24 * H);
    expect(windowLengthMs("30m")).toBe(30 * M);
    expect(windowLengthMs("weekly")).toBe(7 * 24 * H);
    expect(windowLengthMs("requests")).toBeUndefined();
    expect(windowLengthMs("primary")).toBeUndefined();
    expect(windowLengthMs("5hours")).toBeUndefined();
  });
});

describe("estimateBurn", () => {
  test("window average: 40 % used 2 h into a 5 h window burns 20 %/h and runs out 3 h from now, before the reset", () => {
    const e = estimateBurn({ now, used: 0.4, resetAt: now + 3 * H, windowMs: 5 * H });
    expect(e.basis).toBe("window_average");
    expect(e.ratePerHour).toBeCloseTo(0.2, 10);
    // 60 % left at 20 %/h = 3 h: exactly the reset, which counts as lasting.
    expect(e.verdict).toBe("lasts");
    const f = estimateBurn({ now, used: 0.5, resetAt: now + 3 * H, windowMs: 5 * H });
    expect(f.verdict).toBe("runs_out");
    expect(f.ratePerHour).toBeCloseTo(0.25, 10);
    expect(f.exhaustAt).toBe(now + 2 * H);
  });

  test("observed readings win over the window average and ignore readings of an earlier window", () => {
    const samples = [
      { at: now - 50 * M, used: 0.9 }, // earlier window (use dropped after it)
      { at: now - 30 * M, used: 0.1 },
      { at: now - 20 * M, used: 0.2 },
      { at: now - 10 * M, used: 0.3 },
      { at: now, used: 0.4 },
    ];
    const e = estimateBurn({ now, used: 0.4, resetAt: now + 4 * H, windowMs: 5 * H, samples });
    expect(e.basis).toBe("observed");
    expect(e.ratePerHour).toBeCloseTo(0.6, 10); // 10 % per 10 min
    expect(e.verdict).toBe("runs_out");
    expect(e.exhaustAt).toBe(now + 60 * M);
  });

  test("readings spanning less than a minute are not trusted; without a window length nothing is known", () => {
    const samples = [
      { at: now - 30_000, used: 0.1 },
      { at: now, used: 0.2 },
    ];
    expect(estimateBurn({ now, used: 0.2, samples })).toEqual({ verdict: "unknown" });
    expect(estimateBurn({ now, used: 0.2, resetAt: now + H })).toEqual({ verdict: "unknown" });
  });

  test("a window that just started has no trusted average", () => {
    expect(estimateBurn({ now, used: 0.05, resetAt: now + 5 * H - 2 * M, windowMs: 5 * H }).verdict).toBe("unknown");
  });

  test("flat readings are idle; a full window is exhausted", () => {
    const samples = [
      { at: now - 10 * M, used: 0.3 },
      { at: now, used: 0.3 },
    ];
    expect(estimateBurn({ now, used: 0.3, samples })).toEqual({ verdict: "idle", ratePerHour: 0, basis: "observed" });
    expect(estimateBurn({ now, used: 1, resetAt: now + H, windowMs: 5 * H })).toEqual({ verdict: "exhausted" });
  });

  test("without a reset time a growing window runs out", () => {
    const samples = [
      { at: now - 20 * M, used: 0.5 },
      { at: now, used: 0.6 },
    ];
    const e = estimateBurn({ now, used: 0.6, samples });
    expect(e.verdict).toBe("runs_out");
    expect(e.exhaustAt).toBe(now + 80 * M);
  });
});

describe("currentWindowSamples and usedShare", () => {
  test("keeps readings after the last drop and inside the window, sorted", () => {
    const s = currentWindowSamples(
      [
        { at: 5, used: 0.2 },
        { at: 1, used: 0.5 },
        { at: 3, used: 0.1 },
        { at: 0, used: 0.05 },
      ],
      1,
    );
    expect(s).toEqual([
      { at: 3, used: 0.1 },
      { at: 5, used: 0.2 },
    ]);
  });

  test("reads a percentage, else remaining over limit", () => {
    expect(usedShare({ usedPercent: 26 })).toBeCloseTo(0.26, 10);
    expect(usedShare({ remaining: 750, limit: 1000 })).toBeCloseTo(0.25, 10);
    expect(usedShare({ remaining: 5 })).toBeUndefined();
  });
});
