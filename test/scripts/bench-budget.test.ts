/**
 * scripts/bench-budget.ts in its quick mode (as CI runs it, issue 17): it must run to the end and print
 * every named row of the budget with a figure for every lane scripts/bench judges against the CPU target
 * (native lanes and translated lanes in two tables), the over-the-wire raw pipe its targets are
 * sized from (and which bench file that came from), and the `bun --cpu-prof` attribution by module beside
 * it. Given a floor run's JSON (scripts/bench-floor.ts --json; here a small fixture), the row the
 * in-process run does not see is split into what the floor's top rung pays too and switchyard's own;
 * without one it is printed whole. No timing is asserted: speed lives in scripts/bench and the budget
 * table itself.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gcPausesByBracket } from "../../scripts/lib/gc-log.ts";
import { newestBenchFile } from "../../scripts/lib/read-wire-raw.ts";

const UNSEEN = "over the wire, not seen in process";
const UNSEEN_WHOLE = `${UNSEEN} (switchyard − raw over the wire, from the bench file, − the in-process whole request above)`;
const UNSEEN_FLOOR = `${UNSEEN}: what the floor's top rung pays too (Bun's server, sockets and fetch for the mandatory work) ((top rung − raw over the wire, from the floor file) − (top rung − raw in process), within [0, the whole row])`;
const UNSEEN_OWN = `${UNSEEN}: switchyard's own (switchyard − raw over the wire, from the bench file, − the in-process whole request above − the floor's part)`;
const UNSEEN_REST = `${UNSEEN}, not split (the floor file has no such lane) (switchyard − raw over the wire, from the bench file, − the in-process whole request above)`;
const IN_PROCESS = "in process: whole request above the in-process raw pipe (framework + pipeline, all threads) / the in-process rows' part of the allowance";
const OVER_THE_WIRE = `over the wire: switchyard − raw pipe CPU (the bench file; the in-process whole request + ${UNSEEN}) / allowance ((ratio target − 1) × raw over the wire)`;
const VERDICT = "switchyard × raw pipe over the wire, measured (the bench file): the lane's verdict / target";
const ROWS = [
  "raw Bun pipe in process (baseline)",
  "raw Bun pipe over the wire (CPU, from the bench file)",
  "HTTP framework dispatch",
  "body read and JSON parse",
  "guard",
  "resolve/order/pick",
  "translate",
  "executor call setup and abort wiring",
  "provider executor (upstream URL, headers, fetch call)",
  "in-process upstream reply (harness; the raw pipe pays it too)",
  "reply driver (tap / re-translate)",
  "commit point and JS reply stream",
  "attempt loop",
  "affinity key (X-Switchyard-Cache)",
  "cost and key-limit accounting",
  "usage row",
  "route trace",
  "metrics update",
  "log line",
  "event publishing",
  "store flushes",
  "gateway wrapper (handle, redaction check, candidates)",
  "the app's request hooks (started/finish, after-reply queue)",
  "32 concurrent requests (against one at a time)",
  "GC (JS-thread pauses + GC helper threads)",
  "GC heap block warm-up (JSCWarmUp thread)",
  "JIT compiler threads (JITWorker)",
  "allocator and other threads",
  "remainder",
  IN_PROCESS,
  OVER_THE_WIRE,
  VERDICT,
];
/** Every lane scripts/bench judges against the CPU target (each HTTP lane × mode of docs/bench/2026-12-06-r42.json): the native table's, then the translated table's. */
const NATIVE = ["chat→chat json", "chat→chat stream", "messages→messages json", "messages→messages stream", "gemini→gemini json", "gemini→gemini stream"];
const TRANSLATED = ["messages→chat json", "messages→chat stream", "responses→chat json", "responses→chat stream", "gemini→chat json", "gemini→chat stream"];
const LANES = [...NATIVE, ...TRANSLATED];

