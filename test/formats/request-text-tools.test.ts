/**
 * The tools memo deciding a hit by the request's bytes (formats/write-body-json.ts `RequestText`,
 * docs/performance.md item 164): a Codex turn's tools, as the Responses echo writes them and as Codex's
 * own upstream gets them, are found by the place of `"tools":` + the remembered text in the body as it
 * arrived, without the member-by-member compare; and every body where those bytes do not prove it (the
 * remembered text elsewhere than as the top-level `tools`, a later duplicate `tools`, another layout,
 * a list that is not the request's) still gets `JSON.stringify`'s text: a miss, never a wrong hit.
 */
import { describe, expect, test } from "bun:test";
import { openaiResponses } from "../../formats/openai-responses/index.ts";
import { echoMembers } from "../../formats/openai-responses/echo-memo.ts";
import { responseEcho } from "../../formats/openai-responses/response.ts";
import { bodyJson, mirrors, RequestText, toolsJson } from "../../formats/write-body-json.ts";
import { clientRequest } from "../support/fixtures.ts";

type Json = Record<string, any>;

const encode = (s: string) => new TextEncoder().encode(s);
/** A body as a client sends it (compact JSON), and what the guard makes of it. */
function arrived(text: string): { body: Json; text: RequestText } {
  const bytes = encode(text);
  const body = JSON.parse(new TextDecoder().decode(bytes)) as Json;
  return { body, text: new RequestText(body, bytes) };
}

describe("a request's tools found in the memo by its bytes", () => {
  test("Codex's recorded turns: the echo and Codex's own upstream body are JSON.stringify's text, the tools found by their bytes", async () => {
    for (const file of ["codex-default.json", "codex-tool-use-1.json", "codex-tool-use-2.json"]) {
      for (let turn = 0; turn < 3; turn++) {
        const { body, text } = arrived(JSON.stringify(await clientRequest(file)));
        const echo = responseEcho(openaiResponses.parseRequest!(body));
        expect(echoMembers(echo, text)).toBe(JSON.stringify(echo).slice(1, -1) + ",");
        // The echo's tool shells around the request's own schemas mirror the request's list...
        expect(mirrors(echo.tools, body.tools)).toBe(true);
        // ...and once remembered, the bytes decide (the same text as the compare would give).
        expect(text.holdsTools({ json: toolsJson(echo.tools) }, echo.tools)).toBe(true);
        const tidied = openaiResponses.tidyRequest!(body, { model: "m", kind: "codex", family: "openai", stream: true, promptCacheKey: "k" }).body;
        expect(bodyJson(tidied, text)).toBe(JSON.stringify(tidied));
      }
    }
  });

  /** A tool list long enough to be remembered, and another of the same shape (same names and lengths). */
  const desc = "d".repeat(5000);
  const listA = [{ type: "function", name: "a", description: desc, parameters: { type: "object", properties: { x: { type: "string" } } } }];
  const listB = [{ type: "function", name: "a", description: desc, parameters: { type: "object", properties: { x: { type: "number" } } } }];
  const A = JSON.stringify(listA);
  const B = JSON.stringify(listB);

  test("the remembered text elsewhere than as the top-level tools is a miss", () => {
    toolsJson(JSON.parse(A)); // remembered
    const cases = [
      // After the top-level tools, in a nested member.
      `{"model":"m","tools":${B},"metadata":{"tools":${A}}}`,
      // Before it.
      `{"metadata":{"tools":${A}},"model":"m","tools":${B}}`,
      // Inside a string (escaped), right where the top-level tools would be.
      `{"model":"m","tools":${B},"note":${JSON.stringify(`"tools":${A}`)}}`,
      // Two top-level tools: JSON.parse keeps the last.
      `{"tools":${A},"model":"m","tools":${B}}`,
      `{"model":"m","tools":${A},"tools":${B}}`,
      // A key ending in `tools` ("x\"tools").
      `{"tools":${B},"x\\"tools":${A}}`,
    ];
    for (const c of cases) {
      const { body, text } = arrived(c);
      expect(JSON.stringify(body.tools)).toBe(B);
      // The request's own list, and a copy of it (what an echo builds).
      expect(toolsJson(body.tools, text)).toBe(B);
      expect(toolsJson(structuredClone(body.tools), text)).toBe(B);
      expect(bodyJson(body, text)).toBe(JSON.stringify(body));
      toolsJson(JSON.parse(A)); // A remembered again for the next case
    }
  });

  test("a later duplicate tools that is the remembered one is found; other layouts are compared as before", () => {
    toolsJson(JSON.parse(A));
    const last = arrived(`{"model":"m","tools":${B},"tools":${A}}`);
    expect(last.text.holdsTools({ json: A }, last.body.tools)).toBe(true);
    expect(toolsJson(last.body.tools, last.text)).toBe(A);
    for (const c of [
      // Whitespace, a trailing newline, an escaped character in a member name: not looked for, compared.
      JSON.stringify({ model: "m", tools: listA }, null, 2),
      `{"model":"m","tools":${A}}\n`,
      `{"model":"m","tools":${A},"t\\u006fol_choice":"auto"}`,
    ]) {
      const { body, text } = arrived(c);
      expect(text.holdsTools({ json: A }, body.tools)).toBe(false);
      expect(toolsJson(body.tools, text)).toBe(A);
    }
  });

  test("a list that is not the request's own is never decided by the bytes", () => {
    toolsJson(JSON.parse(A));
    const { body, text } = arrived(`{"model":"m","tools":${A},"tool_choice":"auto"}`);
    expect(text.holdsTools({ json: A }, body.tools)).toBe(true);
    // Another list (B: the same names and lengths, a schema type differs), and the request's own list
    // changed after it was parsed: both written as JSON.stringify writes them now.
    expect(text.holdsTools({ json: A }, JSON.parse(B))).toBe(false);
    expect(toolsJson(JSON.parse(B), text)).toBe(B);
    const copy = structuredClone(body.tools);
    copy[0].parameters.properties.x.type = "number";
    expect(toolsJson(copy, text)).toBe(B);
    // Members in another order than the request's, or a member more.
    const reordered = [{ name: "a", type: "function", description: desc, parameters: listA[0]!.parameters }];
    expect(mirrors(reordered, body.tools)).toBe(false);
    expect(toolsJson(reordered, text)).toBe(JSON.stringify(reordered));
    const more = [{ ...body.tools[0], strict: false }];
    expect(toolsJson(more, text)).toBe(JSON.stringify(more));
  });
});
