/**
 * Where a lane misses its CPU target, which budget rows hold the miss and why they do not go lower in
 * Bun (issue 17: "where a target is missed, the budget table says which row holds it and why it cannot
 * go lower in Bun"). scripts/bench-budget.ts prints the table this module builds under its budget table.
 *
 * Each row's floor is a claim with a source: the floor in Bun (scripts/bench-floor.ts, whose rungs are
 * minimal Bun servers doing only the SPEC's mandatory work; its table in docs/performance.md gives each
 * rung's cost over the wire) or a numbered item of docs/performance.md. A row that no rung does is
 * switchyard's own feature code: its floor is not Bun's, and the text says which feature it pays for.
 */

/**
 * The budget row that is not measured in process: what switchyard pays over the wire above the raw pipe
 * (switchyard − raw CPU µs per request in the bench file) minus its in-process cost above the in-process
 * raw pipe. With it the rows add up to what the bench measured; it is charged to the lane's allowance.
 */
export const WIRE_ROW = "over the wire, not seen in process";

/**
 * {@link WIRE_ROW}'s part that the floor in Bun pays too: (the floor's top rung − the raw pipe, CPU µs per
 * request over the wire, from a scripts/bench-floor.ts JSON file) − (the same two in process,
 * scripts/lib/budget-measure.ts), within [0, the whole row]. What a Bun gateway doing only the SPEC's
 * mandatory work pays for its server, sockets and fetch beyond what its in-process run shows.
 */
export const WIRE_FLOOR_ROW = `${WIRE_ROW}: what the floor's top rung pays too (Bun's server, sockets and fetch for the mandatory work)`;

/** {@link WIRE_ROW} minus {@link WIRE_FLOOR_ROW}: what switchyard pays over the wire that the floor does not. */
export const WIRE_OWN_ROW = `${WIRE_ROW}: switchyard's own`;

/** One budget row's floor: the floor-ladder rung that does the same work (or none), and why. */
export type RowFloor = {
  /** "rung N" of scripts/lib/floor-server.ts, "harness", "no rung" (switchyard's own code), or "over the wire only" ({@link WIRE_ROW}; its parts say so too). */
  rung: string;
  /** Why the row does not go lower in Bun, with its source (a SPEC id, a docs/performance.md item). */
  why: string;
  /**
   * True when what the row pays for is switchyard's own feature code (keys, routing, fallback, affinity,
   * accounting, events, the gateway's and the app's wrappers, the stages' cold code), not a cost Bun
   * imposes: the missed table says "feature code, not a Bun limit" before its reason.
   */
  feature?: true;
};

/**
 * Every budget row's floor, keyed by the row's name in scripts/bench-budget.ts (which checks that each
 * of its rows has one, so a new row cannot be printed without its reason).
 */
