/**
 * The line that says why a command failed reaches the upstream (SPEC S-1: error lines kept; try17 T1,
 * T11): a retry log whose lines hold `127.0.0.1:9:` and a gcc build log with 200 warnings, an error
 * and make's failure line, sent by a Chat client to an `openai` provider with the default settings
 * (savers on). Asserted on the body the fake upstream RECEIVED: the last lines and the error lines
 * are there byte for byte, kept lines are not rewritten (no column lost), and the counts in the
 * elision markers add up to the lines that are gone.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startGateway, type TestGateway } from "../support/gateway.ts";
import { providersAtFake } from "../support/configs.ts";

const YAML = `
${providersAtFake(["openai", "openai"])}
accounts:
  - { id: oai-1, provider: openai, api_key: env:FAKE_KEY }
`;

/** try17 T1's output: 300 retry warnings naming `127.0.0.1:9:`, then the FATAL line. */
const T1 = Array(300).fill("2026-12-05 WARN worker retry connecting to 127.0.0.1:9: connection refused").join("\n") + "\nFATAL: giving up after 300 attempts\n";

/** try17 T11's output: 200 gcc warnings, the error, make's failure line. */
const T11 =
  Array.from({ length: 200 }, (_, k) => `src/engine.c:${k + 10}:5: warning: unused variable 'tmp${k + 10}' [-Wunused-variable]`).join("\n") +
  "\nsrc/engine.c:512:3: error: expected ';' before 'return'\nmake: *** [Makefile:12: engine.o] Error 1\n";

/** The tool message content the upstream received for a Chat request carrying `output` as a tool result. */
async function upstreamToolContent(gw: TestGateway, output: string): Promise<string> {
  gw.fake.reset();
  const res = await fetch(`${gw.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      model: "openai/gpt-5-codex",
      messages: [
        { role: "user", content: "run it" },
        { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "sh", arguments: "{}" } }] },
        { role: "tool", tool_call_id: "c1", content: output },
      ],
    }),
  });
  await res.text();
  expect(res.status).toBe(200);
  return gw.fake.requests[0].body.messages.find((m: any) => m.role === "tool").content;
}

/** Lines of the output that are neither an elision marker nor the closing note. */
const keptLines = (out: string) => out.split("\n").filter((l) => l !== "" && !l.startsWith("… ") && !l.startsWith("[switchyard: "));
/** Sum of the line counts the markers state (`… 297 similar lines elided`, `… 198 warnings elided (198 lines)…`). */
const elidedLines = (out: string) =>
  out
    .split("\n")
    .filter((l) => l.startsWith("… "))
    .reduce((a, l) => a + Number((/^… (\d+) similar lines elided/.exec(l) ?? /\((\d+) lines?\)/.exec(l))![1]), 0);

describe("savers on (default), openai provider: the failing line reaches the upstream", () => {
  let gw: TestGateway;
  beforeAll(async () => {
    gw = await startGateway(YAML);
  });
  afterAll(async () => {
    await gw?.stop();
  });

  test("T1: a retry log naming 127.0.0.1:9: keeps its FATAL line and its lines verbatim; the log rule counts the 297 repeats", async () => {
    const out = await upstreamToolContent(gw, T1);
    expect(out).toContain("\nFATAL: giving up after 300 attempts\n");
    for (const l of keptLines(out)) expect(T1.split("\n")).toContain(l);
    expect(out).toContain("2026-12-05 WARN worker retry connecting to 127.0.0.1:9: connection refused");
    expect(out).toContain("… 297 similar lines elided");
    expect(keptLines(out).length + elidedLines(out)).toBe(301);
    expect(out).toContain("[switchyard: log shortened; elided: 297 similar lines in 1 run]");
    expect(out).not.toContain("search results");
  });

  test("T11: gcc output keeps the error, make's Error 1 line and the columns; the 198 collapsed warnings are counted", async () => {
    const out = await upstreamToolContent(gw, T11);
    expect(out).toContain("\nsrc/engine.c:512:3: error: expected ';' before 'return'\n");
    expect(out).toContain("\nmake: *** [Makefile:12: engine.o] Error 1\n");
    expect(out).toContain("src/engine.c:10:5: warning: unused variable 'tmp10' [-Wunused-variable]");
    for (const l of keptLines(out)) expect(T11.split("\n")).toContain(l);
    expect(keptLines(out).length + elidedLines(out)).toBe(202);
    expect(out).toMatch(/… 198 warnings elided \(198 lines\)/);
    expect(out).toMatch(/\[switchyard: compiler output shortened; elided: 198 warnings/);
    expect(out.length).toBeLessThan(T11.length / 5);
  });
});
