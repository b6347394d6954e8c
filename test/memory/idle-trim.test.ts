/**
 * The idle memory trim (src/memory/idle-trim.ts, issue 17): when it trims and when it must not. The
 * clock and the trim are injected and `check` is called directly, so nothing here depends on timing.
 */
import { expect, test } from "bun:test";
import { IDLE_TRIM_MS, IdleTrim, idleTrimMsFromEnv } from "../../src/memory/idle-trim.ts";

function harness(idleMs?: number) {
  const state = { now: 1_000_000, inflight: 0, trims: 0 };
  const trim = new IdleTrim({ idleMs, now: () => state.now, inflight: () => state.inflight, trim: () => void state.trims++, checkEveryMs: 3_600_000 });
  return { state, trim };
}

test("trims once after start when nothing comes, and not again until a request came", () => {
  const { state, trim } = harness();
  try {
    state.now += IDLE_TRIM_MS - 1;
    trim.check();
    expect(state.trims).toBe(0);
    state.now += 1;
    trim.check();
    expect(state.trims).toBe(1);
    state.now += 10 * IDLE_TRIM_MS;
    trim.check();
    expect(state.trims).toBe(1);
  } finally {
    trim.stop();
  }
});

test("a request restarts the idle time; the trim waits for the last stream to end", () => {
  const { state, trim } = harness(1000);
  try {
    state.now += 5000;
    trim.check();
    expect(state.trims).toBe(1);
    trim.activity();
    state.inflight = 1;
    state.now += 999;
    trim.check();
    expect(state.trims).toBe(1);
    state.now += 60_000; // a long stream: idle since its start, but still in flight
    trim.check();
    expect(state.trims).toBe(1);
    state.inflight = 0;
    trim.check();
    expect(state.trims).toBe(2);
    expect(trim.trims).toBe(2);
  } finally {
    trim.stop();
  }
});

test("the default trim is Bun.shrink and runs without throwing", () => {
  const t = new IdleTrim({ idleMs: 0, now: () => 0, inflight: () => 0, checkEveryMs: 3_600_000 });
  try {
    t.check();
    expect(t.trims).toBe(1);
  } finally {
    t.stop();
  }
});

test("SWITCHYARD_IDLE_TRIM_MS sets the idle time when it is a whole number of ms (0: off); anything else keeps 30 s", () => {
  expect(idleTrimMsFromEnv({})).toBe(IDLE_TRIM_MS);
  expect(idleTrimMsFromEnv({ SWITCHYARD_IDLE_TRIM_MS: "1500" })).toBe(1500);
  expect(idleTrimMsFromEnv({ SWITCHYARD_IDLE_TRIM_MS: "0" })).toBe(0);
  for (const bad of ["", "-5", "1.5", "soon", "1e3"]) expect(idleTrimMsFromEnv({ SWITCHYARD_IDLE_TRIM_MS: bad })).toBe(IDLE_TRIM_MS);
});