export const ROW_FLOORS: Record<string, RowFloor> = {
  "HTTP framework dispatch": { rung: "rung 5", why: "Elysia hands static routes to Bun's native router already; since item 131 the static /v1 POST routes are Bun.serve routes of their own (Elysia compiles every route with its onRequest hook around it: ~1 µs in a loop, several in the running server), and the stack's framework is Elysia for the rest" },
  "body read and JSON parse": { rung: "rung 1", why: "Bun's native body read and JSON.parse of the client's body: routing needs its model and stream flag (R-2, G-4); both are native code" },
  guard: { rung: "rung 1 (peer check); no rung for keys", why: "client keys, their limits and the depth bound (G-1, G-2, 9.6, item 55) are switchyard's own features: lower only by doing less per request", feature: true },
  "resolve/order/pick": { rung: "no rung", why: "routing over real accounts and combos (R-2…R-4, section 5) is switchyard's own feature code", feature: true },
  translate: { rung: "rung 6 (translated lanes)", why: "the request rebuilt in the upstream's format and serialised (F-2); on native lanes the client's bytes are forwarded and this row is noise" },
  "executor call setup and abort wiring": { rung: "rung 2", why: "an AbortController per call wired to the client's signal and a header timer (6.3, 6.4): the floor pays the same primitives" },
  "provider executor (upstream URL, headers, fetch call)": { rung: "rung 2", why: "the upstream URL, credential and headers, and Bun's fetch call: the floor's rung 2 makes the same call; a plain header record instead of a Headers object measured ~1.5 µs less in process and nothing over the wire (item 93, tried and dropped)" },
  "in-process upstream reply (harness; the raw pipe pays it too)": { rung: "harness", why: "the benchmark's own upstream; the raw pipe pays it as well (target 0)" },
  "reply driver (tap / re-translate)": { rung: "rung 3 (tap), rung 6 (re-translate)", why: "every event seen for usage, stop and in-band errors (O-1, 6.4), and on translated lanes parsed and re-encoded; this design costs ~6 µs per stream + ~340 ns per delta with no step over ~1 µs (item 109)" },
  "commit point and JS reply stream": { rung: "rung 3", why: "the peek before the status (R-8) and the reply through a JS ReadableStream so a broken stream can end with the format's in-band error (6.4); Bun's native body hand-off would not let the gateway see or end the stream" },
  "attempt loop": { rung: "no rung", why: "fallback across accounts and models before the first byte (section 6) is switchyard's own feature code; its steps (token savers off, slot, trace entry, header observation, two async layers) measured one at a time are each under the noise (−2.1…+0.4 µs), the loop ~0–2 µs alone and ~5 µs compiled for several lanes (item 173)", feature: true },
  "affinity key (X-Switchyard-Cache)": { rung: "no rung", why: "the conversation fingerprint for prompt-cache affinity (2.4) is switchyard's own feature", feature: true },
  "cost and key-limit accounting": { rung: "no rung", why: "cost and per-key budgets (2.3, 9.6) are switchyard's own features", feature: true },
  "usage row": { rung: "rung 4", why: "a usage row per request (O-1): the floor buffers one too" },
  "route trace": { rung: "rung 4", why: "a route trace per request (O-2) serialised with JSON.stringify: the floor does the same; in a request it costs several times its loop (cold code, item 78)" },
  "metrics update": { rung: "rung 4", why: "a counter and a latency histogram per request (O-3): the floor updates the same" },
  "log line": { rung: "rung 4", why: "one JSON log line per request (O-4), written as UTF-8 into a buffer kept for the process and written in batches of up to 64 KiB (items 10, 117, 125: the fresh joined string per write met ~10–22 page faults)" },
  "event publishing": { rung: "no rung", why: "live events for the dashboard (9.x); nobody listens in the bench, so this is one check", feature: true },
  "store flushes": { rung: "rung 4", why: "SQLite WAL inserts of the usage row and the trace (D-1): the floor writes the same rows; page faults of memory given back between flushes cost ~15 µs each on this VM (item 111), and never giving it back breaks the idle-RSS target (item 119)" },
  "gateway wrapper (handle, redaction check, candidates)": { rung: "no rung", why: "the pipeline's own wrapper (redaction, candidates): switchyard's own code", feature: true },
  "the app's request hooks (started/finish, after-reply queue)": { rung: "rung 4 (reporting)", why: "the hooks' own code is ~1–3 µs (item 78); the rest is the bookkeeping costing more inside a request than in its microbenchmarks, which repeat one object: a fresh trace's JSON 2.2–3.7 µs against 0.7–1.2, the flush 5.6 µs per request switched off in the app against its 4.0 µs row (item 173)", feature: true },
  "32 concurrent requests (against one at a time)": { rung: "every rung", why: "what concurrency adds (interleaved requests' cache misses); the floor's servers run at the same concurrency" },
  "GC (JS-thread pauses + GC helper threads)": { rung: "every rung", why: "JavaScriptCore's collector over the request's allocations; Bun exposes no GC tuning, so it goes down only with fewer allocations (bench-alloc counts them)" },
  "GC heap block warm-up (JSCWarmUp thread)": { rung: "every rung", why: "JavaScriptCore allocating and touching new heap blocks ahead of the JS thread: allocation cost" },
  "JIT compiler threads (JITWorker)": { rung: "every rung", why: "JavaScriptCore's baseline, DFG and FTL compilers still warming after the budget's short warm-up; a long-running server pays it once; Bun's `--bytecode` build skips parsing, not the optimising compilers" },
  "allocator and other threads": { rung: "every rung", why: "mimalloc giving freed pages back (its purge); purging less is cheaper but breaks the idle-RSS target (items 29, 34, 119)" },
  remainder: { rung: "no rung", why: "the stages together beyond each one's microbenchmark (cold code and data between stages) and every row's error: shorter code paths, not a Bun limit", feature: true },
  [WIRE_ROW]: {
    rung: "over the wire only",
    why: "the sockets, Bun's HTTP server and the real fetch to the upstream, which only the over-the-wire run has (the raw pipe pays them too: this is what switchyard pays for them beyond it); not split here (no floor run's JSON, or the floor run has no such lane): with one, the floor's top rung's part is a Bun limit and the rest switchyard's own; whether this lane's is a Bun limit is not known",
  },
  [WIRE_FLOOR_ROW]: {
    rung: "rung 5 (rung 6 on translated lanes), over the wire only",
    why: "the floor's top rung, a Bun server doing only the SPEC's mandatory work, pays it too beyond its own in-process run (scripts/bench-floor.ts over the wire against the same rung in process): Bun's HTTP server, the sockets and Bun's fetch carrying that work, a Bun limit for it",
  },
  [WIRE_OWN_ROW]: {
    rung: "no rung (over the wire only)",
    why: "switchyard pays it over the wire and the floor's top rung does not for the same mandatory work: switchyard's own, the cost of its code under the real server and fetch beyond what its in-process run shows (not split into parts yet: `bun scripts/bench-ab.ts --rung5 --threads` gives the CPU by thread against rung 5, `bun scripts/bench-profile.ts` the running server's profile)",
    feature: true,
  },
};