// A floor run's JSON as scripts/bench-floor.ts --json writes it, for six lanes (gemini→gemini JSON, messages→chat
// JSON, Responses and gemini→chat are not in it). Its figures are made up: chat→chat json's top rung costs far more than the raw
// pipe over the wire (so its part is the whole row, when that is positive), chat→chat stream's less (its
// part is 0), the others like a real run.
const dir = mkdtempSync(join(tmpdir(), "switchyard-budget-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FLOOR = join(dir, "2026-12-06-floor-1400.json");
const server = (cpuUs: number, raw: number) => ({ cpuUs, ratioToRaw: cpuUs / raw });
const floorLane = (name: string, kind: string, topRung: string, raw: number, top: number) => ({ name, kind, topRung, servers: { "0": server(raw, raw), [topRung]: server(top, raw), switchyard: server(1.3 * top, raw) } });
writeFileSync(
  FLOOR,
  JSON.stringify({
    when: "2026-12-06T14:00:00.000Z",
    commit: null,
    command: "bun scripts/bench-floor.ts --json 2026-12-06-floor-1400.json",
    machine: { cores: 2, bun: Bun.version, loadClient: "wrk -t1 -c32" },
    rounds: 5,
    seconds: 3,
    loadErrors: 0,
    lanes: [
      floorLane("chat→chat json", "native", "5", 60, 100_000),
      floorLane("chat→chat stream", "native", "5", 2000, 1000),
      floorLane("messages→messages json", "native", "5", 60, 101),
      floorLane("messages→messages stream", "native", "5", 65, 118),
      floorLane("gemini→gemini stream", "native", "5", 55, 112),
      floorLane("messages→chat stream", "translated", "6", 62, 140),
    ],
  }),
);
const SPLIT_LANES = ["chat→chat json", "chat→chat stream", "messages→messages json", "messages→messages stream", "gemini→gemini stream", "messages→chat stream"];
/** The budget tables' lines (native, then translated), each from its header line to its last row. */
const budgetTables = (out: string) => {
  const lines = out.split("\n");
  return lines.flatMap((l, i) => (l.startsWith("| part (") ? [lines.slice(i, i + lines.slice(i).findIndex((x) => !x.startsWith("|")))] : []));
};
/**
 * A row's cells over both budget tables, in {@link LANES}' order, as [measured, target] numbers ("-", or
 * a table without the row, as undefined); undefined when neither table has the row.
 */
const cellsOf = (out: string, row: string) => {
  const tables = budgetTables(out);
  if (!tables.some((t) => t.some((l) => l.startsWith(`| ${row} |`)))) return undefined;
  return tables.flatMap((t) => {
    const width = t[0]!.split("|").length - 3;
    const line = t.find((l) => l.startsWith(`| ${row} |`));
    return line ? line.split("|").slice(2, -1).map((c) => (c.trim() === "-" ? undefined : c.trim().split(" / ").map((x) => parseFloat(x)))) : Array.from({ length: width }, () => undefined);
  });
};

async function run(...args: string[]) {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench-budget.ts"), "--quick", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  return out;
}

test("bench-budget --quick prints every row of the budget with a number per lane, the row not seen in process split by a floor run", async () => {
  const out = await run("--floor", FLOOR);
  const lines = out.split("\n");
  // The targets are shares of an allowance sized from a bench run over the wire: the newest one by default.
  const newest = newestBenchFile(join(import.meta.dir, "../../docs/bench")).split("/").at(-1);
  expect(lines[0]).toStartWith("Produced ");
  expect(lines[0]).toContain(`raw pipe over the wire from docs/bench/${newest}`);
  expect(lines[0]).toContain(`"${UNSEEN}" split with the floor run ${FLOOR} (2026-12-06 14:00 UTC), whole on gemini→gemini json, messages→chat json, responses→chat json, responses→chat stream, gemini→chat json, gemini→chat stream (not in that run)`);
  // Two tables: the native lanes' (target 2×) and the translated lanes' (3×), every judged lane a column of one.
  const tables = budgetTables(out);
  expect(tables.map((t) => t[0]!.split("|").slice(2, -1).map((c) => c.trim()))).toEqual([NATIVE, TRANSLATED]);
  expect(tables.map((t) => t[0]!.split("|")[1]!.trim().split(";")[0])).toEqual(["part (native lanes, target ≤ 2× the raw pipe", "part (translated lanes, target ≤ 3× the raw pipe"]);
  for (const row of ROWS) {
    const rowLines = tables.map((t) => t.find((l) => l.startsWith(`| ${row} |`)));
    expect(rowLines.every((l) => l !== undefined), row).toBe(true);
    const cells = rowLines.flatMap((l) => l!.split("|").slice(2, -1).map((c) => c.trim()));
    expect(cells).toHaveLength(LANES.length);
    // "12.3" (baseline), "12.3 / 4.5" (measured / target), "3.10× / 2×" (ratio / target ratio)
    for (const c of cells) expect(c, `${row}: ${c}`).toMatch(/^-?\d+(\.\d+)?×?( \/ -?\d+(\.\d+)?×?)?$/);
  }
  // The row the in-process run does not see, split where the floor run has the lane (its two parts) and
  // whole where it has not, makes the rows add up to what the bench measured over the wire: in process +
  // that row = switchyard − raw in the bench file (each cell rounded to 0.1 µs).
  expect(cellsOf(out, UNSEEN_WHOLE)).toBeUndefined();
  const [floorPart, own, rest, inProcess, overWire, verdict] = [UNSEEN_FLOOR, UNSEEN_OWN, UNSEEN_REST, IN_PROCESS, OVER_THE_WIRE, VERDICT].map((row) => cellsOf(out, row));
  // beside them what the floor's part is made of: its top rung above the raw pipe over the wire (the
  // fixture's figures) and in process (this run)
  const floorAbove = cellsOf(out, "the floor's top rung − raw pipe, CPU µs per request: over the wire (the floor file) / in process (this run)")!;
  expect(floorAbove.map((c) => c?.[0])).toEqual([99_940, -1000, 41, 53, undefined, 57, undefined, 78, undefined, undefined, undefined, undefined]);
  LANES.forEach((lane, i) => {
    const split = SPLIT_LANES.includes(lane);
    expect([floorPart![i], own![i], rest![i]].map((c) => c !== undefined), lane).toEqual([split, split, !split]);
    const whole = overWire![i]![0]! - inProcess![i]![0]!;
    const parts = split ? floorPart![i]![0]! + own![i]![0]! : rest![i]![0]!;
    expect(Math.abs(parts - whole), lane).toBeLessThan(1.01);
    // Their targets and the in-process rows' part share the allowance: the floor's part (or the whole row)
    // gets the row's share, switchyard's own 0.
    const targets = split ? floorPart![i]![1]! + own![i]![1]! : rest![i]![1]!;
    expect(Math.abs(targets + inProcess![i]![1]! - overWire![i]![1]!), lane).toBeLessThan(1.01);
    if (split) expect(own![i]![1], lane).toBe(0);
    // The floor's part stays within [0, the whole row]: on chat→chat json (the floor's top rung far above
    // the raw pipe over the wire) it is all of the row, on chat→chat stream (below it) none of it.
    if (split) expect(floorPart![i]![0]! >= 0 && floorPart![i]![0]! <= Math.max(0, whole) + 1.01, `${lane}: ${floorPart![i]}`).toBe(true);
    if (lane === "chat→chat json") expect(Math.abs(floorPart![i]![0]! - Math.max(0, whole)), lane).toBeLessThan(1.01);
    if (lane === "chat→chat stream") expect(floorPart![i]![0], lane).toBe(0);
  });
  // Where a target is missed: a line per lane (its first row, or "met"), each row of the budget named
  // with a floor rung and a reason (the quick run's figures are noise, so which rows come up is not asserted).
  const missedHeader = lines.find((l) => l.startsWith("| lane (switchyard × raw pipe over the wire, measured in the bench file / target"));
  expect(missedHeader).toBeDefined();
  const missed = lines.slice(lines.indexOf(missedHeader!) + 2);
  const missedRows = missed.slice(0, missed.findIndex((l) => !l.startsWith("| ")));
  for (const lane of LANES) expect(missedRows.some((l) => l.startsWith(`| ${lane}: `)), lane).toBe(true);
  // A lane is listed with rows only when the ratio the bench file measured over the wire is over its
  // target, whatever the in-process figures say: the verdict row of the budget table, the same figure.
  for (const l of missedRows.filter((x) => /^\| \S+ \S+: /.test(x))) {
    const [, lane, a, b] = /^\| (\S+ \S+): ([\d.]+)× \/ (\d)× over the wire; /.exec(l) ?? [];
    expect(a, l).toBeDefined();
    expect(l.includes("| met |"), l).toBe(Number(a) <= Number(b));
    expect(Number(a), l).toBe(verdict![LANES.indexOf(lane!)]![0]!);
  }
  for (const l of missedRows) {
    const [, row, rung, why] = l.split("|").slice(1, -1).map((c) => c.trim());
    if (row === "met") continue;
    // the row not seen in process (or its parts) is named short there (its table row says how it is computed)
    const short = [UNSEEN, `${UNSEEN}: what the floor's top rung pays too (Bun's server, sockets and fetch for the mandatory work)`, `${UNSEEN}: switchyard's own`];
    expect([...ROWS, ...short].some((r) => row!.startsWith(`${r} (+`)), row).toBe(true);
    expect(rung!.length > 0 && why!.length > 20, l).toBe(true);
  }
  // The profile's share tables: the same lanes (native, then translated), shares in per cent, the pipeline's
  // own stage modules among the rows.
  const profileHeaders = lines.filter((l) => l.startsWith("| module ("));
  expect(profileHeaders.map((h) => h.split("|").slice(2, -1).map((c) => c.trim()))).toEqual([NATIVE, TRANSLATED]);
  for (const header of profileHeaders) {
    const start = lines.indexOf(header);
    const rows = lines.slice(start + 2, start + 2 + lines.slice(start + 2).findIndex((l) => !l.startsWith("| "))).filter((l) => !l.startsWith("| samples"));
    expect(rows.some((l) => l.startsWith("| pipeline/")), header).toBe(true);
    for (const l of rows) for (const c of l.split("|").slice(2, -1)) expect(c.trim(), l).toMatch(/^\d+\.\d %$/);
  }
}, 180_000);

test("bench-budget --quick without a floor run prints the row not seen in process whole, and says so", async () => {
  const out = await run("--no-profile", "--no-floor");
  expect(out.split("\n")[0]).toContain(`"${UNSEEN}" not split (no floor run's JSON: scripts/bench-floor.ts --json)`);
  expect([UNSEEN_FLOOR, UNSEEN_OWN, UNSEEN_REST].map((row) => cellsOf(out, row))).toEqual([undefined, undefined, undefined]);
  const [whole, inProcess, overWire] = [UNSEEN_WHOLE, IN_PROCESS, OVER_THE_WIRE].map((row) => cellsOf(out, row)!);
  LANES.forEach((lane, i) => {
    expect(Math.abs(whole[i]![0]! + inProcess[i]![0]! - overWire[i]![0]!), lane).toBeLessThan(1.01);
    expect(Math.abs(whole[i]![1]! + inProcess[i]![1]! - overWire[i]![1]!), lane).toBeLessThan(1.01);
  });
  // the missed table names it whole too, with the reason that says it is not split
  expect(out).not.toContain(`${UNSEEN}: `);
}, 120_000);

test("the GC pauses JavaScriptCore logs are added up per bracket of the measuring child", () => {
  const stderr = [
    "[GC<0x1>: START M 8624kb => EdenCollection, a=0kb p=1.5ms (max 1.5)...]",
    "@@budget lane|x#0 start",
    "[GC<0x1>: START M 8624kb => EdenCollection, a=0kb hf=0.000 p=0.25ms (max 1.737068)...]",
    "[GC<0x1>: M a=28kb hf=0.009 p=0.5ms (max 1.737068)...]",
    "@@budget lane|x#0 end",
    "[GC<0x1>: M a=28kb p=9ms (max 9)...]",
    "@@budget lane|y#0 start",
    "@@budget lane|y#0 end",
    "@@budget lane|x#0 start",
    "[GC<0x1>: M => 7207kb, p=1.25ms (max 2.250588), cycle 23.390381ms END]",
    "@@budget lane|x#0 end",
  ].join("\n");
  expect(Object.fromEntries(gcPausesByBracket(stderr))).toEqual({ "lane|x#0": 2000, "lane|y#0": 0 });
});
