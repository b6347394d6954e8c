/**
 * scripts/lib/read-wire-raw.ts (issue 17): the budget's allowances are sized from the over-the-wire raw
 * pipe of a `scripts/bench --json` file, each budget lane found as its bench lane and mode.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newestBenchFile, readWireRaw } from "../../scripts/lib/read-wire-raw.ts";

test("the newest run file is picked by date and then by run number, not by string order", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-wire-raw-"));
  try {
    for (const f of ["2026-12-02-r9.json", "2026-12-02-r10.json", "2026-12-01-r40.json", "savers-2026-12-05.json", "open-streams-2026-12-09.json"]) writeFileSync(join(dir, f), "{}");
    expect(newestBenchFile(dir)).toBe(join(dir, "2026-12-02-r10.json"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("each budget lane reads its lane and mode's raw pipe and switchyard CPU per request and switchyard's measured ratio", () => {
  const dir = mkdtempSync(join(tmpdir(), "switchyard-wire-raw-"));
  try {
    const file = join(dir, "2026-12-06-r38.json");
    const t = (lane: string, mode: string, raw: number, switchyard: number, ratio?: number) => ({
      lane,
      mode,
      cpuUsPerRequest: { raw: { median: raw, min: 1, max: 999, n: 3 }, switchyard: { median: switchyard, min: 1, max: 999, n: 3 } },
      ...(ratio === undefined ? {} : { cpuRatioToRaw: { median: ratio } }),
    });
    writeFileSync(
      file,
      JSON.stringify({ throughput: [t("chat→chat", "json", 54.869, 145.59, 2.653), t("chat→chat", "stream", 59.229, 149.4, 2.514), t("messages→chat", "stream", 71.837, 176.8, 2.828), t("responses→chat", "json", 70, 190)] }),
    );
    const wire = readWireRaw(file, ["chat→chat json", "messages→chat stream"]);
    expect(Object.fromEntries(wire)).toEqual({ "chat→chat json": { raw: 54.869, switchyard: 145.59, ratio: 2.653 }, "messages→chat stream": { raw: 71.837, switchyard: 176.8, ratio: 2.828 } });
    expect(() => readWireRaw(file, ["responses→chat stream"])).toThrow('has no raw pipe CPU per request (throughput, lane "responses→chat", mode "stream")');
    // A run from before the file carried the ratio cannot judge a lane.
    expect(() => readWireRaw(file, ["responses→chat json"])).toThrow('has no measured CPU ratio to the raw pipe (cpuRatioToRaw, lane "responses→chat", mode "json")');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the repository's newest bench run has every budget lane", () => {
  const file = newestBenchFile(join(import.meta.dir, "../../docs/bench"));
  const names = ["chat→chat json", "chat→chat stream", "messages→messages stream", "messages→chat json", "messages→chat stream", "responses→chat stream"];
  const wire = readWireRaw(file, names);
  for (const name of names) {
    const w = wire.get(name)!;
    expect(w.raw, name).toBeGreaterThan(20);
    // switchyard costs more than the raw pipe, and the measured ratio says about as much as the two medians.
    expect(w.switchyard, name).toBeGreaterThan(w.raw);
    expect(Math.abs(w.ratio - w.switchyard / w.raw), name).toBeLessThan(0.5);
  }
});