/** One lane's figures as scripts/bench-budget.ts computed them (µs per request). */
export type LaneBudget = {
  name: string;
  /** switchyard's in-process CPU above the in-process raw pipe (the framework row + the pipeline, all threads). */
  above: number;
  /** switchyard's CPU above the raw pipe over the wire: switchyard − raw CPU µs per request in the bench file. */
  wireAbove: number;
  /** switchyard's CPU ratio to the raw pipe over the wire as the bench file measured it (`cpuRatioToRaw.median`): the verdict. */
  ratio: number;
  /** The allowance above the raw pipe: (target − 1) × the over-the-wire raw pipe's CPU µs per request. */
  allowance: number;
  /** The lane's whole-request ratio target over the wire (2 native, 3 translated). */
  target: number;
  /**
   * Each row's measured µs per request and its target µs (its share of the allowance): the in-process
   * rows and {@link WIRE_ROW} (wireAbove − above), or instead of it its two parts {@link WIRE_FLOOR_ROW}
   * and {@link WIRE_OWN_ROW} where a floor run measured the lane.
   */
  rows: Array<{ row: string; measured: number; target: number }>;
};

/** The floor in Bun of one lane, over the wire (scripts/bench-floor.ts's table). */
export type LaneFloor = {
  /** The top rung's ratio to the raw pipe (rung 6 on a translated lane, else rung 5), e.g. "1.60×". */
  floor: string;
  /** switchyard's ratio in the same run, e.g. "2.20×". */
  switchyard: string;
  /** µs per request each rung adds to the one below it (index = rung; index 0 is the raw pipe itself). */
  steps: number[];
};

/**
 * The floor in Bun per lane, read from docs/performance.md's bench-floor table. Returns an empty map
 * when the doc has no such table; `stamp` is the date and time of its "Produced …" line.
 */
export function readFloorTable(doc: string): { stamp: string; lanes: Map<string, LaneFloor> } {
  const lanes = new Map<string, LaneFloor>();
  const a = doc.indexOf("<!-- bench-floor:start -->");
  const b = doc.indexOf("<!-- bench-floor:end -->");
  if (a < 0 || b < a) return { stamp: "", lanes };
  const text = doc.slice(a, b).split("\n");
  const stamp = text.find((l) => l.startsWith("Produced "))?.replace(/^Produced /, "").split(",")[0] ?? "";
  const cells = (l: string) => l.split("|").slice(2, -1).map((c) => c.trim());
  const header = text.find((l) => l.startsWith("| server"));
  const rungs = [0, 1, 2, 3, 4, 5, 6].map((k) => text.find((l) => l.startsWith(`| ${k} `)));
  const sy = text.find((l) => l.startsWith("| switchyard |"));
  if (!header || !rungs[5] || !sy) return { stamp, lanes };
  const ratio = (c: string | undefined) => /\(([\d.]+×)\)/.exec(c ?? "")?.[1];
  const us = (c: string | undefined) => (c && /^\d/.test(c) ? parseFloat(c) : undefined);
  cells(header).forEach((lane, i) => {
    const top = ratio(rungs[6] ? cells(rungs[6])[i] : undefined) ?? ratio(cells(rungs[5]!)[i]);
    if (!top) return;
    const cost = rungs.map((l) => (l ? us(cells(l)[i]) : undefined));
    const steps = cost.map((c, k) => (k === 0 || c === undefined || cost[k - 1] === undefined ? NaN : c - cost[k - 1]!));
    lanes.set(lane, { floor: top, switchyard: ratio(cells(sy)[i]) ?? cells(sy)[i] ?? "", steps });
  });
  return { stamp, lanes };
}

