/**
 * scripts/bench's Gemini-client and Responses WebSocket lanes (issue 13) in its `--smoke` mode (one
 * round of a few requests per lane): every lane must run to the end against the real app and the bench
 * upstream, with no failed request, and show its CPU per request next to the HTTP Responses lane of
 * the same run, in the printed tables and the JSON. No timing is asserted: speed lives in
 * scripts/bench itself.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const LANES = ["responses→chat", "responses-ws→chat", "gemini→gemini", "gemini→chat"];
/** lane → modes, as the bench runs them (the WebSocket lane is streamed only). */
const ROWS: [string, string][] = [
  ["responses→chat", "json"],
  ["responses→chat", "stream"],
  ["responses-ws→chat", "stream"],
  ["gemini→gemini", "json"],
  ["gemini→gemini", "stream"],
  ["gemini→chat", "json"],
  ["gemini→chat", "stream"],
];

interface Spread {
  median: number;
  n: number;
}

test("bench --smoke runs the Gemini and WebSocket lanes beside HTTP Responses, with CPU per request in the tables and the JSON", async () => {
  const dir = mkdtempSync(join(tmpdir(), "bench-lanes-"));
  try {
    const json = join(dir, "bench.json");
    const args = ["--smoke", "--lanes", "responses,gemini", "--only", "latency,throughput,streams", "--no-binary", "--json", json];
    const proc = Bun.spawn([process.execPath, join(import.meta.dir, "../../scripts/bench.ts"), ...args], { stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, stderr: code === 0 ? "" : err }).toEqual({ code: 0, stderr: "" });

    const result = JSON.parse(readFileSync(json, "utf8"));
    expect(result.lanes.map((l: { name: string; transport: string; targets: string[] }) => [l.name, l.transport, l.targets.join(",")])).toEqual([
      ["responses→chat", "http", "direct,raw,switchyard"],
      ["responses-ws→chat", "websocket", "direct,switchyard"],
      ["gemini→gemini", "http", "direct,raw,switchyard"],
      ["gemini→chat", "http", "direct,raw,switchyard"],
    ]);

    // Throughput: every lane served requests without an error; switchyard's CPU µs per request is a
    // figure on every row, the raw pipe's on every row but the WebSocket one (it has no WebSocket).
    const rps = result.throughput as { lane: string; mode: string; rps: Record<string, Spread | null>; cpuUsPerRequest: Record<string, Spread | null>; errors: number }[];
    expect(rps.map((r) => [r.lane, r.mode])).toEqual(ROWS);
    for (const r of rps) {
      const label = `${r.lane} ${r.mode}`;
      expect(r.errors, label).toBe(0);
      expect(r.rps.switchyard!.median, label).toBeGreaterThan(0);
      expect(r.cpuUsPerRequest.switchyard!.median, label).toBeGreaterThan(0);
      if (r.lane === "responses-ws→chat") expect([r.rps.raw, r.cpuUsPerRequest.raw], label).toEqual([null, null]);
      else expect(r.cpuUsPerRequest.raw!.median, label).toBeGreaterThan(0);
    }
    // Before the latency section the raw pipe and switchyard got unmeasured requests over every lane
    // (--prewarm; 0.2 s in --smoke), and the JSON says how many.
    expect(result.settings.latencyPrewarmSeconds).toBe(0.2);
    expect(result.settings.latencyPrewarmRequests.raw).toBeGreaterThan(0);
    expect(result.settings.latencyPrewarmRequests.switchyard).toBeGreaterThan(0);
    const latency = result.latency as { lane: string; mode: string; raw: unknown; switchyard: { addedP50Ms: Spread } }[];
    expect(latency.map((r) => [r.lane, r.mode])).toEqual(ROWS);
    for (const r of latency) expect(Number.isFinite(r.switchyard.addedP50Ms.median), `${r.lane} ${r.mode}`).toBe(true);
    // 20,000-event streams reached the client on every lane (a short or failed stream throws in the bench).
    expect((result.streamThroughput as { lane: string }[]).map((r) => r.lane)).toEqual(LANES);

    // The printed throughput table: the WebSocket row right under the HTTP Responses rows, with its
    // own CPU µs per request and "-" for the raw pipe.
    const lines = out.split("\n");
    const start = lines.findIndex((l) => l.startsWith("Requests/s at concurrency 32"));
    const table = lines.slice(start + 1).filter((l) => l.startsWith("| ") && !l.startsWith("| lane"));
    const cells = (l: string) => l.split("|").slice(1, -1).map((c) => c.trim());
    expect(table.slice(0, ROWS.length).map((l) => cells(l).slice(0, 2))).toEqual(ROWS);
    const ws = cells(table[2]);
    expect({ rawRps: ws[3], rawCpu: ws[6] }).toEqual({ rawRps: "-", rawCpu: "-" });
    expect(ws[7]).toMatch(/^[\d,.]+$/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);
