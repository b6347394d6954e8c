/**
 * A Codex namespace's description on providers without namespaces (formats/tool-kinds.ts
 * `flatNamespaces`): every member used to carry it in full before its own, so a 2,100-character
 * description on 40 members was some 87 KB of tools JSON on every request. A description longer than
 * NAMESPACE_DESCRIPTION_REPEAT_MAX (200) is now given in full on the namespace's first member only; the
 * others say which member has it. A short one is still repeated on each member.
 */
import { describe, expect, test } from "bun:test";
import { translateBody } from "../support/translate-body.ts";

const SCHEMA = { type: "object", properties: { q: { type: "string" } } };
const LONG = "This server reaches the company's document store. ".repeat(42).trim(); // 2,099 characters
const members = (n: number) => Array.from({ length: n }, (_, i) => ({ type: "function", name: `tool_${i}`, description: `Tool ${i}.`, parameters: SCHEMA }));
const codex = (description: string, n: number) => ({ model: "gpt-5.5", input: "hi", tools: [{ type: "namespace", name: "mcp__docs__", description, tools: members(n) }] });

describe("a long namespace description is not repeated on every member", () => {
  test("Chat: in full on the first member, a pointer to it on the other 39; the tools JSON stays small", () => {
    expect(LONG.length).toBeGreaterThan(2000);
    // openai-compatible: a third-party Chat server takes a description of any length (OpenAI's own API
    // cuts one over 1024 characters: the next test)
    const built = translateBody("openai-responses", codex(LONG, 40), "openai-chat", "openai-compatible");
    const tools = (built.body as any).tools as Array<{ function: { name: string; description: string } }>;
    expect(tools).toHaveLength(40);
    expect(tools[0]!.function).toMatchObject({ name: "mcp__docs__tool_0", description: `${LONG}\n\nTool 0.` });
    for (let i = 1; i < 40; i++) {
      expect(tools[i]!.function.description).toBe(`(Part of namespace mcp__docs__: see mcp__docs__tool_0 for its description.)\n\nTool ${i}.`);
    }
    expect(JSON.stringify(tools).length).toBeLessThan(12_000); // 11,325 now; 90,261 with the description on each
    // The same request builds the same text (prompt caches).
    expect(JSON.stringify((translateBody("openai-responses", codex(LONG, 40), "openai-chat", "openai-compatible").body as any).tools)).toBe(JSON.stringify(tools));
  });

  test("Chat on OpenAI's own API: the first member's description is split at OpenAI's 1024 characters (the rest in the system message), the others still point to it", () => {
    const built = translateBody("openai-responses", codex(LONG, 3), "openai-chat", "openai");
    const tools = (built.body as any).tools as Array<{ function: { name: string; description: string } }>;
    expect(tools[0]!.function.description.length).toBeLessThanOrEqual(1024);
    expect(tools[0]!.function.description.startsWith(LONG.slice(0, 500))).toBe(true);
    expect(tools[0]!.function.description.endsWith(' (continued in the system message under "Tool mcp__docs__tool_0")')).toBe(true);
    const head = tools[0]!.function.description.slice(0, -' (continued in the system message under "Tool mcp__docs__tool_0")'.length);
    expect((built.body as any).messages[0]).toEqual({ role: "system", content: `## Tool mcp__docs__tool_0 (description continued)\n\n${`${LONG}\n\nTool 0.`.slice(head.length).trimStart()}` });
    expect(tools[1]!.function.description).toBe("(Part of namespace mcp__docs__: see mcp__docs__tool_0 for its description.)\n\nTool 1.");
  });

  test("Anthropic: the same on its tools", () => {
    const built = translateBody("openai-responses", codex(LONG, 3), "anthropic-messages", "anthropic");
    expect(((built.body as any).tools as Array<{ name: string; description: string }>).map((t) => [t.name, t.description])).toEqual([
      ["mcp__docs__tool_0", `${LONG}\n\nTool 0.`],
      ["mcp__docs__tool_1", "(Part of namespace mcp__docs__: see mcp__docs__tool_0 for its description.)\n\nTool 1."],
      ["mcp__docs__tool_2", "(Part of namespace mcp__docs__: see mcp__docs__tool_0 for its description.)\n\nTool 2."],
    ]);
  });

  test("a short description is still on each member", () => {
    const built = translateBody("openai-responses", codex("Docs server", 3), "openai-chat", "openai");
    expect(((built.body as any).tools as Array<{ function: { description: string } }>).map((t) => t.function.description)).toEqual([
      "Docs server\n\nTool 0.",
      "Docs server\n\nTool 1.",
      "Docs server\n\nTool 2.",
    ]);
  });
});
