#!/usr/bin/env bun
/**
 * A/B in process of the Chat passthrough driver with and without the output sample
 * (pipeline/output-estimate.ts; docs/performance.md item 65): the bench upstream's small streamed reply
 * (`gpt-bench`, usage on, one read, as it reaches the proxy) and its 20,000-event stream (16 KiB reads),
 * each through a fresh driver, the two variants interleaved round by round. Prints the median and the
 * minimum CPU µs per stream of each, and B/A.
 *
 * Usage: bun scripts/bench-passthrough-sample.ts [--rounds N] [--small N] [--big N]
 */
import { codecFor } from "../formats/index.ts";
import { passthroughDriver } from "../pipeline/re-translate.ts";
import { byteSample } from "../pipeline/output-estimate.ts";
import { benchReply } from "./bench-upstream.ts";

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const rounds = arg("rounds", 30);
const smallReps = arg("small", 4000);
const bigReps = arg("big", 6);

const bytesOf = async (model: string) =>
  new Uint8Array(await benchReply("/v1/chat/completions", JSON.stringify({ model, stream: true, stream_options: { include_usage: true } }))!.arrayBuffer());
const small = await bytesOf("gpt-bench");
const bigBytes = await bytesOf("gpt-bench-big");
const big: Uint8Array[] = [];
for (let o = 0; o < bigBytes.length; o += 16 * 1024) big.push(bigBytes.subarray(o, Math.min(bigBytes.length, o + 16 * 1024)));

const codec = codecFor("openai-chat");
const tapOptions = { family: "openai" as const, includeUsage: false };
const variants = {
  A: () => passthroughDriver(codec.createTap(tapOptions)),
  B: () => passthroughDriver(codec.createTap(tapOptions), byteSample(codec, { family: "openai" })),
};
type Name = keyof typeof variants;

/** CPU µs (this process, user + system: the machine is shared) per stream of `reps` streams of `parts` through fresh drivers of variant `v`. */
function run(v: Name, parts: Uint8Array[], reps: number): number {
  const make = variants[v];
  let sink = 0;
  const t0 = process.cpuUsage();
  for (let k = 0; k < reps; k++) {
    const d = make();
    for (const p of parts) sink += d.push(p).byteLength;
    sink += d.end().byteLength;
  }
  const t = process.cpuUsage(t0);
  const us = (t.user + t.system) / reps;
  if (sink < 0) console.log(sink);
  return us;
}

const cases = { small: { parts: [small], reps: smallReps }, big: { parts: big, reps: bigReps } };
for (const [name, c] of Object.entries(cases)) {
  for (const v of ["A", "B"] as Name[]) for (let w = 0; w < 3; w++) run(v, c.parts, c.reps);
  const got: Record<Name, number[]> = { A: [], B: [] };
  for (let r = 0; r < rounds; r++) {
    const order: Name[] = r % 2 === 0 ? ["A", "B"] : ["B", "A"];
    for (const v of order) got[v].push(run(v, c.parts, c.reps));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const min = (xs: number[]) => Math.min(...xs);
  console.log(
    `${name} (${c.parts.reduce((n, p) => n + p.length, 0)} bytes, ${c.parts.length} reads): ` +
      `A median ${median(got.A).toFixed(2)} µs min ${min(got.A).toFixed(2)}; B median ${median(got.B).toFixed(2)} µs min ${min(got.B).toFixed(2)}; ` +
      `B/A median ${(median(got.B) / median(got.A)).toFixed(3)}, min ${(min(got.B) / min(got.A)).toFixed(3)}`,
  );
}
