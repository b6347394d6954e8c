/**
 * The budget's floor lanes from several floor runs (scripts/lib/floor-json.ts mergeFloorRuns): each lane
 * from the newest run that has it, so a run of a few lanes (`bench-floor.ts --lanes`) renews or adds
 * those without taking an older full run's other lanes away.
 */
import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floorFilesNewestFirst, mergeFloorRuns, type FloorJson, type FloorLane } from "../../scripts/lib/floor-json.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const lane = (name: string, raw: number, top: number): FloorLane => ({ name, kind: "native", topRung: "5", servers: { "0": { cpuUs: raw, ratioToRaw: 1 }, "5": { cpuUs: top, ratioToRaw: top / raw } } });
const run = (when: string, lanes: FloorLane[]): FloorJson => ({ when, commit: null, command: "bun scripts/bench-floor.ts", machine: { cores: 2, bun: "1", loadClient: "wrk" }, rounds: 1, seconds: 1, loadErrors: 0, lanes });

test("each lane from the newest floor run that has it; the older full run keeps the lanes the newer one did not run", () => {
  const dir = mkdtempSync(join(tmpdir(), "sy-floor-merge-"));
  dirs.push(dir);
  writeFileSync(join(dir, "2026-12-06-floor-1801.json"), JSON.stringify(run("2026-12-06T18:09:00Z", [lane("chat→chat json", 60, 110), lane("chat→chat stream", 62, 115)])));
  writeFileSync(join(dir, "2026-12-07-floor-0105.json"), JSON.stringify(run("2026-12-07T01:10:00Z", [lane("chat→chat stream", 64, 118), lane("gemini→gemini json", 55, 100)])));
  writeFileSync(join(dir, "2026-12-06-r42.json"), "{}"); // not a floor file
  const files = floorFilesNewestFirst(dir);
  expect(files.map((f) => f.slice(dir.length + 1))).toEqual(["2026-12-07-floor-0105.json", "2026-12-06-floor-1801.json"]);
  const merged = mergeFloorRuns(files);
  expect(merged.map((l) => [l.name, l.servers["5"]!.cpuUs, l.when])).toEqual([
    ["chat→chat stream", 118, "2026-12-07T01:10:00Z"],
    ["gemini→gemini json", 100, "2026-12-07T01:10:00Z"],
    ["chat→chat json", 110, "2026-12-06T18:09:00Z"],
  ]);
});