/**
 * A lane's CPU ratio to the raw pipe as the budget's tables write it: two decimals, or three where two
 * would read as within the target a ratio over it misses (3.005 against 3 is "3.005", not "3.00").
 */
export function shownRatio(ratio: number, target: number): string {
  const two = ratio.toFixed(2);
  return ratio > target && Number(two) <= target ? ratio.toFixed(3) : two;
}

/**
 * The markdown table: for each lane whose CPU ratio to the raw pipe over the wire, as the bench file
 * measured it, is over the lane's target, the `top` rows furthest over their targets (µs over; the
 * benchmark harness's own row left out; {@link WIRE_ROW} among them when it is that far over), each with
 * its floor rung (and, for a row of one rung, the µs that rung adds in Bun on that lane over the wire)
 * and why it does not go lower, prefixed "feature code, not a Bun limit:" where the row pays for
 * switchyard's own features; and the lane's floor in Bun over the wire where the floor table has that
 * lane. A lane whose measured ratio is within its target gets one line saying "met" and lists no rows,
 * whatever its in-process figures say. Each lane's line also gives its µs above the raw pipe over the
 * wire against the allowance and how much of it the in-process run saw. Throws when a row has no entry
 * in {@link ROW_FLOORS}.
 */
export function missedTargetsTable(lanes: LaneBudget[], floor: ReturnType<typeof readFloorTable>, top = 3): string {
  const n = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1));
  const lines = [
    `| lane (switchyard × raw pipe over the wire, measured in the bench file / target; µs above the raw pipe over the wire / allowance, and how many the in-process run saw; the floor in Bun over the wire${floor.stamp ? `, ${floor.stamp}` : ""}) | row holding the miss (µs over its target: measured / target) | its floor rung (what the rung adds in Bun on this lane, all its rows together) | why it does not go lower (a Bun limit, or feature code) |`,
    "|---|---|---|---|",
  ];
  for (const lane of lanes) {
    for (const r of lane.rows) if (!ROW_FLOORS[r.row]) throw new Error(`budget row "${r.row}" has no floor in scripts/lib/budget-floors.ts`);
    const f = floor.lanes.get(lane.name);
    const head = `${lane.name}: ${shownRatio(lane.ratio, lane.target)}× / ${lane.target}× over the wire; ${n(lane.wireAbove)} / ${n(lane.allowance)} µs above the raw pipe, ${n(lane.above)} of them seen in process${f ? `; in the floor run the floor ${f.floor}, switchyard ${f.switchyard}` : ""}`;
    if (lane.ratio <= lane.target) {
      lines.push(`| ${head} | met | | |`);
      continue;
    }
    const over = lane.rows
      .filter((r) => ROW_FLOORS[r.row]!.rung !== "harness")
      .map((r) => ({ ...r, over: r.measured - r.target }))
      .filter((r) => r.over > 0).sort((x, y) => y.over - x.over).slice(0, top);
    over.forEach((r, i) => {
      const rung = ROW_FLOORS[r.row]!.rung;
      // A row with one rung of its own: what that rung adds in Bun on this lane, over the wire.
      const k = /^rung (\d)$/.exec(rung)?.[1];
      const step = k && f ? f.steps[Number(k)] : undefined;
      const floorCell = step !== undefined && Number.isFinite(step) ? `${rung} (+${step.toFixed(0)} µs)` : rung;
      const { why, feature } = ROW_FLOORS[r.row]!;
      lines.push(`| ${i === 0 ? head : ""} | ${r.row} (+${n(r.over)}: ${n(r.measured)} / ${n(r.target)}) | ${floorCell} | ${feature ? `feature code, not a Bun limit: ${why}` : why} |`);
    });
  }
  return lines.join("\n");
}
