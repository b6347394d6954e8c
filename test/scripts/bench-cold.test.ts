/**
 * scripts/bench-cold.ts in its `--smoke` mode (issue 17, docs/performance.md item 319: the stages one
 * request at a time with the caches evicted before each call, two source trees paired in one process):
 * every lane × stage gets A's and B's median and the paired difference; with one tree, A's only. The
 * script throws on a refused guard, an untranslatable body or a non-200 reply before it prints. No
 * timing is asserted: the figures of a smoke run mean nothing.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

async function run(args: string[]): Promise<string[]> {
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench-cold.ts"), "--smoke", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  return out.trim().split("\n").slice(1);
}

const num = String.raw`-?\d+\.\d`;

test("bench-cold --smoke with two trees prints A, B and B−A for every lane and stage", async () => {
  const lines = await run(["--a", ROOT, "--b", ROOT]);
  const cells = lines.map((l) => l.split(/\s+/).slice(0, 2).join(" "));
  const stages = ["newctx", "bodyread", "guard", "translate", "driver", "whole"];
  expect(cells).toEqual(["responses-chat", "messages-chat", "chat"].flatMap((lane) => stages.map((s) => `${lane} ${s}`)));
  for (const l of lines) expect(l).toMatch(new RegExp(`^\\S+ +\\S+ +A +${num}  B +${num}  B−A +${num} \\[${num}, ${num}\\]$`));
});

test("bench-cold --smoke with one tree prints its medians only, for the lanes and stages asked", async () => {
  const lines = await run(["--a", ROOT, "--lanes", "chat", "--stages", "translate,driver"]);
  expect(lines.map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual(["chat translate", "chat driver"]);
  for (const l of lines) expect(l).toMatch(new RegExp(`^chat +\\S+ +A +${num}$`));
});
