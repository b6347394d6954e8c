/**
 * scripts/bench-ab.ts in its `--smoke` mode (issue 17: interleaved A/B of switchyard builds over the
 * wire): two switchyard servers from this tree (the second with an environment variable of its own) and
 * the floor's rung 5 must start, answer both JSON lanes and the Responses WebSocket lane (the script
 * throws on a non-200 or a failed frame before measuring) and each get a CPU figure and a ratio to the
 * first build per lane (rung 5 has no WebSocket: "-" there), a line per thread name with `--threads`,
 * and the figures by start order (the servers are started anew each round, in a rotated order). No timing is asserted: the figures of a smoke run mean nothing.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");

test("bench-ab --smoke prints every build and rung 5 with a figure and a ratio per lane, and what the start order moved", async () => {
  const args = ["--smoke", "--rounds", "2", "--threads", "--rung5", "--tree", `a=${ROOT}`, "--tree", `b=${ROOT}:SWITCHYARD_BENCH_AB_MARK=1`, "--lanes", "chat-json,messages-json,responses-ws→chat-stream"];
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench-ab.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  expect(out).toContain("load errors 0");
  const lines = out.split("\n");
  const figure = /^(chat-json|messages-json|responses-ws→chat-stream) \d+ \(\d+–\d+\) \[\d+\.\d{3}×\]$/;
  for (const name of ["a", "b", "rung5"]) {
    const line = lines.find((l) => l.startsWith(name.padEnd(10) + " "));
    expect(line, name).toBeDefined();
    const cells = line!.slice(11).split("  ");
    expect(cells.map((c) => c.split(" ")[0]), name).toEqual(["chat-json", "messages-json", "responses-ws→chat-stream"]);
    for (const c of name === "rung5" ? cells.slice(0, 2) : cells) expect(c, name).toMatch(figure);
    if (name === "rung5") expect(cells[2]).toBe("responses-ws→chat-stream -");
    if (name === "a") expect(cells.every((c) => c.endsWith("[1.000×]"))).toBe(true);
    // --threads: each thread name's share per lane, the JS thread's among them (the names are in order
    // of CPU: which comes first is the machine's business, e.g. the JIT's compiler threads ahead of the
    // JS thread in a one-second smoke round on a loaded machine)
    const threads = lines.find((l) => l.startsWith(`${name.padEnd(10)} chat-json: `));
    expect(threads, name).toMatch(/^\S+ +chat-json: \S[^,]* \d+\.\d(, \S[^,]* \d+\.\d)*$/);
    const entries = threads!.slice(name.padEnd(10).length + " chat-json: ".length).split(", ");
    expect(entries, name).toContainEqual(expect.stringMatching(/^js \d+\.\d$/));
    const figures = entries.map((e) => Number(e.slice(e.lastIndexOf(" ") + 1)));
    expect(figures, name).toEqual(figures.toSorted((x, y) => y - x));
  }
  // The servers are started anew each round, each in turn first (item 170, as --latency since item 153):
  // each start order with every server's difference to a per lane (rung 5 has no WebSocket lane), and
  // what the later start moved.
  const signed = String.raw`[+−]\d+\.\d`;
  const byOrder = (order: string, round: number) =>
    new RegExp(`^started ${order} \\(round ${round}\\): chat-json b ${signed} rung5 ${signed}  messages-json b ${signed} rung5 ${signed}  responses-ws→chat-stream b ${signed}$`, "m");
  expect(out).toMatch(byOrder("a,b,rung5", 1));
  expect(out).toMatch(byOrder("b,rung5,a", 2));
  const span = String.raw`${signed} \(${signed} … ${signed}\)`;
  expect(out).toMatch(new RegExp(`^started last minus started first .*: chat-json ${span}  messages-json ${span}  responses-ws→chat-stream ${span}$`, "m"));
}, 180_000);

test("bench-ab --smoke --latency prints each lane's direct p50 and every build's added p50 with its difference to the first, by start order too", async () => {
  const args = ["--smoke", "--latency", "3", "--rounds", "2", "--tree", `a=${ROOT}`, "--tree", `b=${ROOT}`, "--lanes", "chat-json,messages→chat-stream"];
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench-ab.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  const ms = String.raw`-?\d+\.\d{3} \(-?\d+\.\d{3}–-?\d+\.\d{3}\)`;
  const us = String.raw`-?\d+\.\d \(-?\d+\.\d–-?\d+\.\d\)`;
  for (const lane of ["chat-json", "messages→chat-stream"]) {
    const line = out.split("\n").find((l) => l.startsWith(lane + " "));
    expect(line, lane).toMatch(new RegExp(`^${lane} +direct ${ms}  a \\+${ms} \\[0\\.0 \\(0\\.0–0\\.0\\)\\]  b \\+${ms} \\[${us}\\]$`));
  }
  // The servers are started anew each round, in turn first (item 153): both orders, each with b's
  // difference per lane, and what the later start moved.
  const signed = String.raw`[+−]\d+\.\d`;
  expect(out).toMatch(new RegExp(`^started a,b \\(round 1\\): chat-json b ${signed}  messages→chat-stream b ${signed}$`, "m"));
  expect(out).toMatch(new RegExp(`^started b,a \\(round 2\\): chat-json b ${signed}  messages→chat-stream b ${signed}$`, "m"));
  expect(out).toMatch(new RegExp(`^started last minus started first .*: chat-json ${signed} \\(${signed} … ${signed}\\)  messages→chat-stream ${signed} \\(${signed} … ${signed}\\)$`, "m"));
}, 180_000);

test("bench-ab --smoke --latency measures the WebSocket lane too (direct: the same request over HTTP)", async () => {
  const args = ["--smoke", "--latency", "3", "--tree", `a=${ROOT}`, "--tree", `b=${ROOT}`, "--lanes", "responses-ws→chat-stream"];
  const proc = Bun.spawn([process.execPath, join(ROOT, "scripts/bench-ab.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });
  const ms = String.raw`-?\d+\.\d{3} \(-?\d+\.\d{3}–-?\d+\.\d{3}\)`;
  const us = String.raw`-?\d+\.\d \(-?\d+\.\d–-?\d+\.\d\)`;
  const line = out.split("\n").find((l) => l.startsWith("responses-ws→chat-stream "));
  expect(line).toMatch(new RegExp(`^responses-ws→chat-stream +direct ${ms}  a \\+${ms} \\[0\\.0 \\(0\\.0–0\\.0\\)\\]  b \\+${ms} \\[${us}\\]$`));
}, 180_000);
