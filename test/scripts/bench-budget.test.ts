/**
 * scripts/bench-budget.ts in its quick mode (as CI runs it, issue 17): it must run to the end and print
 * every named row of the budget with a figure for every lane, the over-the-wire raw pipe its targets are
 * sized from (and which bench file that came from), and the `bun --cpu-prof` attribution by module beside
 * it. No timing is asserted: speed lives in scripts/bench and the budget table itself.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { gcPausesByBracket } from "../../scripts/lib/gc-log.ts";
import { newestBenchFile } from "../../scripts/lib/read-wire-raw.ts";

const UNSEEN = "over the wire, not seen in process";
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
  `${UNSEEN} (switchyard − raw over the wire, from the bench file, − the in-process whole request above)`,
  IN_PROCESS,
  OVER_THE_WIRE,
  VERDICT,
];
const LANES = ["chat→chat json", "chat→chat stream", "messages→messages stream", "messages→chat json", "messages→chat stream", "responses→chat stream"];

test("bench-budget --quick prints every row of the budget with a number per lane", async () => {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench-budget.ts"), "--quick"], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  const lines = out.split("\n");
  // The targets are shares of an allowance sized from a bench run over the wire: the newest one by default.
  const newest = newestBenchFile(join(import.meta.dir, "../../docs/bench")).split("/").at(-1);
  expect(lines[0]).toStartWith("Produced ");
  expect(lines[0]).toContain(`raw pipe over the wire from docs/bench/${newest}`);
  const header = lines.find((l) => l.startsWith("| part"));
  expect(header?.split("|").slice(2, -1).map((c) => c.trim())).toEqual(LANES);
  for (const row of ROWS) {
    const line = out.split("\n").find((l) => l.startsWith(`| ${row} |`));
    expect(line, row).toBeDefined();
    const cells = line!.split("|").slice(2, -1).map((c) => c.trim());
    expect(cells).toHaveLength(LANES.length);
    // "12.3" (baseline), "12.3 / 4.5" (measured / target), "3.10× / 2×" (ratio / target ratio)
    for (const c of cells) expect(c, `${row}: ${c}`).toMatch(/^-?\d+(\.\d+)?×?( \/ -?\d+(\.\d+)?×?)?$/);
  }
  // The row the in-process run does not see makes the rows add up to what the bench measured over the
  // wire: in process + that row = switchyard − raw in the bench file (each cell rounded to 0.1 µs).
  const cellsOf = (row: string) => out.split("\n").find((l) => l.startsWith(`| ${row} |`))!.split("|").slice(2, -1).map((c) => c.trim().split(" / ").map((x) => parseFloat(x)));
  const [unseen, inProcess, overWire, verdict] = [ROWS.find((r) => r.startsWith(UNSEEN))!, IN_PROCESS, OVER_THE_WIRE, VERDICT].map(cellsOf);
  LANES.forEach((lane, i) => {
    expect(Math.abs(unseen![i]![0]! + inProcess![i]![0]! - overWire![i]![0]!), lane).toBeLessThan(1.01);
    // Its target and the in-process rows' part share the allowance.
    expect(Math.abs(unseen![i]![1]! + inProcess![i]![1]! - overWire![i]![1]!), lane).toBeLessThan(1.01);
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
    // the row not seen in process is named short there (its table row says how it is computed)
    expect([...ROWS, UNSEEN].some((r) => row!.startsWith(`${r} (+`)), row).toBe(true);
    expect(rung!.length > 0 && why!.length > 20, l).toBe(true);
  }
  // The profile's share table: the same lanes, shares in per cent, the pipeline's own stage modules among the rows.
  const profileHeader = lines.find((l) => l.startsWith("| module (share"));
  expect(profileHeader?.split("|").slice(2, -1).map((c) => c.trim())).toEqual(LANES);
  const start = lines.indexOf(profileHeader!);
  const rows = lines.slice(start + 2).filter((l) => l.startsWith("| ") && !l.startsWith("| samples"));
  expect(rows.some((l) => l.startsWith("| pipeline/"))).toBe(true);
  for (const l of rows) for (const c of l.split("|").slice(2, -1)) expect(c.trim(), l).toMatch(/^\d+\.\d %$/);
}, 180_000);

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
