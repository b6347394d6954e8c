/**
 * The token savers' report (SPEC S-1, S-4): real tool outputs generated on this machine through the
 * savers, per kind the median saving and what was kept; then a multi-turn conversation through a real
 * gateway counting prefix-cache hits with and without the savers. See scripts/savers-corpus.ts.
 *
 * Usage: scripts/bench-savers [--quick] [--json out.json] [--verbose]
 * Exits 1 when an invariant fails: an output made longer, something expected not kept, a prefix-cache
 * hit lost to the savers.
 */
import { writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { buildCorpus, MAX_OUTPUT, measure, simulateConversation, summarise } from "./savers-corpus.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean" }, json: { type: "string" }, verbose: { type: "boolean" } } });
const quick = values.quick ?? false;

const corpus = await buildCorpus({ quick });
const measured = corpus.map(measure);
const kinds = summarise(measured);

const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
const pad = (s: string | number, n: number) => String(s).padEnd(n);
const lpad = (s: string | number, n: number) => String(s).padStart(n);

console.log(`Token savers on ${corpus.length} real tool outputs generated on this machine${quick ? " (quick)" : ""} (each at most ${MAX_OUTPUT.toLocaleString("en-US")} characters)\n`);
console.log(`${pad("kind", 11)} ${lpad("outputs", 7)} ${lpad("shortened", 9)} ${lpad("median saving", 13)} ${lpad("chars before", 12)} ${lpad("after", 9)}  kept`);
for (const k of kinds) {
  const kept = Object.entries(k.kept).map(([what, [a, b]]) => `${what} ${a.toLocaleString("en-US")}/${b.toLocaleString("en-US")}`).join(", ");
  console.log(`${pad(k.kind, 11)} ${lpad(k.outputs, 7)} ${lpad(k.shortened, 9)} ${lpad(pct(k.medianSaving), 13)} ${lpad(k.charsBefore.toLocaleString("en-US"), 12)} ${lpad(k.charsAfter.toLocaleString("en-US"), 9)}  ${kept}`);
}
const before = measured.reduce((a, m) => a + m.before, 0);
const after = measured.reduce((a, m) => a + m.after, 0);
console.log(`${pad("all", 11)} ${lpad(measured.length, 7)} ${lpad(measured.filter((m) => m.rule).length, 9)} ${lpad("", 13)} ${lpad(before.toLocaleString("en-US"), 12)} ${lpad(after.toLocaleString("en-US"), 9)}  ≈ ${Math.round((before - after) / 4).toLocaleString("en-US")} tokens saved (characters / 4)`);
if (values.verbose) {
  console.log("");
  for (const m of measured) console.log(`${pad(m.item.kind, 11)} ${lpad(pct(1 - m.after / m.before), 5)} ${lpad(m.before, 8)} → ${lpad(m.after, 7)}  ${m.rule ?? "-"}  ${m.item.source}`);
}

const failures: string[] = [];
for (const m of measured) {
  if (m.after > m.before) failures.push(`${m.item.source}: made longer (${m.before} → ${m.after})`);
  for (const x of m.missing) failures.push(`${m.item.source}: not kept: ${x}`);
}

// The conversation: outputs the savers shorten, in corpus order, one per kind first.
const shortened = measured.filter((m) => m.rule);
const order = [...new Map(shortened.map((m) => [m.item.kind, m])).values(), ...shortened].map((m) => m.item.text);
const turns = quick ? 6 : 12;
const sim = await simulateConversation(order, turns);
console.log(`\nA ${turns}-turn conversation (Chat client → openai-compatible upstream through the gateway), upstream bytes compared turn to turn:`);
console.log(`${pad("", 16)} ${lpad("prefix-cache hits", 17)} ${lpad("bytes sent", 11)} ${lpad("bytes after the common prefix", 30)}`);
for (const [name, a] of [["with savers", sim.savers], ["savers off", sim.off]] as const) {
  console.log(`${pad(name, 16)} ${lpad(`${a.cacheHits}/${a.transitions}`, 17)} ${lpad(a.bytesSent.toLocaleString("en-US"), 11)} ${lpad(a.uncachedBytes.toLocaleString("en-US"), 30)}`);
}
if (sim.savers.cacheHits < sim.off.cacheHits) failures.push(`prefix-cache hits with savers ${sim.savers.cacheHits} < without ${sim.off.cacheHits}`);

if (values.json) writeFileSync(values.json, JSON.stringify({ quick, kinds, conversation: { turns, ...sim }, failures }, null, 2));
if (failures.length) {
  console.log(`\n${failures.length} invariant failures:`);
  for (const f of failures) console.log(`  ${f}`);
  process.exit(1);
}
console.log("\nInvariants held: no output made longer, everything expected kept, no prefix-cache hit lost.");
